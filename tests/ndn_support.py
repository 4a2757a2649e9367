"""Helpers of the NDN tests: a private NDNd forwarder and ``ndnsci serve`` processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from ndnsci.ndn import forwarder


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Forwarder:
    """One NDNd instance on a private socket."""

    def __init__(self, directory: Path) -> None:
        self.sock = directory / "fw" / "nfd.sock"
        self.uri = f"unix://{self.sock}"
        self.ports = {
            "NDNSCI_FW_UDP_PORT": str(free_port(socket.SOCK_DGRAM)),
            "NDNSCI_FW_WS_PORT": str(free_port()),
        }

    def start(self) -> None:
        forwarder.start(self.sock, extra_env=self.ports)

    def stop(self) -> None:
        forwarder.stop(self.sock)


class Serve:
    """An ``ndnsci serve`` process; ``start`` returns once its prefix is registered."""

    def __init__(
        self, root: Path, prefix: str, extra: list[str] | None = None, transport: str = ""
    ) -> None:
        self.root = root
        self.prefix = prefix
        self.extra = extra or []
        self.transport = transport
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []

    def start(self, timeout: float = 20.0) -> Serve:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ndnsci",
                "serve",
                str(self.root),
                "--prefix",
                self.prefix,
                "-v",
                *self.extra,
            ],
            stderr=subprocess.PIPE,
            text=True,
            env={
                **os.environ,
                **({"NDN_CLIENT_TRANSPORT": self.transport} if self.transport else {}),
            },
        )
        ready = threading.Event()
        threading.Thread(target=self._read, args=(self.proc, ready), daemon=True).start()
        if not ready.wait(timeout):
            self.stop()
            raise RuntimeError("ndnsci serve did not register:\n" + "".join(self.log))
        return self

    def _read(self, proc: subprocess.Popen[str], ready: threading.Event) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.log.append(line)
            if "serving" in line and " on " in line:
                ready.set()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
