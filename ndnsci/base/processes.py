"""Child processes, as the stack, the native plane, XRootD and the testbed start them: a free
port, a child that dies with its parent, a terminate that escalates to a kill."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
from typing import Any

STOP_TIMEOUT = 10.0


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
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


_PRCTL = _prctl()  # looked up here: the child between fork and exec only calls it


def die_with_parent() -> None:
    """In a child: get SIGTERM when the process that started the stack dies, however it dies
    (a crashed notebook kernel runs no atexit handler). Linux's PR_SET_PDEATHSIG."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


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
