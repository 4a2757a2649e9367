"""Helpers of the whole suite: the ``ndnsci`` command as a subprocess, a private NDNd
forwarder, ``ndnsci serve`` processes. Free ports come from ``ndnsci.base.processes.free_port`` (the
one the stack uses); the forwarder fixtures (``fw``, ``make_forwarder``) are in conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ndnsci.base.processes import free_port
from ndnsci.errors import NotFoundError
from ndnsci.ndn import forwarder

CLI = [sys.executable, "-m", "ndnsci"]  # the command a user runs, from this interpreter


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float = 120,
    cwd: str | Path | None = None,
) -> subprocess.CompletedProcess[Any]:
    """``ndnsci ARGS`` in a subprocess, output captured (text unless ``input`` is bytes);
    ``env`` adds to this process's environment."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=not isinstance(input, bytes),
        input=input,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


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
        self, root: Path, prefix: str, extra: list[str] | None = None, forwarder: str = ""
    ) -> None:
        self.root = root
        self.prefix = prefix
        self.extra = extra or []
        self.forwarder = forwarder  # its face URI; "": NDN_CLIENT_TRANSPORT
        self.proc: subprocess.Popen[str] | None = None
        self.log: list[str] = []

    def start(self, timeout: float = 20.0) -> Serve:
        self.proc = subprocess.Popen(
            [
                *CLI,
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
                **({"NDN_CLIENT_TRANSPORT": self.forwarder} if self.forwarder else {}),
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


def in_mount_namespace(
    setup: str, command: list[str], after: str = "", timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``setup`` (shell: a mount), ``command``, then ``after`` (shell) in a private mount
    namespace, so a test gets a full or read-only filesystem without touching the machine's.
    The command's exit status is printed last on stdout as ``rc=N``."""
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = f'{setup} || exit 99\n"$@"\nrc=$?\n{after}\necho "rc=$rc"'
    return subprocess.run(
        [*unshare, "sh", "-c", script, "sh", *command],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def with_tty_stderr(
    command: list[str], env: Mapping[str, str] | None = None, timeout: float = 120
) -> tuple[int, str, str]:
    """Run ``command`` with stdout on a pipe and stderr on a pseudo-terminal (as in a shell
    whose output is redirected); returns (exit status, stdout, what the terminal showed)."""
    import pty

    master, slave = pty.openpty()
    shown: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        proc = subprocess.run(
            command,
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            timeout=timeout,
            check=False,
            env={**os.environ, **(env or {})},
        )
    finally:
        os.close(slave)
    reader.join(10)
    os.close(master)
    return proc.returncode, proc.stdout, b"".join(shown).decode(errors="replace")


@contextmanager
def ndnd_put(ndnd_binary: Path, prefix: str, data: bytes) -> Iterator[subprocess.Popen[bytes]]:
    """``ndnd put PREFIX`` serving ``data`` (a producer nobody here wrote), stopped after."""
    put = subprocess.Popen(
        [str(ndnd_binary), "put", prefix], stdin=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert put.stdin is not None
    put.stdin.write(data)
    put.stdin.close()
    try:
        yield put
    finally:
        put.terminate()
        put.wait(5)


T = TypeVar("T")


def wait_for(
    predicate: Callable[[], T],
    timeout: float,
    what: str,
    *,
    every: float = 0.1,
    ignoring: type[BaseException] | tuple[type[BaseException], ...] = (),
    detail: Callable[[], str] | None = None,
) -> T:
    """``predicate()`` every ``every`` seconds until it returns something true, which is
    returned. After ``timeout`` seconds (and one last call) an AssertionError names ``what``,
    the last value or exception seen, then ``detail()`` (logs, say). An exception of
    ``ignoring`` counts as "not yet" (a server not listening yet); any other one propagates at
    once, so a predicate can give up early by raising (a process that exited)."""
    deadline = time.monotonic() + timeout
    while True:
        error: BaseException | None = None
        try:
            value = predicate()
        except ignoring as exc:
            error, last = exc, f"{type(exc).__name__}: {exc}"
        else:
            if value:
                return value
            last = repr(value)
        if time.monotonic() >= deadline:
            last = last if len(last) <= 500 else last[:500] + "..."
            message = f"timed out after {timeout:g} s waiting for {what} (last: {last})"
            raise AssertionError(message + (detail() if detail else "")) from error
        time.sleep(every)


def once_published(fetch: Callable[[], T], seconds: float = 10) -> T:
    """``fetch()``, again while the name is not found yet (a producer still starting)."""
    return wait_for(fetch, seconds, "the name to be published", ignoring=NotFoundError)


def child_processes(pid: int) -> list[int]:
    """The live children of process ``pid``, whichever of its threads started them (a process
    pool spawns from the thread that submits); none once ``pid`` has exited."""
    tasks = Path(f"/proc/{pid}/task")
    try:
        return [int(child) for task in tasks.iterdir()
                for child in (task / "children").read_text().split()]  # fmt: skip
    except OSError:
        return []


def make_certificate(
    folder: Path, name: str = "server", names: str = "IP:127.0.0.1,DNS:localhost"
) -> tuple[Path, Path]:
    """A self-signed certificate for ``names`` (subjectAltName), and its key (no passphrase)."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
         "-addext", f"subjectAltName={names}"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def changed_in_place(path: Path, offset: int = 5000) -> None:
    """16 other bytes at ``offset``, the size and the old mtime kept (``touch -d``)."""
    st = path.stat()
    with path.open("r+b") as f:
        f.seek(offset)
        old = f.read(16)
        f.seek(offset)
        f.write(bytes(b ^ 0xFF for b in old))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
