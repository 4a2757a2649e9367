"""The fetch engine under faults, through the real NDNd and ``ndnsci serve``: two fetches of one
file at once, Ctrl-C, a producer that dies, a file rewritten behind the producer's back, a
read-only or full output disk, bytes changed on disk during a transfer."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support import CLI, Serve, in_mount_namespace, run_cli, wait_for

from ndnsci.errors import FetchTimeout, IntegrityError
from ndnsci.ndn.producer import METADATA_FRESHNESS_MS
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.progress import NoProgress
from ndnsci.sdk.transports import FetchOptions


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def serve_file(serve: Serve, size: int, name: str = "f.bin") -> tuple[str, bytes]:
    data = os.urandom(size)
    (serve.root / name).write_bytes(data)
    serve.start()
    return f"{serve.prefix}/{name}", data


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".part" in p.name)


# --- two fetches of one file into one directory ------------------------------------------------


def test_two_fetches_at_once_never_mix_and_both_verify_the_bytes_on_disk(serve, tmp_path):
    name, data = serve_file(serve, 24_000_000)
    out = tmp_path / "out"
    part = out / "f.bin.part"
    command = [*CLI, "fetch", name, "-o", str(out), "--json", "--progress", "text"]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    for _ in range(3):
        first = subprocess.Popen(command, **pipes)
        wait_for(lambda: part.exists() and part.stat().st_size, 60, "the first's bytes", every=0.01)
        # the first is writing: hold it there until the second has come for the same file
        # (the race of issue 14 B, made certain whatever the machine's load)
        first.send_signal(signal.SIGSTOP)
        second = subprocess.Popen(command, **pipes)
        told = second.stderr.readline()
        first.send_signal(signal.SIGCONT)
        assert told.startswith("waiting: another fetch is writing"), told
        results = [first.communicate(timeout=180), second.communicate(timeout=180)]
        on_disk = (out / "f.bin").read_bytes()
        for proc, (stdout, stderr) in zip((first, second), results, strict=True):
            assert proc.returncode == 0, stderr
            outcome = json.loads(stdout)
            assert (outcome["status"], outcome["checksum"]) == ("done", "verified")
            assert outcome["sha256"] == sha256(data) == sha256(on_disk)
        assert leftovers(out) == []


def test_two_threads_fetching_one_file_wait_for_each_other(serve, tmp_path):
    name, data = serve_file(serve, 8_000_000)
    waits: list[str] = []

    class Recorder(NoProgress):
        def waiting(self, name: str, path: str) -> None:
            waits.append(path)

    outcomes: list[object] = []
    slow = FetchOptions(cc="fixed", window=8)

    def one() -> None:
        outcomes.append(fetch_file(name, tmp_path, options=slow, progress=Recorder()))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert [o.checksum for o in outcomes] == ["verified", "verified"]
    assert waits == [str(tmp_path / "f.bin")]
    assert sha256((tmp_path / "f.bin").read_bytes()) == sha256(data)


def test_bytes_changed_on_disk_during_a_transfer_are_never_reported_verified(serve, tmp_path):
    name, data = serve_file(serve, 4_000_000)
    part = tmp_path / "f.bin.part"
    vandalised: list[bool] = []

    class Vandal(NoProgress):
        """Another program scribbling over what already arrived (once)."""

        def update(self, name: str, done: int, total: int) -> None:
            if done > 100_000 and not vandalised:
                vandalised.append(True)
                with open(part, "r+b") as f:
                    f.write(b"\0" * 4096)

    slow = FetchOptions(cc="fixed", window=4)
    with pytest.raises(IntegrityError, match="does not match the published"):
        fetch_file(name, tmp_path, options=slow, progress=Vandal())
    assert not (tmp_path / "f.bin").exists()
    vandalised.clear()
    outcome = fetch_file(name, tmp_path, options=slow, progress=Vandal(), retries=1)
    assert (outcome.checksum, outcome.attempts) == ("verified", 2)  # again, from nothing
    assert (tmp_path / "f.bin").read_bytes() == data


# --- Ctrl-C and a producer that dies -----------------------------------------------------------


def test_ctrl_c_on_a_name_stops_at_once_and_resume_continues(serve, tmp_path):
    name, data = serve_file(serve, 60_000_000)
    slow = ["--cc", "fixed", "--window", "1"]
    proc = subprocess.Popen(
        [*CLI, "fetch", name, "-o", str(tmp_path), *slow], stderr=subprocess.PIPE, text=True
    )
    part = tmp_path / "f.bin.part"
    wait_for(lambda: part.exists() and part.stat().st_size > 0, 60, "the first bytes", every=0.01)
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.monotonic() - interrupted
    assert proc.returncode == 130, err
    assert took < 3.0, f"Ctrl-C took {took:.1f} s"  # the whole file takes far longer
    assert "run the same command again with --resume" in err and "Traceback" not in err
    assert leftovers(tmp_path) == ["f.bin.part", "f.bin.part.state"]
    assert not (tmp_path / "f.bin").exists()
    again = run_cli("fetch", name, "-o", str(tmp_path), "--resume", "--json")
    assert again.returncode == 0, again.stderr
    outcome = json.loads(again.stdout)
    assert outcome["resumed_segments"] > 0 and outcome["checksum"] == "verified"
    assert (tmp_path / "f.bin").read_bytes() == data and leftovers(tmp_path) == []


@pytest.mark.parametrize("cc", ["fixed", "aimd", "cubic"])
def test_every_window_control_waits_the_stall_deadline_for_a_dead_producer(serve, tmp_path, cc):
    name, _ = serve_file(serve, 40_000_000)
    killed: list[float] = []

    class KillProducer(NoProgress):
        def update(self, name: str, done: int, total: int) -> None:
            if done > 0 and not killed:
                serve.kill()
                killed.append(time.monotonic())

    options = FetchOptions(cc=cc, window=16, stall_seconds=3.0)
    with pytest.raises(FetchTimeout, match=r"no Data for 3 s"):
        fetch_file(name, tmp_path, options=options, progress=KillProducer())
    gave_up = time.monotonic() - killed[0]
    assert 2.9 <= gave_up < 10, f"{cc} gave up after {gave_up:.1f} s"
    assert leftovers(tmp_path) == ["f.bin.part", "f.bin.part.state"]  # resumable


# --- the producer's side: a file rewritten in place --------------------------------------------


@pytest.mark.parametrize("size", [100_000, 3_000_000])  # hashed at once / in the background
def test_a_file_rewritten_with_its_mtime_put_back_is_served_with_its_new_digest(
    serve, tmp_path, size
):
    name, _ = serve_file(serve, size)
    path = serve.root / "f.bin"
    assert fetch_file(name, tmp_path / "a").checksum == "verified"
    st = path.stat()
    second = os.urandom(size)
    path.write_bytes(second)  # same size, other bytes, the old mtime: only ctime moves
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    time.sleep(METADATA_FRESHNESS_MS / 1000)  # caches may answer the old metadata until then
    outcome = fetch_file(name, tmp_path / "b")
    assert outcome.checksum == "verified" and outcome.sha256 == sha256(second)
    assert (tmp_path / "b" / "f.bin").read_bytes() == second
    serve.stop()  # the checksum cache on disk survives a restart: it must not bring back
    serve.start()  # the old digest either
    again = fetch_file(name, tmp_path / "c")
    assert again.sha256 == sha256(second) and (tmp_path / "c" / "f.bin").read_bytes() == second


# --- the output's disk -------------------------------------------------------------------------


def test_a_read_only_output_is_a_clear_error(serve, tmp_path):
    name, _ = serve_file(serve, 10_000)
    out = tmp_path / "ro"
    out.mkdir()
    (out / "existing").mkdir()
    mount = f"mount --bind {out} {out} && mount -o remount,bind,ro {out}"
    below = in_mount_namespace(mount, [*CLI, "fetch", name, "-o", str(out / "sub")])
    assert below.stdout.strip().endswith("rc=2"), below.stderr
    assert f"ndnsci fetch: cannot write to {out / 'sub'}: Read-only file system" in below.stderr
    inside = in_mount_namespace(mount, [*CLI, "fetch", name, "-o", str(out / "existing")])
    assert inside.stdout.strip().endswith("rc=1"), inside.stderr
    assert f"Read-only file system: {out / 'existing' / 'f.bin.part'}" in inside.stderr
    for run in (below, inside):
        assert "Traceback" not in run.stderr


def test_a_full_disk_fails_clearly_and_leaves_no_empty_state_file(serve, tmp_path):
    name, _ = serve_file(serve, 6_000_000)
    out = tmp_path / "small"
    out.mkdir()
    run = in_mount_namespace(
        f"mount -t tmpfs -o size=2m ndnsci-test {out}",
        [*CLI, "fetch", name, "-o", str(out)],
        after=f"ls -a {out}",
    )
    assert run.stdout.strip().endswith("rc=1"), run.stderr
    assert "No space left on device" in run.stderr and "Traceback" not in run.stderr
    listed = run.stdout.split()
    assert not [entry for entry in listed if entry.endswith(".tmp")], listed
    assert "f.bin" not in listed
