"""The whole system on one machine (``ndnsci up``): forwarder, catalog, producer, published data.

:class:`LocalStack` starts, in order: an NDNd forwarder, a catalog (SQLite, in the stack's
working directory) with DIR published into it, a producer serving DIR's files under their
catalog names (``ndnsci serve DIR --catalog URL``) and a transfer agent running the catalog's
transfer jobs into ``<workdir>/transfers`` (``ndnsci transfer agent``). Each part is a child
process with its log in the working directory; :meth:`LocalStack.stop` stops them in the
reverse order. While it runs,
``NDN_CLIENT_TRANSPORT`` and ``NDNSCI_CATALOG`` point at it, so ``ndnsci.Catalog()``,
``ndnsci.fetch()`` and the command line use it without arguments.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import IO, Any

from ndnsci.base import processes
from ndnsci.base.processes import die_with_parent, free_port, port_in_use, terminate
from ndnsci.errors import ForwarderError, StackError

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
DEFAULT_WS_PORT = 9696


class LocalStack:
    """Forwarder + catalog + producer serving ``data`` (default: a generated sample archive) +
    transfer agent.

    ``port`` is the catalog's (0: any free port); ``forwarder="private"`` starts a forwarder of
    its own on a socket in the working directory, ``"shared"`` uses the one at
    ``NDN_CLIENT_TRANSPORT`` (or the default socket), starting it there if none runs.
    ``ws_port`` is the WebSocket port of a forwarder it starts (0: any free port; default: 9696
    for the shared one, which the portal expects, any free port for a private one); a port in
    use is an error, never silently another port. ``agent=False``: no transfer agent (a caller
    that runs its own).

    Example::

        >>> with ndnsci.LocalStack(port=0) as stack:
        ...     found = ndnsci.Catalog().search(model="HadCM3", variable="tas")
        ...     paths = ndnsci.fetch(found, "data")

    The parts stop with the process that started them, however it ends (Linux: they get
    SIGTERM when the thread that called :meth:`start` exits, so call it from one that lives as
    long as the stack, e.g. the main thread).

    Raises:
        StackError: (from :meth:`start`) a part did not start; the message says which and
            shows the end of its log. What was started is stopped again.
    """

    def __init__(
        self,
        data: str | os.PathLike[str] | None = None,
        *,
        port: int = 8000,
        workdir: str | os.PathLike[str] | None = None,
        forwarder: str = "private",
        ws_port: int | None = None,
        big_mib: int = 32,
        transfers: str | os.PathLike[str] | None = None,
        agent: bool = True,
        set_environment: bool = True,
        log: IO[str] | None = None,
    ) -> None:
        if forwarder not in ("private", "shared"):
            raise ValueError("forwarder must be 'private' or 'shared'")
        self._own_workdir = workdir is None
        # short: the forwarder's AF_UNIX socket lives here (paths are limited to ~100 bytes)
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="ndnsci-up-", dir="/tmp"))
        self.data = Path(data) if data is not None else self.workdir / "sample"
        #: where the transfer agent writes: ``<transfers>/<a job's destination>/<DRS path>``
        self.transfer_root = (
            Path(transfers) if transfers is not None else self.workdir / "transfers"
        )
        #: whether the stack runs a transfer agent (a caller that runs its own says False)
        self.agent = agent
        self.port = port
        self.forwarder_mode = forwarder
        self.ws_port = ws_port
        self.big_mib = big_mib
        self.set_environment = set_environment
        self.log = log
        self.catalog_url = ""
        self.transport = ""
        self.files = 0
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._fw_socket: Path | None = None  # the forwarder this stack started
        self._shared_socket: Path | None = None  # the one running that it uses instead
        self._child_env: dict[str, str] = {}
        self._saved_env: dict[str, str | None] = {}
        self._running = False
        #: names the catalog this stack starts (``GET /health`` says it)
        self._instance = uuid.uuid4().hex

    # --- starting ---------------------------------------------------------------------------

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> LocalStack:
        """Start every part; returns once the producer serves the published files."""
        if self._running:
            return self
        self._running = True
        atexit.register(self.stop)  # a notebook kernel that dies still cleans up
        try:
            self._check_port()  # before the forwarder and the publishing (seconds of work)
            self.workdir.mkdir(parents=True, exist_ok=True)
            self._start_forwarder()
            self._prepare_data()
            self._publish()
            self._start_catalog()
            self._start_producer()
            if self.agent:
                self._start_agent()
        except BaseException:
            self.stop()
            raise
        if self.set_environment:
            self._export(
                {"NDN_CLIENT_TRANSPORT": self.transport, "NDNSCI_CATALOG": self.catalog_url}
            )
        return self

    def _say(self, text: str) -> None:
        if self.log is not None:
            print(text, file=self.log, flush=True)

    def _start_forwarder(self) -> None:
        from ndnsci.ndn import forwarder

        env = {"NDNSCI_FW_UDP_PORT": str(free_port(socket.SOCK_DGRAM))}
        if self.forwarder_mode == "shared":
            sock = forwarder.socket_path()
            if forwarder.is_running(sock):
                self._say(
                    f"forwarder: using the one running on {sock} (not this stack's: if it "
                    "stops, this stack stops too; --private-forwarder for one of its own)"
                )
                self._shared_socket = sock  # watched by dead()
                self.ws_port = None  # its own configuration says
                self.transport = f"unix://{sock}"
                self._child_env["NDN_CLIENT_TRANSPORT"] = self.transport
                return
        else:
            sock = self.workdir / "fw" / "nfd.sock"
        wanted = self.ws_port
        if wanted is None:
            wanted = DEFAULT_WS_PORT if self.forwarder_mode == "shared" else 0
        if wanted and port_in_use(wanted):
            raise StackError(
                f"the forwarder's WebSocket port {wanted} is in use (another forwarder?): pass "
                "another port (--ws-port N), or --ws-port 0 for any free port"
            )
        self.ws_port = wanted or free_port()
        env["NDNSCI_FW_WS_PORT"] = str(self.ws_port)
        self._say(f"forwarder: starting on {sock} (WebSocket 127.0.0.1:{self.ws_port})")
        try:
            forwarder.start(sock, extra_env=env, preexec=die_with_parent)
        except ForwarderError as exc:
            raise StackError(f"the forwarder did not start: {exc}") from exc
        self._fw_socket = sock
        self.transport = f"unix://{sock}"
        self._child_env["NDN_CLIENT_TRANSPORT"] = self.transport

    def _prepare_data(self) -> None:
        if self.data.exists() and any(self.data.iterdir()):
            return
        from ndnsci.sdk.sample import make_sample

        self._say(f"data: writing the sample archive to {self.data}")
        make_sample(self.data, big_mib=self.big_mib)

    def _publish(self) -> None:
        db = self.workdir / "catalog.db"
        db.unlink(missing_ok=True)  # a fresh catalog: exactly what DIR holds now
        self._db_url = f"sqlite:///{db}"
        self._say(f"catalog: publishing {self.data}")
        proc = subprocess.run(
            [sys.executable, "-m", "ndnsci", "publish", str(self.data), "--db", self._db_url,
             "--force", "--jobs", str(min(4, os.cpu_count() or 1))],
            capture_output=True, text=True, env=self._env(XDG_STATE_HOME=str(self.workdir / "s")),
            timeout=600, check=False,
        )  # fmt: skip
        (self.workdir / "publish.log").write_text(proc.stderr)
        if proc.returncode not in (0, 1):  # 1: some files could not be named (quarantined)
            log = processes.tail(self.workdir / "publish.log")
            raise StackError(f"publishing {self.data} failed:\n{log}")
        summary = proc.stderr.strip().splitlines()[-1:] or ["?"]
        self._say(f"catalog: {summary[0]}")

    def _check_port(self, port: int | None = None) -> None:
        port = port or self.port
        if port and port_in_use(port):
            raise StackError(
                f"port {port} is in use (another catalog, or `ndnsci up` already running?): "
                f"pass another port (--port)"
            )

    def _start_catalog(self) -> None:
        port = self.port or free_port()
        self._check_port(port)  # again: taken while DIR was published?
        self.catalog_url = f"http://127.0.0.1:{port}"
        self._spawn(
            "catalog",
            ["catalog", "serve", "--db", self._db_url, "--host", "127.0.0.1", "--port",
             str(port), "--no-migrate"],
            NDNSCI_INSTANCE=self._instance,
        )  # fmt: skip
        self._wait(self._healthy, "catalog", f"answer at {self.catalog_url}")
        self._say(f"catalog: {self.catalog_url}/api/v1/")

    def _healthy(self) -> bool:
        """Our catalog answers: the server on the port is the one this stack started (two
        stacks started at the same moment both find the port free; the second's catalog
        cannot bind it and must not take the first's answer for its own)."""
        import httpx

        try:
            response = httpx.get(f"{self.catalog_url}/api/v1/health", timeout=1.0)
            return response.is_success and response.json().get("instance") == self._instance
        except (httpx.HTTPError, ValueError, AttributeError):
            return False

    def _start_producer(self) -> None:
        self._child_env.update(self._key_env())
        self._spawn(
            "producer",
            ["serve", str(self.data), "--catalog", self.catalog_url, "--refresh", "2"],
        )
        log = self.log_path("producer")
        self._wait(processes.log_says(log, " on unix://", " on tcp"), "producer",
                   "register its prefixes")  # fmt: skip
        for line in processes.read_log(log).splitlines():
            if "published files served" in line:
                self.files = int(line.split(": ", 1)[-1].split()[0])
                self._say("producer: " + line.split("ndnsci serve: ", 1)[-1])

    def _start_agent(self) -> None:
        """The transfer agent: the jobs submitted to this stack's catalog (``POST
        /api/v1/transfers``, the portal's "Transfer to a site"), fetched over NDN from its
        producer into :attr:`transfer_root`."""
        self._spawn(
            "transfer-agent",
            ["transfer", "agent", "--db", self._db_url, "--root", str(self.transfer_root)],
        )
        self._wait(processes.log_says(self.log_path("transfer-agent"), "transfer agent "),
                   "transfer-agent", "open the catalog database")  # fmt: skip
        self._say(f"transfer agent: jobs of this catalog into {self.transfer_root}")

    def _key_env(self) -> dict[str, str]:
        """The producer signs with the user's key, else with one made for this stack."""
        from ndnsci.ndn import keys

        if keys.key_path().exists():
            return {}
        config = self.workdir / "config"
        ensure_key(config)
        return {"NDNSCI_CONFIG_DIR": str(config)}

    def _env(self, **extra: str) -> dict[str, str]:
        return {**os.environ, **self._child_env, **extra}

    def _spawn(self, part: str, args: list[str], **env: str) -> None:
        self._procs[part] = processes.start(
            [sys.executable, "-m", "ndnsci", *args], self.log_path(part), env=self._env(**env)
        )

    def _wait(self, ready: Any, part: str, what: str) -> None:
        try:
            processes.wait_ready(self._procs[part], ready, START_TIMEOUT)
        except processes.NotReady as exc:
            if exc.returncode is not None:
                raise StackError(
                    f"the {part} exited ({exc.returncode}) before it could {what}:\n"
                    f"{processes.tail(self.log_path(part))}"
                ) from None
            raise StackError(
                f"the {part} did not {what} within {START_TIMEOUT:.0f} s:\n"
                f"{processes.tail(self.log_path(part))}"
            ) from None

    def _export(self, values: dict[str, str]) -> None:
        for key, value in values.items():
            self._saved_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value

    # --- running ----------------------------------------------------------------------------

    @property
    def portal_url(self) -> str:
        """The web portal when the catalog serves one, else the API's interactive docs."""
        import httpx

        try:
            page = httpx.get(self.catalog_url + "/", timeout=2.0)
        except httpx.HTTPError:
            page = None
        if page is not None and page.is_success and "html" in page.headers.get("content-type", ""):
            return self.catalog_url + "/"
        return self.catalog_url + "/docs"

    @property
    def temporary(self) -> bool:
        """The working directory (logs, database, transfers) is this stack's own temp folder,
        removed when it stops."""
        return self._own_workdir

    @property
    def db_url(self) -> str:
        """The catalog's database (SQLite in the working directory), once started."""
        return getattr(self, "_db_url", "")

    def catalog(self) -> Any:
        """A :class:`ndnsci.Catalog` of this stack."""
        from ndnsci.sdk.client import Catalog

        return Catalog(self.catalog_url)

    def dead(self) -> str | None:
        """The part that exited on its own, with the end of its log; None while all run."""
        for part, proc in self._procs.items():
            if proc.poll() is not None:
                return (
                    f"the {part} exited ({proc.returncode}):\n{processes.tail(self.log_path(part))}"
                )
        if self._fw_socket is not None:
            from ndnsci.ndn import forwarder

            if not forwarder.is_running(self._fw_socket, 2.0):
                return f"the forwarder on {self._fw_socket} stopped"
        if self._shared_socket is not None:
            from ndnsci.ndn import forwarder

            if not forwarder.is_running(self._shared_socket, 2.0):
                return (
                    f"the forwarder on {self._shared_socket} that this stack was using (not "
                    "its own) stopped: its producer cannot serve, fetches would fail"
                )
        return None

    def log_path(self, part: str) -> Path:
        return self.workdir / f"{part}.log"

    # --- stopping ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the transfer agent, the producer, the catalog and the forwarder (if this stack
        started it)."""
        if not self._running:
            return
        self._running = False
        # the agent first: the files it runs go back to pending while the database is there
        for part in ("transfer-agent", "producer", "catalog"):
            proc = self._procs.pop(part, None)
            if proc is not None:
                terminate(proc, STOP_TIMEOUT)
        if self._fw_socket is not None:
            from ndnsci.ndn import forwarder

            with contextlib.suppress(ForwarderError, OSError):
                forwarder.stop(self._fw_socket)
            self._fw_socket = None
        self._shared_socket = None
        for key, value in self._saved_env.items():
            _restore(key, value)
        self._saved_env.clear()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)


def ensure_key(config: Path) -> None:
    """A publisher key in the config folder ``config`` (made unless one is there), for the
    processes a stack or a testbed starts with ``NDNSCI_CONFIG_DIR=config``."""
    from ndnsci.ndn import keys

    saved = os.environ.get("NDNSCI_CONFIG_DIR")
    os.environ["NDNSCI_CONFIG_DIR"] = str(config)
    try:
        if not keys.key_path().exists():
            keys.create()
    finally:
        _restore("NDNSCI_CONFIG_DIR", saved)


def _restore(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value
