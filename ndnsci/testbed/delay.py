"""The delay element: ``deploy/testbed/delay/nsci-delay.c``, built on first use.

One runs per delayed link, in a namespace of its own between the two nodes' veths, as a
transparent bridge that holds each frame for the link's one-way delay (``tc netem`` is missing
on the machines we run on). Its statistics (frames, drops, how late each frame left) are read
with :func:`stats`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from ndnsci.errors import TestbedError


def binary() -> Path:
    """The nsci-delay binary: ``$NSCI_DELAY``, else built by deploy/testbed/build.sh."""
    from ndnsci.base.environment import settings

    explicit = settings().delay_binary
    if explicit is not None:
        return explicit
    from ndnsci.ndn.forwarder import repo_dir

    repo = repo_dir()
    if repo is None:
        raise TestbedError("the delay element is built from the source checkout (deploy/testbed)")
    script = repo / "deploy" / "testbed" / "build.sh"
    proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise TestbedError(f"building the delay element failed:\n{proc.stderr.strip()}")
    return Path(proc.stdout.strip().splitlines()[-1])


def command(if_a: str, if_b: str, delay_ms: float, stats_file: Path) -> list[str]:
    delay_us = str(round(delay_ms * 1000))
    return [str(binary()), if_a, if_b, delay_us, delay_us, str(stats_file)]


def stats(pid: int, stats_file: Path, timeout: float = 2.0) -> dict[str, Any]:
    """Ask a running element for its statistics (SIGUSR1) and read them."""
    before = stats_file.stat().st_mtime_ns if stats_file.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stats_file.exists() and stats_file.stat().st_mtime_ns != before:
            break
        time.sleep(0.02)
    try:
        result: dict[str, Any] = json.loads(stats_file.read_text())
    except (OSError, ValueError) as exc:
        raise TestbedError(f"no statistics from the delay element ({stats_file}): {exc}") from exc
    return result
