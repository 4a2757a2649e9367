"""The engine's bookkeeping is the same for any transport: a unit test of the engine layer with
an in-memory transport (the real ones are tested end to end in tests/ndn), and the registry."""

from __future__ import annotations

import hashlib
import json
import os
import threading

import pytest
from support import run_cli, wait_for

from ndnsci.errors import FetchTimeout, IntegrityError
from ndnsci.sdk import transports
from ndnsci.sdk.fetch import _DiskHash, download, fetch_file
from ndnsci.sdk.report import Interrupted
from ndnsci.sdk.transports import Cancelled, Job, Received, UnknownTransportError

DATA = bytes(range(256)) * 4000  # 1 MB
SHA = hashlib.sha256(DATA).hexdigest()


class Memory:
    """Writes DATA into the .part; ``script`` says what each call does first."""

    name = "memory"

    def __init__(self) -> None:
        self.script: list[str] = []
        self.jobs: list[Job] = []

    def check(self, options: transports.FetchOptions) -> None:
        pass

    def receive(self, job: Job) -> Received:
        self.jobs.append(job)
        step = self.script.pop(0) if self.script else "ok"
        with open(job.part, "r+b") as f:
            if job.resume:
                f.seek(0, 2)  # continue after what is there
            else:
                f.truncate(0)
            half = len(DATA) // 2
            if f.tell() < half:
                f.write(DATA[f.tell() : half])
            if step == "timeout":
                raise FetchTimeout("no Data for 15 s")
            if step == "stop":
                job.stop.set()
                raise Cancelled
            f.write(DATA[f.tell() :])
            if step == "garbage":
                f.seek(0)
                f.write(b"\xff" * 10)
        job.progress(len(DATA), len(DATA))
        published = "0" * 64 if step == "lie" else SHA
        return Received(size=len(DATA), published_sha256=published, signer="memory")


PLANE = Memory()


def make_memory() -> Memory:
    return PLANE


def register(monkeypatch, name: str, factory: str):
    """Register this module's ``factory`` as transport ``name`` (as a plugin would be)."""
    monkeypatch.setitem(transports.BUILTIN, name, f"{__name__}:{factory}")
    transports.get_transport.cache_clear()


@pytest.fixture
def memory(monkeypatch):
    """The in-memory transport, registered as ``memory``."""
    register(monkeypatch, "memory", "make_memory")
    PLANE.script, PLANE.jobs = [], []
    yield PLANE
    transports.get_transport.cache_clear()


def test_a_transport_only_moves_bytes_the_engine_verifies_renames_and_records(memory, tmp_path):
    outcome = fetch_file("/x/f.bin", tmp_path, transport="memory")
    assert (outcome.status, outcome.checksum, outcome.sha256) == ("done", "verified", SHA)
    assert (tmp_path / "f.bin").read_bytes() == DATA
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ndnsci-fetch.jsonl", "f.bin"]
    journal = json.loads((tmp_path / ".ndnsci-fetch.jsonl").read_text())
    assert (journal["name"], journal["sha256"]) == ("/x/f.bin", SHA)
    job = memory.jobs[0]
    assert (job.part, job.state) == (
        str(tmp_path / "f.bin.part"),
        str(tmp_path / "f.bin.part.state"),
    )


def test_a_timeout_is_retried_resuming_and_a_bad_copy_from_nothing(memory, tmp_path):
    memory.script = ["timeout", "garbage", "ok"]
    outcome = fetch_file("/x/f.bin", tmp_path, transport="memory", retries=2)
    assert (outcome.status, outcome.attempts) == ("done", 3)
    assert [j.resume for j in memory.jobs] == [False, True, False]
    assert (tmp_path / "f.bin").read_bytes() == DATA


def test_bytes_that_differ_from_the_published_digest_are_never_put_in_place(memory, tmp_path):
    memory.script = ["garbage"]
    with pytest.raises(IntegrityError, match="does not match the published"):
        fetch_file("/x/f.bin", tmp_path, transport="memory")
    memory.script = ["lie"]
    with pytest.raises(IntegrityError, match="does not match the published"):
        fetch_file("/x/f.bin", tmp_path, transport="memory")
    assert not (tmp_path / "f.bin").exists()


def test_the_catalog_checksum_is_checked_and_a_complete_file_is_skipped(memory, tmp_path):
    wrong = {"name": "/x/f.bin", "path": "f.bin", "sha256": "1" * 64}
    report = download([wrong], tmp_path, progress=False, transport="memory")
    assert "is not the catalog's" in report.failed[0].error
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the file was removed
    right = {**wrong, "sha256": SHA}
    assert download([right], tmp_path, progress=False, transport="memory").done
    again = download([right], tmp_path, progress=False, transport="memory")
    assert [o.status for o in again.outcomes] == ["skipped"] and len(memory.jobs) == 2


def test_stop_cancels_and_leaves_the_part_for_a_resume(memory, tmp_path):
    memory.script = ["stop"]
    flat = {"layout": "flat", "progress": False, "transport": "memory"}
    with pytest.raises(Interrupted) as info:
        download(["/x/f.bin"], tmp_path, stop=threading.Event(), **flat)
    assert [o.status for o in info.value.report.outcomes] == ["cancelled"]
    assert (tmp_path / "f.bin.part").stat().st_size == len(DATA) // 2
    resumed = download(["/x/f.bin"], tmp_path, **flat)
    assert resumed.ok and memory.jobs[-1].resume
    assert (tmp_path / "f.bin").read_bytes() == DATA


