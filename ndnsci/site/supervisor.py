"""``ndnsci site up``: a configured site's parts, started in order and supervised.

:class:`Supervisor` starts the forwarder, publishes each data root into the catalog's database,
starts the catalog (its migrations run as it starts), one producer a data root and, when
enabled, the gateway, waiting for each to be ready (as :class:`~ndnsci.site.stack.LocalStack`
does). It then watches them: a part that exits is restarted after a back-off (1 s, doubling up
to 8 s), logged and counted; a part that dies :data:`GIVE_UP` times within
:data:`GIVE_UP_WINDOW` seconds is marked ``failed`` and left down while the rest stay up. On
SIGTERM or SIGINT it stops them in the reverse order.

What runs is in ``<state_dir>/site.json`` (:class:`SiteState`), written whole at each change,
so ``status`` and ``down`` work from another process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ndnsci.base import processes
from ndnsci.errors import ForwarderError, StackError
from ndnsci.site.config import SiteConfig
from ndnsci.site.stack import ensure_key

if TYPE_CHECKING:
    import httpx

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 8.0
GIVE_UP = 5
GIVE_UP_WINDOW = 120.0
POLL = 0.5


@dataclass
class PartState:
    pid: int = 0
    started: int | None = None  # the kernel's start time (processes.start_time)
    since: float = 0.0  # wall clock, for people
    restarts: int = 0
    state: str = "starting"  # starting, up, restarting, failed, stopped
    log: str = ""
    port: int = 0


@dataclass
class SiteState:
    name: str
    config: str
    supervisor: int
    supervisor_started: int | None
    since: float
    catalog_url: str = ""
    transport: str = ""
    instance: str = ""
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the certificate the catalog serves HTTPS with ('' for HTTP): what its health checks trust
    tls_cert: str = ""


def state_path(config: SiteConfig) -> Path:
    return config.state_dir / "site.json"


def socket_path(config: SiteConfig) -> Path:
    """The forwarder's socket: in the state dir when its path fits AF_UNIX, else in /tmp."""
    sock = config.state_dir / "fw" / "nfd.sock"
    if len(str(sock)) <= 90:
        return sock
    tag = hashlib.sha256(str(config.state_dir).encode()).hexdigest()[:12]
    return Path(f"/tmp/ndnsci-site-{os.getuid()}-{tag}/nfd.sock")


