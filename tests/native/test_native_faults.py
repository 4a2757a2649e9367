"""Faults of the native plane: a file server killed mid-transfer, a forwarder that restarts,
hugepage memory that is not enough. Every case ends with a clear error or a verified file, and
the plane (processes, hugepages, veth) is cleaned up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from native_support import PlaneFixture, hugepages_total
from support import CLI, Forwarder, wait_for
from test_native_plane import FileServer, random_file, receive, sha256, unique

from ndnsci.base.processes import die_with_parent
from ndnsci.errors import FetchTimeout, NativePlaneError, TransportError
from ndnsci.native import fetcher
from ndnsci.native.fetcher import NdnDpdkTransport
from ndnsci.native.plane import Plane, _alive, tail


def logs(server: FileServer, plane: PlaneFixture) -> str:
    """What ndnsci serve, the file server and the forwarder said (for a failure's message)."""
    said = "".join(server.serve.log[-40:])
    state = plane.plane.load()
    forwarder = state.pids.get("forwarder") if state else None
    return (
        f"\nndnsci serve:\n{said}\nfile server:\n{tail(plane.plane.run / 'fileserver.log', 30)}"
        f"\nforwarder (pid {forwarder}, {'alive' if _alive(forwarder) else 'NOT RUNNING'}):\n"
        f"{tail(plane.plane.run / 'forwarder.log', 30)}"
    )


class Background:
    """A receive() in a thread, with its progress and outcome."""

    def __init__(self, transport: NdnDpdkTransport, name: str, part: Path, **options: object):
        self.done = 0
        self.error: BaseException | None = None
        self.result: object = None
        self.thread = threading.Thread(
            target=self._run, args=(transport, name, part, options), daemon=True
        )
        self.thread.start()

    def _run(self, transport: NdnDpdkTransport, name: str, part: Path, options: dict) -> None:
        def progress(done: int, total: int) -> None:
            self.done = done

        try:
            self.result = receive(transport, name, part, progress=progress, **options)
        except BaseException as exc:
            self.error = exc

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the fetch did not end"


def test_file_server_killed_mid_transfer_is_started_again_and_the_fetch_completes(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    original = random_file(root / "big.bin", 200_000_000)
    prefix = unique("/test/kill")
    part = tmp_path / "big.part"
    with FileServer(root, prefix) as server:
        first_pid = own_plane.plane.load().pids["fileserver"]  # type: ignore[union-attr]
        fetch = Background(NdnDpdkTransport(own_plane.plane), f"{prefix}/big.bin", part)
        wait_for(lambda: fetch.done > 8_000_000, 120, "8 MB to arrive")
        os.kill(first_pid, signal.SIGKILL)
        at_kill = fetch.done
        # ndnsci serve notices and starts the file server again; the fetcher retransmits
        wait_for(
            lambda: own_plane.plane.load().pids.get("fileserver") not in (None, first_pid),  # type: ignore[union-attr]
            60,
            "ndnsci serve to start the file server again",
            detail=lambda: logs(server, own_plane),
        )
        fetch.join(600)
        assert fetch.error is None, fetch.error
    assert at_kill < 150_000_000, "the kill came too late to matter"
    assert sha256(part) == sha256(original)


def test_the_forwarder_outlives_a_memif_peer_that_dies_under_a_burst(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    """The forwarder's polling thread is held (gdb, non-stop: every other thread runs on) in
    ``eth_memif_rx`` past its CONNECTED check, where it reads the peer's ring; the memif peers
    (file server and fetcher) are killed and the forwarder's control thread disconnects them;
    then the held burst goes on. DPDK's memif driver had unmapped the ring by then, and the
    forwarder died of SIGSEGV (CI saw it as a file server that was never started again and an
    NDNc fetch whose memif vanished). With deploy/ndn-dpdk/patches/dpdk-memif-departed-peer.patch
    the burst reads a ring that is still mapped and the forwarder lives on."""
    root = tmp_path / "root"
    random_file(root / "big.bin", 300_000_000)
    small = sha256(random_file(root / "small.bin", 3_000_000))
    prefix = unique("/test/burst")
    with FileServer(root, prefix) as server:
        state = own_plane.plane.load()
        assert state is not None
        forwarder = state.pids["forwarder"]
        peers = [state.pids["fileserver"], state.pids["fetcher"]]
        fetch = Background(NdnDpdkTransport(own_plane.plane), f"{prefix}/big.bin", tmp_path / "p")
        wait_for(
            lambda: fetch.done > 8_000_000,
            120,
            "8 MB to arrive",
            detail=lambda: logs(server, own_plane),
        )
        said = tmp_path / "gdb.out"
        with said.open("w") as out:
            gdb = subprocess.Popen(
                ["gdb", "-q", "-nx", "-x", str(Path(__file__).with_name("gdb_hold_memif_rx.py"))],
                stdin=subprocess.PIPE,  # left open: gdb waits on it and runs its event loop
                stdout=out,
                stderr=subprocess.STDOUT,
                env={
                    **os.environ,
                    "NDNSCI_GDB_PID": str(forwarder),
                    "NDNSCI_GDB_PEERS": ",".join(map(str, peers)),
                    "NDNSCI_GDB_SECONDS": "15",
                },
            )
            try:
                gdb.wait(90)
            finally:
                gdb.kill()
        output = said.read_text(errors="replace")
        report = f"\ngdb:\n{output[-4000:]}" + logs(server, own_plane)
        assert "HELD thread" in output and "eth_memif_rx" in output, "no burst was held" + report
        assert "RESUMED" in output, report
        assert "SIGSEGV" not in output, "the held burst faulted" + report
        time.sleep(1)
        assert _alive(forwarder), "the forwarder died" + report
        assert own_plane.plane.is_up(), report
        fetch.join(120)  # its fetcher was killed: it ends, one way or the other
        # and it still forwards: ndnsci serve starts the file server again, and a fetch through
        # NDNd and the veth link to the forwarder gets a verified file
        wait_for(
            lambda: own_plane.plane.load().pids.get("fileserver") not in (None, peers[0]),  # type: ignore[union-attr]
            60,
            "ndnsci serve to start the file server again",
            detail=lambda: logs(server, own_plane),
        )
        out = tmp_path / "out"
        done = subprocess.run(
            [sys.executable, "-m", "ndnsci", "fetch", f"{prefix}/small.bin", "-o", str(out), "-q"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr + logs(server, own_plane)
        assert sha256(out / "small.bin") == small


def test_two_serves_share_the_file_server_and_outlive_each_other(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    """Two ``ndnsci serve --engine ndn-dpdk`` on one plane: the file server serves both trees;
    when one stops or is killed, the other's tree is served again (the file server, which died
    with the serve that started it last, is started anew by the one left)."""
    trees = {}
    for key in ("a", "b", "c"):
        root = tmp_path / key
        trees[key] = (
            root,
            unique(f"/test/share{key}"),
            sha256(random_file(root / "f.bin", 3_000_000)),
        )
    transport = NdnDpdkTransport(own_plane.plane)

    def served(key: str) -> bool:
        _, prefix, digest = trees[key]
        part = tmp_path / f"{key}-{time.monotonic_ns()}.part"
        receive(transport, f"{prefix}/f.bin", part)
        return sha256(part) == digest

    def serving(*keys: str) -> bool:
        state = own_plane.plane.load()
        assert state is not None
        wanted = sorted(trees[k][1] for k in keys)
        return own_plane.plane.fileserver_running() and state.fileserver_prefixes == wanted

    with FileServer(trees["a"][0], trees["a"][1]) as first:
        second = FileServer(trees["b"][0], trees["b"][1]).__enter__()
        try:
            wait_for(
                lambda: serving("a", "b"),
                60,
                "both trees on the file server",
                detail=lambda: logs(first, own_plane),
            )
            assert served("a") and served("b")
            # a prefix served from another folder is refused, saying by whom
            clash = subprocess.run(
                [
                    *CLI,
                    "serve",
                    str(trees["c"][0]),
                    "--prefix",
                    trees["a"][1],
                    "--engine",
                    "ndn-dpdk",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert clash.returncode == 2, clash.stderr
            assert "already served" in clash.stderr and str(first.serve.proc.pid) in clash.stderr
            assert clash.stdout == ""
        finally:
            second.__exit__()
        wait_for(
            lambda: serving("a"),
            60,
            "the tree left to be served alone",
            detail=lambda: logs(first, own_plane),
        )
        assert served("a")
        # killed (SIGKILL), a serve leaves its entry behind; the file server it started dies
        third = FileServer(trees["c"][0], trees["c"][1]).__enter__()
        try:
            wait_for(
                lambda: serving("a", "c"),
                60,
                "both trees on the file server",
                detail=lambda: logs(first, own_plane),
            )
            third.serve.kill()
            wait_for(
                lambda: serving("a"),
                60,
                "the file server started again without the dead serve",
                detail=lambda: logs(first, own_plane),
            )
            assert served("a")
            state = own_plane.plane.load()
            assert state is not None
            assert list(state.fileserver_owners) == [str(first.serve.proc.pid)]
        finally:
            third.__exit__()
    wait_for(lambda: not own_plane.plane.fileserver_running(), 30, "the file server to stop")


def test_producer_gone_mid_transfer_times_out_then_resumes_by_range(
    own_plane: PlaneFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fetcher, "RANGE_SEGMENTS", 512)  # 4 MB ranges: the unit of resume
    root = tmp_path / "root"
    original = random_file(root / "big.bin", 40_000_000)
    prefix = unique("/test/gone")
    name = f"{prefix}/big.bin"
    part = tmp_path / "big.part"
    transport = NdnDpdkTransport(own_plane.plane)
    server = FileServer(root, prefix).__enter__()
    try:
        fetch = Background(transport, name, part, stall_seconds=4.0)
        wait_for(lambda: fetch.done > 8_000_000, 120, "8 MB to arrive")
        server.serve.kill()  # ndnsci serve, and with it (PR_SET_PDEATHSIG) its file server
        fetch.join(240)
        assert isinstance(fetch.error, FetchTimeout), fetch.error
        assert "no Data for" in str(fetch.error)
        state = Path(str(part) + ".state")
        assert state.exists(), "the finished ranges are recorded"
    finally:
        server.__exit__()
    wait_for(lambda: not own_plane.plane.fileserver_running(), 30, "the file server to stop")
    with FileServer(root, prefix):
        got = receive(transport, name, part, resume=True)
    assert got.resumed_segments >= 512  # the ranges that had arrived were not fetched again
    assert sha256(part) == sha256(original)
    assert not state.exists()


def test_forwarder_restart(
    own_plane: PlaneFixture, native_run: Path, fw: Forwarder, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    original = random_file(root / "f.bin", 3_000_000)
    prefix = unique("/test/restart")
    with FileServer(root, prefix) as server:
        transport = NdnDpdkTransport(own_plane.plane)
        receive(transport, f"{prefix}/f.bin", tmp_path / "a.part")
        forwarder_pid = own_plane.plane.load().pids["forwarder"]  # type: ignore[union-attr]
        os.kill(forwarder_pid, signal.SIGKILL)
        wait_for(lambda: not _alive(forwarder_pid), 30, "the forwarder to die")
        with pytest.raises(TransportError, match="not up"):
            transport.check(fetcher.FetchOptions())
        # up again: what the dead plane left is cleaned first, then all starts anew
        Plane(native_run).up(fw.sock, own_plane.layout, preexec=die_with_parent)

        def serving() -> bool:  # its routes are made last, once it is activated
            state = own_plane.plane.load()
            return state is not None and state.ndnd_routes == [prefix]

        wait_for(
            serving,
            120,
            "ndnsci serve to start its file server again",
            detail=lambda: f"; ndnsci serve said:\n{''.join(server.serve.log)}",
        )
        got = receive(transport, f"{prefix}/f.bin", tmp_path / "b.part")
    assert sha256(tmp_path / "b.part") == sha256(original)
    assert got.size == original.stat().st_size


def test_too_little_hugepage_memory_is_a_clear_error_and_leaves_nothing(
    native_ready: object, native_run: Path, fw: Forwarder
) -> None:
    small = PlaneFixture(native_run, fw)
    # 24 MB: far less than the forwarder's 16k packet buffers of 9 KB need
    small.layout = replace(small.layout, forwarder=replace(small.layout.forwarder, memory_mb=24))
    with pytest.raises(NativePlaneError) as caught:
        small.up()
    message = str(caught.value)
    assert "activating the forwarder failed" in message
    assert "hugepages: NDN-DPDK could not allocate its memory" in message
    small.down()  # asserts: no process left, hugepages given back, no veth pair
    assert hugepages_total() == small.hugepages_before


def test_a_file_changed_while_served_is_never_mixed_and_fetched_anew(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    # NDN-DPDK's file server names a file by its mtime (the version) and drops Interests for
    # another version once it has seen the change (stat cached 1 s): the fetch of the old
    # version stops, and the next one starts over on the new version, never mixing the two.
    root = tmp_path / "root"
    path = random_file(root / "moving.bin", 400_000_000)
    prefix = unique("/test/changed")
    name = f"{prefix}/moving.bin"
    part = tmp_path / "moving.part"
    transport = NdnDpdkTransport(own_plane.plane)
    with FileServer(root, prefix):
        fetch = Background(transport, name, part, stall_seconds=4.0)
        wait_for(lambda: fetch.done > 8_000_000, 120, "8 MB to arrive")
        with open(path, "r+b") as f:  # rewritten in place, as an appending writer would
            f.write(os.urandom(1_000_000))
        os.utime(path, ns=(time.time_ns(), time.time_ns()))
        fetch.join(240)
        assert isinstance(fetch.error, FetchTimeout), fetch.error
        got = receive(transport, name, part, resume=True)
    assert got.resumed_segments == 0  # the ranges of the old version were not kept
    assert sha256(part) == sha256(path)
