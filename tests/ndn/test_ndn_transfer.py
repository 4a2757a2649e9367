"""Transfers through the real NDNd: ndnsci serve/fetch, and interop with ndnd put/cat."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ndnd_put, once_published, run_cli

from ndnsci.errors import FetchError, IntegrityError, NotFoundError
from ndnsci.ndn import keys
from ndnsci.ndn.consumer import list_directory
from ndnsci.sdk import fetch as _fetch
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.transports import FetchOptions


def write(path: Path, size: int) -> bytes:
    data = os.urandom(size)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("size", [0, 1, 8000, 8001, 3 * 8000, 1_000_003])
def test_fetch_from_serve_is_identical_and_verified(serve, tmp_path, size):
    data = write(serve.root / "f.bin", size)
    serve.start()
    result = fetch_file(f"{serve.prefix}/f.bin", str(tmp_path))
    assert (tmp_path / "f.bin").read_bytes() == data
    assert result.sha256 == hashlib.sha256(data).hexdigest()
    assert result.checksum == "verified"
    assert result.signer == f"ed25519:{keys.load().key_id}"
    assert not (tmp_path / "f.bin.part").exists()


def test_the_consumer_says_what_is_settled_so_the_engine_hashes_it_early(
    serve, tmp_path, monkeypatch
):
    data = write(serve.root / "f.bin", (10 << 20) + 123)
    serve.start()
    told: list[int] = []
    settled = _fetch._DiskHash.settled

    def spy(self: _fetch._DiskHash, offset: int) -> None:
        told.append(offset)
        settled(self, offset)

    monkeypatch.setattr(_fetch._DiskHash, "settled", spy)
    result = fetch_file(f"{serve.prefix}/f.bin", str(tmp_path))
    assert (result.checksum, result.sha256) == ("verified", hashlib.sha256(data).hexdigest())
    # offsets of whole segments from the start, growing, the last one the file's end
    assert told == sorted(told) and told[-1] == len(data)
    assert all(offset % 8000 == 0 for offset in told[:-1]) and len(told) > 1


@pytest.mark.parametrize("cc", ["fixed", "aimd", "cubic"])
def test_every_window_control_completes(serve, tmp_path, cc):
    data = write(serve.root / "f.bin", 400_000)
    serve.start()
    fetch_file(f"{serve.prefix}/f.bin", str(tmp_path), options=FetchOptions(cc=cc, window=8))
    assert (tmp_path / "f.bin").read_bytes() == data


def test_nested_names_and_trust_pinning(serve, tmp_path):
    data = write(serve.root / "CMIP5" / "output1" / "tas.nc", 20_000)
    serve.start()
    key_id = keys.load().key_id
    fetch_file(
        f"{serve.prefix}/CMIP5/output1/tas.nc",
        str(tmp_path),
        options=FetchOptions(trust_key=key_id),
    )
    assert (tmp_path / "tas.nc").read_bytes() == data
    with pytest.raises(IntegrityError, match="not the trusted"):
        fetch_file(
            f"{serve.prefix}/CMIP5/output1/tas.nc",
            str(tmp_path / "x"),
            options=FetchOptions(trust_key="00" * 8),
        )


def test_directory_listing(serve):
    write(serve.root / "d" / "a.nc", 10)
    write(serve.root / "d" / "sub" / "b.nc", 10)
    (serve.root / "d" / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(serve.root / "d" / "fifo")  # neither file nor directory: not listed
    serve.start()
    assert list_directory(f"{serve.prefix}/d") == [("a.nc", False), ("sub", True)]
    with pytest.raises(FetchError, match="directory"):
        fetch_file(f"{serve.prefix}/d", "/nonexistent")


def test_ndnd_cat_reads_from_serve(serve, ndnd_binary):
    data = write(serve.root / "f.bin", 300_001)
    serve.start()
    proc = subprocess.run(
        [str(ndnd_binary), "cat", f"{serve.prefix}/f.bin"],
        check=False,
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == data


def test_fetch_reads_from_ndnd_put(fw, ndnd_binary, tmp_path):
    data = os.urandom(250_000)
    prefix = f"/test/put{os.getpid()}/obj"
    with ndnd_put(ndnd_binary, prefix, data):
        result = once_published(lambda: fetch_file(prefix, str(tmp_path)))
    assert (tmp_path / "obj").read_bytes() == data
    assert result.checksum == "unavailable"  # ndnd put publishes no file checksum
    assert result.signer == "digest"


def test_missing_file_fails_fast(serve, tmp_path):
    write(serve.root / "f.bin", 10)
    serve.start()
    out = tmp_path / "out"
    out.mkdir()
    started = time.monotonic()
    with pytest.raises(NotFoundError, match="not found"):
        fetch_file(f"{serve.prefix}/nope.bin", str(out))
    assert time.monotonic() - started < 1.0
    assert not list(out.iterdir())


def test_unserved_prefix_fails_with_a_clear_error(fw, tmp_path):
    started = time.monotonic()
    with pytest.raises(NotFoundError, match="no producer answered"):
        fetch_file("/nobody/serves/this", str(tmp_path))
    assert time.monotonic() - started < 5.0


def test_cli_fetch_exit_codes(serve, tmp_path):
    data = write(serve.root / "f.bin", 50_000)
    serve.start()
    ok = run_cli("fetch", f"{serve.prefix}/f.bin", "-o", str(tmp_path))
    assert ok.returncode == 0, ok.stderr
    assert "sha256 verified" in ok.stdout and (tmp_path / "f.bin").read_bytes() == data
    bad = run_cli("fetch", f"{serve.prefix}/missing", "-o", str(tmp_path))
    assert bad.returncode == 1 and "not found" in bad.stderr


PYNDN_FETCH = """
import asyncio, sys
from ndn.app import NDNApp
from ndn.security import KeychainDigest
from ndn.encoding import Name
from ndn.app_support.segment_fetcher import segment_fetcher
app = NDNApp(keychain=KeychainDigest())
async def accept(*_a, **_k):
    return True
async def main():
    try:
        _, _, content = await app.express_interest(
            sys.argv[1] + "/32=metadata", can_be_prefix=True, must_be_fresh=True,
            lifetime=2000, validator=accept)
        versioned = Name.from_bytes(bytes(content[: 2 + content[1]]))
        sys.stdout.buffer.write(b"".join([bytes(s) async for s in segment_fetcher(app, versioned)]))
    finally:
        app.shutdown()
app.run_forever(after_start=main())
"""


def test_python_ndn_segment_fetcher_reads_from_serve(serve):
    data = write(serve.root / "f.bin", 30_001)
    serve.start()
    proc = subprocess.run(
        [sys.executable, "-c", PYNDN_FETCH, f"{serve.prefix}/f.bin"],
        check=False,
        capture_output=True,
        timeout=60,
    )
    assert proc.stdout == data, proc.stderr.decode()


def test_cli_lists_a_directory(serve):
    write(serve.root / "d" / "a.nc", 5)
    (serve.root / "d" / "sub").mkdir()
    serve.start()
    out = run_cli("fetch", "--ls", f"{serve.prefix}/d")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [f"{serve.prefix}/d/a.nc", f"{serve.prefix}/d/sub/"]
