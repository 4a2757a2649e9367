"""The NDN-DPDK plane for real: forwarder and fetcher up, linked to NDNd, serving and fetching.

Interop both ways across the NDNd <-> NDN-DPDK link (a veth pair, an AF_PACKET port and UDP):
NDN-DPDK's fetcher <- ``ndnsci serve`` (the Python producer on NDNd), and ``ndnsci fetch`` /
``ndnd cat`` <- NDN-DPDK's file server; byte-identical files every time.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from native_support import PlaneFixture
from support import Forwarder, Serve

from ndnsci.errors import NativePlaneError, NotFoundError
from ndnsci.native import gql
from ndnsci.native.fetcher import NdnDpdkTransport, numeric_uri
from ndnsci.native.plane import Plane
from ndnsci.ndn import name as ndnname
from ndnsci.sdk.transports import FetchOptions, Job, Received

_counter = iter(range(1_000_000))


def unique(prefix: str) -> str:
    return f"{prefix}{os.getpid()}x{next(_counter)}"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def random_file(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(os.urandom(n))
            left -= n
    return path


def receive(
    transport: NdnDpdkTransport,
    name: str,
    part: Path,
    resume: bool = False,
    progress: Callable[[int, int], None] = lambda done, total: None,
    **options: object,
) -> Received:
    part.touch()
    job = Job(
        name=name,
        part=str(part),
        state=str(part) + ".state",
        resume=resume,
        options=FetchOptions(**options),  # type: ignore[arg-type]
        progress=progress,
        stop=threading.Event(),
    )
    return transport.receive(job)


def native_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndnsci", "native", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- the plane ------------------------------------------------------------------------------


def test_status_shows_the_instances_lcores_faces_and_routes(plane: PlaneFixture) -> None:
    done = native_cli("status", "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["up"] is True
    assert set(status["instances"]) == {"forwarder", "fetcher"}
    assert all(i["alive"] for i in status["instances"].values())
    roles = sorted(w["role"] for w in status["forwarder"]["workers"] if w["role"])
    assert roles == ["FWD", "RX", "TX"]  # the small layout: one thread per role
    schemes = sorted(f["locator"]["scheme"] for f in status["forwarder"]["faces"])
    assert schemes == ["memif", "udpe"]  # the fetcher's memif, the UDP face to NDNd
    (default,) = status["forwarder"]["fib"]
    udpe = next(f for f in status["forwarder"]["faces"] if f["locator"]["scheme"] == "udpe")
    assert default["name"] == "/" and [n["id"] for n in default["nexthops"]] == [udpe["id"]]
    text = native_cli("status")
    assert text.returncode == 0 and "forwarder lcores: FWD 1, RX 1, TX 1" in text.stdout


def test_a_second_up_is_refused(plane: PlaneFixture) -> None:
    with pytest.raises(NativePlaneError, match="already up"):
        Plane(plane.plane.run).up(None, plane.layout)
    assert Plane(plane.plane.run).is_up()


# --- interop across the NDNd link ------------------------------------------------------------


def test_ndndpdk_fetcher_fetches_from_the_python_producer(
    plane: PlaneFixture, fw: Forwarder, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    original = random_file(root / "a" / "file.bin", 6_000_123)
    prefix = unique("/test/dpdk-from-py")
    server = Serve(root, prefix, ["--unsigned"]).start()
    try:
        got = receive(NdnDpdkTransport(plane.plane), f"{prefix}/a/file.bin", tmp_path / "out.part")
    finally:
        server.stop()
    assert sha256(tmp_path / "out.part") == sha256(original)
    assert got.size == original.stat().st_size
    assert got.published_sha256 == sha256(original)  # the Python producer publishes it
    assert got.segments == -(-got.size // 8000)


class FileServer:
    """``ndnsci serve --engine ndn-dpdk`` as a process (stopping it stops the file server)."""

    def __init__(self, root: Path, prefix: str, extra: list[str] | None = None) -> None:
        self.serve = Serve(root, prefix, ["--engine", "ndn-dpdk", *(extra or [])])

    def __enter__(self) -> FileServer:
        self.serve.start(timeout=120)
        return self

    def __exit__(self, *exc: object) -> None:
        self.serve.stop()


def test_the_file_server_serves_ndnsci_fetch_ndnd_cat_and_the_ndndpdk_fetcher(
    plane: PlaneFixture, fw: Forwarder, ndnd_binary: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    original = random_file(root / "sub" / "data.bin", 12_345_678)
    prefix = unique("/test/fs")
    name = f"{prefix}/sub/data.bin"
    with FileServer(root, prefix):
        # ndnsci's own consumer, through NDNd and the veth link
        out = tmp_path / "py"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "ndnsci",
                "fetch",
                name,
                "-o",
                str(out),
                "--quiet",
                "--engine",
                "python",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert sha256(out / "data.bin") == sha256(original)
        # ndnd cat, through the same link
        cat = subprocess.run(
            [str(ndnd_binary), "cat", name], capture_output=True, timeout=300, check=False
        )
        assert cat.returncode == 0, cat.stderr.decode()
        assert hashlib.sha256(cat.stdout).hexdigest() == sha256(original)
        # NDN-DPDK's fetcher, NDN-DPDK to NDN-DPDK through the forwarder (memif both sides)
        got = receive(NdnDpdkTransport(plane.plane), name, tmp_path / "dpdk.part")
        assert sha256(tmp_path / "dpdk.part") == sha256(original)
        assert (got.published_sha256, got.signer) == (None, "none")  # NDN-DPDK signs nothing
        # the same through the fetch engine: `ndnsci fetch --engine ndn-dpdk|auto`
        for engine in ("ndn-dpdk", "auto"):
            out = tmp_path / engine
            done = subprocess.run(
                [sys.executable, "-m", "ndnsci", "fetch", name, "-o", str(out), "--json",
                 "--engine", engine],
                capture_output=True, text=True, timeout=300, check=False,
                env={**os.environ, "NDNSCI_NATIVE_RUN": str(plane.plane.run)},
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            (result,) = map(json.loads, done.stdout.splitlines())
            assert result["status"] == "done" and result["signer"] == "none"
            assert result["engine"] == "ndn-dpdk"  # auto: the file server serves the name
            assert sha256(out / "data.bin") == sha256(original)


def test_a_manifest_goes_through_the_native_fetcher_several_files_at_once(
    plane: PlaneFixture, fw: Forwarder, tmp_path: Path
) -> None:
    """`ndnsci fetch --manifest M --engine ndn-dpdk --parallel 3`: every file checked against
    the manifest's SHA-256, one with a wrong checksum reported as such, the rest kept."""
    root = tmp_path / "root"
    prefix = unique("/test/fs-bulk")
    files = {f"d/f{i}.bin": random_file(root / "d" / f"f{i}.bin", 3_000_000 + i) for i in range(4)}
    lines = [
        {"name": f"{prefix}/{rel}", "size": path.stat().st_size, "sha256": sha256(path)}
        for rel, path in files.items()
    ]
    lines[3]["sha256"] = "0" * 64  # what the catalog says is not what is served
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    with FileServer(root, prefix):
        done = subprocess.run(
            [sys.executable, "-m", "ndnsci", "fetch", "--manifest", str(manifest), "-o", str(out),
             "--json", "--engine", "ndn-dpdk", "--parallel", "3"],
            capture_output=True, text=True, timeout=600, check=False,
            env={**os.environ, "NDNSCI_NATIVE_RUN": str(plane.plane.run)},
        )  # fmt: skip
    assert done.returncode != 0, done.stdout
    results = {r["name"]: r for r in map(json.loads, done.stdout.splitlines())}
    for line, (rel, path) in zip(lines[:3], files.items(), strict=False):
        assert results[line["name"]]["status"] == "done", results[line["name"]]
        assert results[line["name"]]["checksum"] == "verified"
        assert sha256(out / results[line["name"]]["path"]) == sha256(path), rel
    bad = results[lines[3]["name"]]
    assert bad["status"] == "failed"
    assert "SHA-256" in bad["error"] or "sha256" in bad["error"].lower(), bad