def test_an_unknown_transport_names_the_valid_ones(tmp_path):
    valid = r"valid transports: auto, ndn-dpdk, ndnc, python$"
    with pytest.raises(UnknownTransportError, match=valid):
        download(["/x/f.bin"], tmp_path, transport="carrier-pigeon")
    out = run_cli("fetch", "/x/f.bin", "-o", str(tmp_path), "--transport", "carrier-pigeon")
    assert out.returncode == 2 and "unknown transport 'carrier-pigeon'" in out.stderr
    assert "Traceback" not in out.stderr
    assert transports.get_transport("python").name == "python"


BIG = os.urandom(12 << 20)  # above _DiskHash.FOLLOW_FROM: hashed while it arrives


class Settling:
    """Writes BIG in 1 MiB pieces, telling the engine what is settled (``job.settled``)."""

    name = "settling"

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.hashed_while_writing = 0

    def check(self, options: transports.FetchOptions) -> None:
        pass

    def receive(self, job: Job) -> Received:
        assert job.settled is not None
        step = 1 << 20
        with open(job.part, "r+b") as f:
            f.truncate(0)
            for offset in range(0, len(BIG), step):
                f.write(BIG[offset : offset + step])
                f.flush()
                if self.mode in ("half", "garbage") and offset >= len(BIG) // 2:
                    continue  # the rest is never said settled: hashed after the transfer
                job.settled(offset + step)
            if self.mode == "garbage":  # unsettled bytes that change before the end
                f.seek(len(BIG) - 10)
                f.write(b"\xff" * 10)
        follower = job.settled.__self__  # type: ignore[attr-defined]
        wait_for(lambda: follower.hashed >= len(BIG) // 2, 10, "half the file hashed", every=0.01)
        self.hashed_while_writing = follower.hashed
        return Received(size=len(BIG), published_sha256=BIG_SHA, signer="settling")


BIG_SHA = hashlib.sha256(BIG).hexdigest()
SETTLING = Settling("all")


def make_settling() -> Settling:
    return SETTLING


@pytest.fixture
def settling(monkeypatch):
    """The transport above, registered as ``settling``."""
    register(monkeypatch, "settling", "make_settling")
    yield SETTLING
    transports.get_transport.cache_clear()


@pytest.mark.parametrize("mode", ["all", "half"])
def test_settled_bytes_are_hashed_from_disk_while_the_rest_arrives(settling, tmp_path, mode):
    plane = settling
    plane.mode = mode
    outcome = fetch_file("/x/big.bin", tmp_path, transport="settling")
    assert (outcome.status, outcome.checksum, outcome.sha256) == ("done", "verified", BIG_SHA)
    assert (tmp_path / "big.bin").read_bytes() == BIG
    # the engine's thread read back half the file before receive() returned
    assert plane.hashed_while_writing >= len(BIG) // 2


def test_bytes_written_after_the_settled_ones_are_still_checked(settling, tmp_path):
    settling.mode = "garbage"
    with pytest.raises(IntegrityError, match="does not match the published"):
        fetch_file("/x/big.bin", tmp_path, transport="settling")
    assert not (tmp_path / "big.bin").exists()


def test_the_disk_hash_stops_anywhere_and_finishes_what_is_left(tmp_path):
    path = tmp_path / "f.part"
    path.write_bytes(BIG)
    fd = os.open(path, os.O_RDONLY)
    try:
        disk = _DiskHash(fd, str(path))
        disk.settled(5 << 20)
        disk.close()  # e.g. the transport failed: the thread stops within a chunk
        assert disk.hashed <= 5 << 20
        assert disk.finish(len(BIG)) == BIG_SHA
        with pytest.raises(IntegrityError, match=r"holds 12,582,912 bytes, not the file's 13"):
            _DiskHash(fd, str(path)).finish(13 << 20)
        too_far = _DiskHash(fd, str(path))
        too_far.settled(len(BIG) + (4 << 20))  # a transport that says more than it wrote
        with pytest.raises(IntegrityError, match="holds"):
            too_far.finish(len(BIG) + (4 << 20))
    finally:
        os.close(fd)


class Listing(Memory):
    """A transport that lists directories too (a :class:`transports.Lister`)."""

    name = "listing"

    def list_directory(self, name: str, options: transports.FetchOptions) -> list[tuple[str, bool]]:
        return [(f"{name}:{options.window}", False), ("sub", True)]


def make_listing() -> Listing:
    return Listing()


def test_listings_go_through_the_transport_and_one_that_cannot_list_says_so(memory, monkeypatch):
    register(monkeypatch, "listing", "make_listing")
    options = transports.FetchOptions(window=3)
    listed = transports.list_directory("/a/d", options, "listing")
    assert listed == [("/a/d:3", False), ("sub", True)]
    with pytest.raises(UnknownTransportError, match="'memory' cannot list directories"):
        transports.list_directory("/a/d", transport="memory")
    assert hasattr(transports.get_transport("python"), "list_directory")