def running(config: SiteConfig) -> SiteState | None:
    """The state of this site's supervisor when one runs, else None."""
    state = processes.load_state(state_path(config), SiteState, StackError, "site state")
    if state is None or not processes.alive(state.supervisor, "", state.supervisor_started):
        return None
    return state


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (a part and what it started: each part
    runs in a session, hence a group, of its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def kill_group(pgid: int) -> None:
    """SIGKILL what is left of a part's group: a part killed with SIGKILL leaves its own
    children (the catalog's publish preparing process) behind, which nobody else stops."""
    if pgid and group_members(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def already(config: SiteConfig, other: SiteState) -> str:
    """The refusal of a second ``up``, naming the supervisor that runs."""
    return (
        f"site {config.name} is running already: supervisor pid {other.supervisor} (from "
        f"{other.config}, state {state_path(config)}); stop it with "
        f"`ndnsci site down -c {other.config}`"
    )


class _Part:
    def __init__(self, name: str, argv: list[str] | None, ready: Callable[[], bool]) -> None:
        self.name = name
        self.argv = argv  # None: the forwarder, started through ndnsci.ndn.forwarder
        self.ready = ready
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        self.state = PartState()
        self.deaths: list[float] = []
        self.next_start = 0.0


class Supervisor:
    """Runs the site of ``config`` until SIGTERM/SIGINT (:meth:`run`); ``log``: progress lines."""

    def __init__(self, config: SiteConfig, log: IO[str] | None = None) -> None:
        self.config = config
        self.log = log
        self.dir = config.state_dir
        self.parts: list[_Part] = []
        self.instance = uuid.uuid4().hex
        self.catalog_url = ""
        self.transport = ""
        self.sock = socket_path(config)
        self._stop = False
        self._env: dict[str, str] = {}
        self.since = time.time()
        #: why the catalog's last health check failed ('' until one did)
        self.health_said = ""

    def say(self, text: str) -> None:
        if self.log is not None:
            print(f"ndnsci site {self.config.name}: {text}", file=self.log, flush=True)

    # --- the state file ------------------------------------------------------------------------

    def save(self) -> None:
        state = SiteState(
            name=self.config.name,
            config=str(self.config.path),
            supervisor=os.getpid(),
            supervisor_started=processes.start_time(os.getpid()),
            since=self.since,
            catalog_url=self.catalog_url,
            transport=self.transport,
            instance=self.instance,
            parts={p.name: dataclasses.asdict(p.state) for p in self.parts},
            tls_cert=str(self.config.catalog.tls_cert or ""),
        )
        processes.save_state(state_path(self.config), state)

    # --- running ------------------------------------------------------------------------------

    def run(self) -> int:
        """Start, supervise until told to stop, stop; the exit status (0: stopped on request)."""
        other = running(self.config)
        if other is not None:
            raise StackError(already(self.config, other))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.since = time.time()
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            self.start()
            self.say(f"up: catalog {self.catalog_url}, forwarder {self.transport}")
            while not self._stop:
                self.watch()
                time.sleep(POLL)
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 0

    def _on_signal(self, signum: int, frame: Any) -> None:
        self._stop = True

    def start(self) -> None:
        c = self.config
        self._env = {"NDN_CLIENT_TRANSPORT": f"unix://{self.sock}",
                     "XDG_STATE_HOME": str(self.dir / "xdg")}  # fmt: skip
        self._env.update(self._key_env())
        self.transport = self._env["NDN_CLIENT_TRANSPORT"]
        if c.catalog.tls_cert is not None:  # the producers and the gateway trust it alone
            self._env["NDNSCI_CATALOG_CERT"] = str(c.catalog.tls_cert)
        self.parts.append(_Part("forwarder", None, lambda: True))
        port = c.catalog.listen.port or processes.free_port()
        scheme = "https" if c.catalog.tls_cert else "http"
        self.catalog_url = f"{scheme}://{_url_host(c.catalog.listen.host)}:{port}"
        catalog = _Part("catalog", self._catalog_argv(port), self._healthy)
        catalog.state.port = port
        self.parts.append(catalog)
        for index, root in enumerate(c.data):
            name = "producer" if index == 0 else f"producer-{index}"
            log = self.dir / f"{name}.log"
            argv = ["serve", str(root.path), "--catalog", self.catalog_url, "--refresh", "2",
                    "--prefix", c.prefix, "--scheme", root.scheme]  # fmt: skip
            if root.engine == "ndn-dpdk":
                argv += ["--engine", "ndn-dpdk"]
            self.parts.append(_Part(name, argv, processes.log_says(log, " on unix://", " on tcp")))
        if c.transfers.enabled:
            self.parts += self._transfer_parts()
        if c.gateway.enabled:
            gw_port = c.gateway.listen.port or processes.free_port()
            gateway = _Part(
                "gateway",
                ["gateway", "--catalog", self.catalog_url, "--host", c.gateway.listen.host,
                 "--port", str(gw_port)],
                lambda: processes.port_in_use(gw_port),
            )  # fmt: skip
            gateway.state.port = gw_port
            self.parts.append(gateway)
        self.save()
        for part in self.parts:
            if part.name == "catalog":
                self._publish()
            self._launch(part)
            self._wait(part)
            part.state.state = "up"
            self.save()
            self.say(f"{part.name}: up (pid {part.pid})")

    def _transfer_parts(self) -> list[_Part]:
        """The transfer agent (its name fixed per site: a restarted agent takes back at once
        the files it held) and, with ``serve``, a producer of the copies (replicas)."""
        c = self.config
        root = c.transfer_root
        root.mkdir(parents=True, exist_ok=True)
        log = self.dir / "transfers.log"
        agent = _Part(
            "transfers",
            ["transfer", "agent", "--db", c.catalog.db, "--root", str(root),
             "--parallel", str(c.transfers.parallel), "--name", f"site-{c.name}"],
            processes.log_says(log, "transfer agent "),
        )  # fmt: skip
        parts = [agent]
        if c.transfers.serve:
            log = self.dir / "replicas.log"
            argv = ["serve", str(root), "--catalog", self.catalog_url, "--refresh", "2",
                    "--prefix", c.prefix]  # fmt: skip
            parts.append(_Part("replicas", argv, processes.log_says(log, " on unix://", " on tcp")))
        return parts

    def _catalog_argv(self, port: int) -> list[str]:
        """``ndnsci catalog serve`` as the configuration's [catalog] asks (its origins go by
        ``NDNSCI_CORS_ORIGINS``, see :meth:`_launch`)."""
        c = self.config.catalog
        argv = ["catalog", "serve", "--db", c.db, "--host", c.listen.host, "--port", str(port)]
        if c.workers > 1:
            argv += ["--workers", str(c.workers)]
        if c.tls_cert is not None and c.tls_key is not None:
            argv += ["--tls-cert", str(c.tls_cert), "--tls-key", str(c.tls_key)]
        if c.trusted_proxies:
            argv += ["--trusted-proxies", ",".join(c.trusted_proxies)]
        return argv

    def _key_env(self) -> dict[str, str]:
        config = self.dir / "config"
        keys = config / "keys"
        if self.config.key is not None:
            keys.mkdir(parents=True, exist_ok=True)
            link = keys / "default.key"
            with contextlib.suppress(FileNotFoundError):
                link.unlink()
            link.symlink_to(self.config.key)
        else:
            ensure_key(config)
        return {"NDNSCI_CONFIG_DIR": str(config)}

    def _publish(self) -> None:
        for root in self.config.data:
            self.say(f"catalog: publishing {root.path}")
            proc = subprocess.run(
                [sys.executable, "-m", "ndnsci", "publish", str(root.path), "--db",
                 self.config.catalog.db, "--scheme", root.scheme, "--jobs", "2"],
                capture_output=True, text=True, env={**os.environ, **self._env}, timeout=3600,
                check=False,
            )  # fmt: skip
            (self.dir / "publish.log").write_text(proc.stderr)
            if proc.returncode not in (0, 1):  # 1: some files quarantined
                raise StackError(
                    f"publishing {root.path} failed:\n{processes.tail(self.dir / 'publish.log')}"
                )
        self._identify()

    def _identify(self) -> None:
        """Name the catalog's site (once; the same name again is a no-op) and trust the
        configured sites, in the catalog's database before the catalog starts."""
        c = self.config
        db = c.catalog.db
        steps = [["catalog", "site", "init", c.name, "--prefix", c.prefix, "--db", db]]
        steps += [
            ["catalog", "trust", "add", t.name, t.key, "--prefix", t.prefix, "--db", db]
            for t in c.trusted
        ]
        for step in steps:
            proc = subprocess.run(
                [sys.executable, "-m", "ndnsci", *step], capture_output=True, text=True,
                env={**os.environ, **self._env}, timeout=300, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                raise StackError(f"`ndnsci {' '.join(step[:3])}` failed: {proc.stderr.strip()}")

    def _healthy(self) -> bool:
        """The catalog answers /health as the instance started; else why not, kept in
        ``health_said`` for the message of a catalog that never gets ready (a certificate
        its own check refuses, e.g. an expired one, says so there and nowhere else)."""
        import httpx

        try:
            response = _ask_health(self.catalog_url, self.config.catalog.tls_cert, 1.0)
            answer = response.json() if response.is_success else {}
        except (httpx.HTTPError, ValueError) as exc:
            self.health_said = f"{type(exc).__name__}: {exc}"
            return False
        if not isinstance(answer, dict) or answer.get("instance") != self.instance:
            self.health_said = f"{response.status_code}, not the instance started"
            return False
        return True

    def _launch(self, part: _Part) -> None:
        log = self.dir / f"{part.name}.log"
        part.state.log = str(log)
        if part.argv is None:
            from ndnsci.ndn import forwarder

            env = {
                "NDNSCI_FW_UDP_PORT": str(self.config.forwarder.udp_port
                                          or processes.free_port(socket.SOCK_DGRAM)),
                "NDNSCI_FW_WS_PORT": str(self.config.forwarder.ws_port or processes.free_port()),
            }  # fmt: skip
            with contextlib.suppress(ForwarderError, OSError):
                forwarder.stop(self.sock)  # one left by a supervisor that was killed
            try:
                part.pid = forwarder.start(
                    self.sock, extra_env=env, preexec=processes.die_with_parent
                )
            except ForwarderError as exc:
                raise StackError(f"the forwarder did not start: {exc}") from exc
            part.proc = None
            part.state.log = str(self.sock.parent / "ndnd.log")
        else:
            if log.exists() and part.state.restarts:  # the last run's log, kept once
                os.replace(log, log.with_name(log.name + ".1"))
            env = {**os.environ, **self._env, "NDNSCI_INSTANCE": self.instance}
            if part.name == "catalog" and self.config.catalog.allowed_origins:
                env["NDNSCI_CORS_ORIGINS"] = json.dumps(list(self.config.catalog.allowed_origins))
            part.proc = processes.start([sys.executable, "-m", "ndnsci", *part.argv], log, env=env)
            part.pid = part.proc.pid
        part.state.pid = part.pid
        part.state.started = processes.start_time(part.pid)
        part.state.since = time.time()

    def _alive(self, part: _Part) -> bool:
        if part.proc is not None:
            return part.proc.poll() is None
        with contextlib.suppress(ChildProcessError):
            os.waitpid(part.pid, os.WNOHANG)
        return processes.alive(part.pid, "", part.state.started)

    def _wait(self, part: _Part) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not part.ready():
            if not self._alive(part):
                raise StackError(
                    f"the {part.name} exited before it was ready:\n"
                    f"{processes.tail(Path(part.state.log))}"
                )
            if time.monotonic() > deadline or self._stop:
                said = (
                    f" (its health check: {self.health_said})"
                    if part.name == "catalog" and self.health_said
                    else ""
                )
                raise StackError(
                    f"the {part.name} was not ready within {START_TIMEOUT:.0f} s{said}:\n"
                    f"{processes.tail(Path(part.state.log))}"
                )
            time.sleep(0.1)

    def watch(self) -> None:
        """One look at every part: restart the ones that died, once their back-off is over."""
        now = time.monotonic()
        for part in self.parts:
            if part.state.state in ("failed", "stopped"):
                continue
            if part.state.state == "restarting":
                if now >= part.next_start:
                    self._restart(part)
                continue
            if self._alive(part):
                continue
            kill_group(part.pid)  # what it left behind
            part.deaths = [t for t in part.deaths if now - t < GIVE_UP_WINDOW] + [now]
            if len(part.deaths) >= GIVE_UP:
                part.state.state = "failed"
                self.say(f"{part.name}: died {GIVE_UP} times within {GIVE_UP_WINDOW:.0f} s; "
                         f"left down, the rest stay up; see {part.state.log}")  # fmt: skip
            else:
                delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (len(part.deaths) - 1))
                part.state.state = "restarting"
                part.next_start = now + delay
                self.say(f"{part.name}: pid {part.pid} died; restarting in {delay:.0f} s")
            self.save()

    def _restart(self, part: _Part) -> None:
        part.state.restarts += 1
        try:
            self._launch(part)
            self.save()  # the new pid, still "restarting" until it is ready
            self._wait(part)
        except StackError as exc:
            self.say(f"{part.name}: restart failed: {exc}")
            part.state.state = "up"  # the next look counts the death and backs off
            self.save()
            return
        part.state.state = "up"
        self.say(f"{part.name}: restarted (pid {part.pid}, restart {part.state.restarts})")
        self.save()
        if part.name == "forwarder":
            self._reattach()

    def _reattach(self) -> None:
        """After the forwarder restarts, the parts on it (producers, gateway) start again: their
        faces and prefix registrations went with the old one."""
        for other in self.parts:
            if other.proc is None or other.name == "catalog" or other.state.state == "failed":
                continue
            processes.terminate(other.proc, STOP_TIMEOUT)
            kill_group(other.pid)
            other.state.state = "restarting"
            other.deaths.clear()
            self.say(f"{other.name}: restarting on the new forwarder")
            self._restart(other)

    def stop(self) -> None:
        """Stop every part, the last started first; remove the state file."""
        for part in reversed(self.parts):
            if part.proc is not None:
                processes.terminate(part.proc, STOP_TIMEOUT)
                kill_group(part.pid)
            elif part.pid:
                from ndnsci.ndn import forwarder

                with contextlib.suppress(ForwarderError, OSError):
                    forwarder.stop(self.sock)
                processes.stop_pid(part.pid, STOP_TIMEOUT, program="ndnd")
            part.state.state = "stopped"
            self.say(f"{part.name}: stopped")
        self.parts.clear()
        state_path(self.config).unlink(missing_ok=True)


def status(config: SiteConfig) -> dict[str, Any]:
    """What runs, from the state file: each part's pid, state, up-since, restarts and health
    (catalog: /api/v1/health; forwarder: its faces; producer: files served)."""
    state = running(config)
    if state is None:
        return {"site": config.name, "running": False, "parts": {}}
    parts: dict[str, Any] = {}
    for name, raw in state.parts.items():
        part = PartState(**raw)
        alive = processes.alive(part.pid, "", part.started)
        info: dict[str, Any] = {
            "pid": part.pid,
            "state": part.state if alive or part.state != "up" else "down",
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(part.since)),
            "restarts": part.restarts,
            "log": part.log,
        }
        if part.port:
            info["port"] = part.port
        if alive:
            info["health"] = _health(name, state, part)
        parts[name] = info
    return {
        "site": config.name,
        "running": True,
        "supervisor": state.supervisor,
        "catalog_url": state.catalog_url,
        "transport": state.transport,
        "parts": parts,
    }


def _url_host(host: str) -> str:
    """The host of a URL to a server listening on ``host``: an address of every interface is
    asked on loopback, an IPv6 one in brackets."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def _ask_health(url: str, cert: str | os.PathLike[str] | None, timeout: float) -> httpx.Response:
    """``GET /api/v1/health`` of the catalog at ``url``; over https, trusting ``cert`` alone:
    the server must present the certificate it was configured with, self-signed or not."""
    import httpx

    verify: Any = True
    if cert and url.startswith("https://"):
        from ndnsci.base import tls

        verify = tls.pinned(cert)
    return httpx.get(f"{url}/api/v1/health", timeout=timeout, verify=verify)


def _health(name: str, state: SiteState, part: PartState) -> Any:
    if name == "catalog":
        import httpx

        try:
            answer = _ask_health(state.catalog_url, state.tls_cert or None, 2.0)
            if not answer.is_success:
                return {"status": answer.status_code}
            found = answer.json()
            if state.tls_cert:  # asked over https: the server presented that certificate
                found["tls"] = {"cert": state.tls_cert, "verified": True}
            return found
        except (httpx.HTTPError, ValueError) as exc:
            return {"error": str(exc)}
    if name == "forwarder":
        from ndnsci.ndn import forwarder

        try:
            return forwarder.status(Path(state.transport.removeprefix("unix://")))
        except (ForwarderError, OSError) as exc:
            return {"error": str(exc)}
    if name.startswith("producer"):
        for line in reversed(processes.read_log(Path(part.log)).splitlines()):
            if "published files served" in line:
                return {"files": int(line.split(": ", 1)[-1].split()[0])}
        return {}
    return {}


def down(config: SiteConfig) -> bool:
    """Stop the site's supervisor (which stops its parts in order); whether one ran. Parts a
    killed supervisor left behind are stopped from the state file."""
    state = processes.load_state(state_path(config), SiteState, StackError, "site state")
    if state is None:
        return False
    ran = processes.alive(state.supervisor, "", state.supervisor_started)
    if ran:
        processes.stop_pid(state.supervisor, STOP_TIMEOUT * 3, signals=(signal.SIGTERM,))
    for raw in reversed(list(state.parts.values())):
        part = PartState(**raw)
        if processes.alive(part.pid, "", part.started):
            processes.stop_pid(part.pid, STOP_TIMEOUT)
        kill_group(part.pid)
    if processes.alive(state.supervisor, "", state.supervisor_started):
        processes.stop_pid(state.supervisor, STOP_TIMEOUT)
    state_path(config).unlink(missing_ok=True)
    return ran


def logs(config: SiteConfig, part: str | None = None, lines: int = 20) -> dict[str, str]:
    """The end of each part's log (or of ``part``'s), from the state file or the state dir."""
    state = processes.load_state(state_path(config), SiteState, StackError, "site state")
    found: dict[str, Path] = {}
    if state is not None:
        found = {name: Path(raw.get("log", "")) for name, raw in state.parts.items()}
    else:
        found = {p.stem: p for p in sorted(config.state_dir.glob("*.log"))}
    if part is not None:
        if part not in found:
            raise StackError(f"no part {part!r} in site {config.name}: one of " + ", ".join(found))
        found = {part: found[part]}
    return {name: processes.tail(path, lines, prefix="") for name, path in found.items()}


def detach(config: SiteConfig, timeout: float = 300.0) -> SiteState:
    """``site up`` in the background (it outlives this process); returns once every part is
    up, or raises StackError with the end of the supervisor's log."""
    other = running(config)
    if other is not None:
        raise StackError(already(config, other))
    config.state_dir.mkdir(parents=True, exist_ok=True)
    log = config.state_dir / "supervisor.log"
    proc = processes.start(
        [sys.executable, "-m", "ndnsci", "site", "up", "-c", str(config.path)], log, preexec=None
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StackError(f"the supervisor exited ({proc.returncode}):\n{processes.tail(log)}")
        state = running(config)
        if (
            state is not None
            and state.parts
            and all(p.get("state") == "up" for p in state.parts.values())
        ):
            return state
        time.sleep(0.2)
    raise StackError(f"the site was not up within {timeout:.0f} s:\n{processes.tail(log)}")
