"""ndnsci/base/processes.py: start a child, wait until it is ready, alive, stop, state files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ndnsci.base import processes

PY = sys.executable
#: a child that ignores SIGTERM, and says so once it does
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ignoring', flush=True); time.sleep(60)  # ndnsci-test-stubborn"
)


def _child(tmp_path: Path, code: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return processes.start([PY, "-c", code], tmp_path / "child.log", **kwargs)  # type: ignore[arg-type]


def test_a_child_writes_its_output_into_its_log_in_a_session_of_its_own(tmp_path):
    proc = _child(tmp_path, "import os, sys; print('out'); print('err', file=sys.stderr); "
                  "print(os.getsid(0) == os.getpid())")  # fmt: skip
    assert proc.wait(30) == 0
    assert processes.read_log(tmp_path / "child.log").split() == ["out", "err", "True"]


def test_append_keeps_what_the_log_held(tmp_path):
    (tmp_path / "child.log").write_text("before\n")
    assert _child(tmp_path, "print('after')", append=True).wait(30) == 0
    assert processes.read_log(tmp_path / "child.log") == "before\nafter\n"
    assert _child(tmp_path, "print('anew')").wait(30) == 0
    assert processes.read_log(tmp_path / "child.log") == "anew\n"


def test_wait_ready_returns_once_the_log_says_so(tmp_path):
    proc = _child(tmp_path, "import time; time.sleep(0.3); print('ready', flush=True); "
                  "time.sleep(60)")  # fmt: skip
    try:
        processes.wait_ready(proc, processes.log_says(tmp_path / "child.log", "x", "ready"), 30)
        assert proc.poll() is None
    finally:
        processes.terminate(proc, 5)
    assert proc.returncode == -signal.SIGTERM


def test_wait_ready_says_the_exit_status_of_a_child_that_exited(tmp_path):
    proc = _child(tmp_path, "raise SystemExit(7)")
    with pytest.raises(processes.NotReady) as raised:
        processes.wait_ready(proc, lambda: False, 30)
    assert raised.value.returncode == 7


def test_wait_ready_gives_up_after_its_timeout(tmp_path):
    proc = _child(tmp_path, "import time; time.sleep(60)")
    try:
        with pytest.raises(processes.NotReady) as raised:
            processes.wait_ready(proc, lambda: False, 0.2, interval=0.05)
        assert raised.value.returncode is None
    finally:
        processes.terminate(proc, 5)


def test_terminate_kills_a_child_that_ignores_sigterm(tmp_path):
    proc = _child(tmp_path, STUBBORN)
    processes.wait_ready(proc, processes.log_says(tmp_path / "child.log", "ignoring"), 30)
    processes.terminate(proc, 0.5)
    assert proc.returncode == -signal.SIGKILL


def test_alive_tells_program_start_time_and_zombies_apart(tmp_path):
    proc = _child(tmp_path, "import time; time.sleep(60)  # ndnsci-test-sleeper")
    try:
        started = processes.start_time(proc.pid)
        assert started is not None
        assert processes.alive(proc.pid)
        assert processes.alive(proc.pid, "ndnsci-test-sleeper", started)
        assert not processes.alive(proc.pid, "another-program")
        assert not processes.alive(proc.pid, started=started + 1)  # a reused pid
        os.kill(proc.pid, signal.SIGKILL)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # it died; not reaped
        assert not processes.alive(proc.pid)  # a zombie (not reaped yet) is not alive
        assert Path(f"/proc/{proc.pid}").exists()
    finally:
        proc.wait(10)
    assert not processes.alive(None) and not processes.alive(0)


def test_stop_pid_escalates_and_reaps(tmp_path):
    proc = _child(tmp_path, STUBBORN)
    processes.wait_ready(proc, processes.log_says(tmp_path / "child.log", "ignoring"), 30)
    assert processes.stop_pid(proc.pid, 0.3, program="ndnsci-test-stubborn")
    assert not processes.alive(proc.pid)
    with pytest.raises(ChildProcessError):  # reaped by stop_pid
        os.waitpid(proc.pid, 0)


def test_stop_pid_leaves_a_process_running_another_program_alone(tmp_path):
    proc = _child(tmp_path, "import time; time.sleep(60)")
    try:
        assert processes.stop_pid(proc.pid, 0.1, program="not-this-one")
        assert proc.poll() is None
    finally:
        processes.terminate(proc, 5)


def test_stop_pid_says_when_the_process_outlives_every_signal(tmp_path):
    proc = _child(tmp_path, STUBBORN)
    try:
        processes.wait_ready(proc, processes.log_says(tmp_path / "child.log", "ignoring"), 30)
        assert not processes.stop_pid(proc.pid, 0.1, signals=(None, signal.SIGTERM))
        assert proc.poll() is None
    finally:
        processes.terminate(proc, 5)


@dataclass
class _State:
    pid: int = 0
    names: list[str] = field(default_factory=list)


def test_a_state_file_round_trips_and_ignores_keys_it_does_not_know(tmp_path):
    path = tmp_path / "run" / "state.json"
    assert processes.load_state(path, _State, RuntimeError, "test state") is None
    processes.save_state(path, _State(5, ["a"]))
    assert json.loads(path.read_text()) == {"pid": 5, "names": ["a"]}
    assert not path.with_suffix(".tmp").exists()
    path.write_text(json.dumps({"pid": 6, "names": [], "from-a-newer-version": 1}))
    assert processes.load_state(path, _State, RuntimeError, "test state") == _State(6, [])
    processes.save_state(path, {"plain": "dict"})
    assert json.loads(path.read_text()) == {"plain": "dict"}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"names": []}'])
def test_an_unreadable_state_file_raises_the_callers_error(tmp_path, text):
    @dataclass
    class Needs:
        pid: int

    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(LookupError, match=rf"^unreadable test state {path}: "):
        processes.load_state(path, Needs, LookupError, "test state")


def test_tail_is_the_end_of_a_log_indented(tmp_path):
    log = tmp_path / "x.log"
    assert processes.tail(log) == ""
    log.write_text("".join(f"line {i}\n" for i in range(20)) + "\n")
    assert processes.tail(log, 2) == "    line 18\n    line 19"
    assert processes.tail(log, 1, "  | ") == "  | line 19"
