"""Child processes, as the stack, the native plane, XRootD and the testbed run them.

- :func:`start`: a child in a session of its own, its output in a log, dying with its parent;
- :func:`wait_ready`: wait until it is ready, or has exited, or the time is up;
- :func:`alive` (any pid: not a zombie, running a given program, started when recorded) and
  :func:`stop_pid` (signals, escalating, until it is gone); :func:`terminate` for a child;
- :func:`load_state` / :func:`save_state`: what was started, as a dataclass in a JSON file
  written whole, so another process (``down``, after any failure) finds it;
- :func:`read_log` / :func:`tail`: a child's log, for the messages that say why it failed;
- :func:`free_port` / :func:`port_in_use`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

STOP_TIMEOUT = 10.0

T = TypeVar("T")


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: only Linux has prctl

    return ctypes.CDLL(None, use_errno=True).prctl


_PRCTL = _prctl()  # looked up here: the child between fork and exec only calls it


def die_with_parent() -> None:
    """In a child: get SIGTERM when the process that started the stack dies, however it dies
    (a crashed notebook kernel runs no atexit handler). Linux's PR_SET_PDEATHSIG."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


# --- starting ------------------------------------------------------------------------------


def start(
    argv: Sequence[str],
    log: Path,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    preexec: Callable[[], None] | None = die_with_parent,
    append: bool = False,
) -> subprocess.Popen[bytes]:
    """``argv`` as a child: stdin from /dev/null, stdout and stderr into ``log`` (``append``:
    after what it holds), in a session of its own (Ctrl-C reaches the parent only, which stops
    its children in order), ``preexec`` run in the child before it executes (default: it dies
    with its parent; None: it outlives it)."""
    with open(log, "ab" if append else "wb") as out:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
            # safe with threads: die_with_parent is one system call, no import, no lock
            preexec_fn=preexec,  # noqa: PLW1509
        )


class NotReady(Exception):
    """:func:`wait_ready` gave up: the child exited (``returncode``) or the time was up
    (``returncode`` None)."""

    def __init__(self, returncode: int | None) -> None:
        super().__init__("exited" if returncode is not None else "timed out")
        self.returncode = returncode


def wait_ready(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    timeout: float,
    interval: float = 0.1,
) -> None:
    """Return once ``ready()`` is true, looking every ``interval`` seconds.

    Raises:
        NotReady: ``proc`` exited first, or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise NotReady(proc.returncode)
        if ready():
            return
        if time.monotonic() > deadline:
            raise NotReady(None)
        time.sleep(interval)


def log_says(log: Path, *texts: str) -> Callable[[], bool]:
    """A ``ready`` for :func:`wait_ready`: the log holds one of ``texts``."""
    return lambda: any(text in read_log(log) for text in texts)


# --- alive, stopping -----------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks), to tell a process from a reused pid;
    None when there is no such process, or only its zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else int(fields[19])


def alive(pid: int | None, program: str = "", started: int | None = None) -> bool:
    """Whether ``pid`` runs (not a zombie), with ``program`` in its command line ("": any) and,
    when ``started`` is given, the start time recorded (:func:`start_time`): a pid reused by
    another process is not taken for the one recorded."""
    if not pid:
        return False
    now = start_time(pid)
    if now is None or (started is not None and now != started):
        return False
    if not program:
        return True
    try:
        return program.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop_pid(
    pid: int,
    grace: float,
    *,
    program: str = "",
    signals: Sequence[signal.Signals | None] = (signal.SIGTERM, signal.SIGKILL),
) -> bool:
    """Send each of ``signals`` in turn (None: send nothing, only wait) to ``pid`` while it runs
    ``program`` (:func:`alive`), each time waiting up to ``grace`` seconds for it to end; it is
    reaped when it is our child. Whether it ended."""

    def running() -> bool:
        return alive(pid, program)

    for sig in signals:
        if sig is not None and running():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while running() and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reap it when it is our child
        if not running():
            return True
    return not running()


def terminate(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; the child is reaped either way."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


# --- state files ---------------------------------------------------------------------------


def load_state(path: Path, kind: type[T], error: type[Exception], what: str) -> T | None:
    """The dataclass ``kind`` saved in ``path`` (keys it does not know are left out); None
    when there is no such file.

    Raises:
        error: ``unreadable <what> <path>: <why>`` (not JSON, fields missing).
    """
    try:
        raw = json.loads(path.read_text())
        known = {f.name for f in dataclasses.fields(kind)}  # type: ignore[arg-type]
        return kind(**{k: v for k, v in raw.items() if k in known})
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise error(f"unreadable {what} {path}: {exc}") from exc


def save_state(path: Path, state: Any) -> None:
    """``state`` (a dataclass, or anything JSON takes) into ``path``, whole or not at all: a
    reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    is_record = dataclasses.is_dataclass(state) and not isinstance(state, type)
    raw = dataclasses.asdict(state) if is_record else state
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(raw, indent=1) + "\n")
    os.replace(temporary, path)


# --- logs ----------------------------------------------------------------------------------


def read_log(path: Path) -> str:
    """The log's text ("" when there is none yet)."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def tail(path: Path, lines: int = 15, prefix: str = "    ") -> str:
    """The log's last ``lines`` lines, each after ``prefix``, for a message."""
    return "\n".join(prefix + line for line in read_log(path).strip().splitlines()[-lines:])