def udp_sockets(pid: int) -> list[tuple[str, int, int]]:
    """Each UDP socket of process ``pid``: (local address, receive buffer, packets dropped),
    as ``ss`` reports them (the kernel reports twice the buffer that was set)."""
    out = subprocess.run(["ss", "-H", "-uamnp"], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    found = []
    for line, memory in itertools.pairwise(lines):
        if f"pid={pid}," in line and "skmem:(" in memory:
            skmem = dict(re.findall(r"([a-z]+)(\d+)", memory.split("skmem:(")[1]))
            found.append((line.split()[3], int(skmem["rb"]), int(skmem["d"])))
    return found


def test_ndnd_cat_of_64_mib_crosses_the_link_without_a_udp_drop(
    plane: PlaneFixture, fw: Forwarder, ndnd_binary: Path, tmp_path: Path
) -> None:
    """NDN-DPDK answers a window of Interests at once, six fragments per Data: at the kernel's
    default buffer NDNd's socket dropped fragments and `ndnd cat` gave up ("retries
    exhausted"). The plane gives NDNd's UDP sockets 16 MiB when it links them."""
    from ndnsci.ndn import forwarder

    pid = int(forwarder.Paths(fw.sock).pidfile.read_text())
    sockets = udp_sockets(pid)
    assert sockets, f"NDNd (pid {pid}) has no UDP socket"
    assert all(buffer >= 16 << 20 for _, buffer, _ in sockets), sockets
    dropped = sum(drops for _, _, drops in sockets)
    root = tmp_path / "root"
    original = random_file(root / "big.bin", 64 << 20)
    prefix = unique("/test/fs-big")
    with FileServer(root, prefix):
        for _ in range(2):
            cat = subprocess.run(
                [str(ndnd_binary), "cat", f"{prefix}/big.bin"],
                capture_output=True, timeout=300, check=False,
            )  # fmt: skip
            assert cat.returncode == 0, cat.stderr.decode()[-2000:]
            assert hashlib.sha256(cat.stdout).hexdigest() == sha256(original)
    assert sum(drops for _, _, drops in udp_sockets(pid)) == dropped


def test_a_name_outside_every_mount_is_not_found_quickly(
    plane: PlaneFixture, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    random_file(root / "x.bin", 1000)
    prefix = unique("/test/fsnf")
    with FileServer(root, prefix):
        # in the mount but no such file: the file server answers with a Nack
        with pytest.raises(NotFoundError):
            receive(NdnDpdkTransport(plane.plane), f"{prefix}/missing.bin", tmp_path / "a.part")
        # outside every mount and every route
        with pytest.raises(NotFoundError, match="no producer answered"):
            receive(NdnDpdkTransport(plane.plane), unique("/nowhere/x"), tmp_path / "b.part")


def test_typed_components_are_written_as_ndndpdk_reads_them() -> None:
    # NDN-DPDK reads "v=1" as a generic component: versions go as 54=..., segments as 50=...
    components = ndnname.from_uri("/a/b%20c/v=1795432/seg=3")
    assert numeric_uri(components) == "/a/b%20c/54=%00%1Beh/50=%03"


def test_graphql_errors_carry_ndndpdk_s_message(plane: PlaneFixture) -> None:
    with gql.Client(plane.layout.forwarder.url) as fw, pytest.raises(gql.GraphQLError) as caught:
        fw.create_face({"scheme": "udpe", "local": "not a mac"})
    assert str(caught.value).startswith(f"NDN-DPDK at {plane.layout.forwarder.url}: ")


def test_engine_auto_picks_the_native_fetcher_only_while_the_plane_is_up(
    plane: PlaneFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ndnsci.native.auto import AutoTransport

    root = tmp_path / "root"
    random_file(root / "x.bin", 1000)
    prefix = unique("/test/auto")
    monkeypatch.setenv("NDNSCI_NATIVE_RUN", str(plane.plane.run))
    with FileServer(root, prefix):
        assert AutoTransport().engine_for(f"{prefix}/x.bin") == "ndn-dpdk"
        monkeypatch.setenv("NDNSCI_NATIVE_RUN", str(tmp_path / "no-plane"))
        assert AutoTransport().engine_for(f"{prefix}/x.bin") == "python"
