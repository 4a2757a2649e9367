"""Helpers of the whole suite: the ``ndnsci`` command as a subprocess, a private NDNd
forwarder, ``ndnsci serve`` processes. Free ports come from ``ndnsci.base.processes.free_port`` (the
one the stack uses); the forwarder fixtures (``fw``, ``make_forwarder``) are in conftest.py."""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
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
from ndnsci.cli import COMMANDS
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


# What CliForkServer imports before it forks: the command line and every command's module,
# then also the libraries the commands import when they run (most of a catalog command's ~2 s
# start; but a child of a server that has them takes ~0.2 s more to end: more to tear down).
CLI_COMMANDS = ["ndnsci.cli", *COMMANDS.values()]
CLI_PRELOAD = [
    *CLI_COMMANDS,
    "sqlalchemy",
    "uvicorn",
    "ndnsci_catalog.config",
    "ndnsci_catalog.database",
    "ndnsci_catalog.main",
    "ndnsci_catalog.migrate",
    "ndnsci_catalog.tokens",
    "ndnsci_catalog.sites",
    "ndnsci_catalog.federation.service",
    "ndnsci_catalog.federation.mirror",
    "ndnsci_catalog.gateway.app",
    "ndnsci.sdk.client",
    "ndnsci.sdk.fetch",
    "ndnsci_translators.netcdf",
    "netCDF4",
]


class CliForkServer:
    """``run_cli`` without a new interpreter's start each time: ``start`` launches
    tests/cli_forkserver.py, which imports ``preload`` once and forks a child per ``run``, in
    which ``python -m ndnsci ARGS`` runs as in a fresh process (its exit, traceback, shutdown;
    stdin /dev/null, stdout and stderr captured). For a module of many short commands
    (tests/cli/test_bad_inputs.py: ~60 s less). The environment is this process's as it was at
    ``start``: what is not the same for every run wants ``run_cli``."""

    def __init__(self, directory: Path, preload: list[str] | None = None) -> None:
        self.directory = directory
        self.preload = CLI_PRELOAD if preload is None else preload
        self.proc: subprocess.Popen[bytes] | None = None
        self.runs = itertools.count()

    def start(self, timeout: float = 60) -> CliForkServer:
        tests = str(Path(__file__).parent)
        boot = (
            f"import sys; sys.path.insert(0, {tests!r}); import cli_forkserver; del sys.path[0]; "
            f"cli_forkserver.serve({self.preload!r}); "
            "import runpy; runpy.run_module('ndnsci', run_name='__main__', alter_sys=True)"
        )
        self.log = self.directory / "forkserver.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, bufsize=0,  # unbuffered: select() sees every reply not yet read
            )  # fmt: skip
        if self._reply(timeout) != "ready":
            raise RuntimeError("the fork server did not start")
        return self

    def run(
        self, *args: str, timeout: float = 120, cwd: str | Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``ndnsci ARGS`` in a forked child: what ``run_cli(*args, timeout=..., cwd=...)`` returns
        (exit status negative for a signal; ``subprocess.TimeoutExpired`` once it is killed)."""
        assert self.proc is not None and self.proc.stdin is not None
        n = next(self.runs)
        out, err = self.directory / f"{n}.out", self.directory / f"{n}.err"
        request = {"argv": list(args), "cwd": str(cwd or os.getcwd()), "stdin": os.devnull,
                   "stdout": str(out), "stderr": str(err)}  # fmt: skip
        line = memoryview(json.dumps(request).encode() + b"\n")
        while line:
            line = line[os.write(self.proc.stdin.fileno(), line) :]
        pid = int(self._reply(10))
        try:
            status = int(self._reply(timeout))
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            self._reply(10)
            raise subprocess.TimeoutExpired(
                [*CLI, *args], timeout, out.read_text(), err.read_text()
            ) from None
        return subprocess.CompletedProcess(
            [*CLI, *args], os.waitstatus_to_exitcode(status), out.read_text(), err.read_text()
        )

    def _reply(self, timeout: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        if not select.select([self.proc.stdout], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("the fork server's reply", timeout)
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(10)
            raise RuntimeError(f"the fork server exited:\n{self.log.read_text()[-3000:]}")
        return line.decode().strip()

    def stop(self) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.close()  # its loop ends on end of file
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            self.proc.stdout.close()


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
