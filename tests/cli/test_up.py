"""``ndnsci up``: the whole system from one command, stopped cleanly."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
from support import CLI

from ndnsci._stack import free_port
from ndnsci.ndn import forwarder


def up(*args: str) -> list[str]:
    return [*CLI, "up", "--private-forwarder", *args]


def closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_check_starts_searches_fetches_and_stops(fw, sample_dir, tmp_path):
    port = free_port()
    workdir = Path(f"/tmp/ndnsci-upc-{os.getpid()}")
    out = subprocess.run(
        up("--check", "--port", str(port), "--data", str(sample_dir), "--workdir", str(workdir)),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ndnsci is up" in out.stdout and "check: ok" in out.stdout
    assert "check: search model=HadCM3 variable=tas: 3 files" in out.stdout
    assert "SHA-256 verified" in out.stdout
    assert closed(port) and not forwarder.is_running(workdir / "fw" / "nfd.sock")
    shutil.rmtree(workdir, ignore_errors=True)


def test_runs_until_sigterm_and_its_fetch_command_works(fw, sample_dir, tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        up("--port", str(port), "--data", str(sample_dir)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "Press Ctrl-C" in line or not line:
            break
    banner = "".join(lines)
    assert "Press Ctrl-C" in banner, banner + proc.stderr.read()
    assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health").is_success
    command = next(line for line in lines if " fetch --query" in line).strip()
    fetched = subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )  # the command exactly as printed
    assert fetched.returncode == 0, fetched.stderr
    assert len(list((tmp_path / "ndnsci-data").rglob("tas_*.nc"))) == 3
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert closed(port)


def test_a_busy_port_is_a_clear_error(fw, sample_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            up("--port", str(port), "--data", str(sample_dir)),
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert out.returncode == 1 and f"port {port} is in use" in out.stderr
    assert "Traceback" not in out.stderr
