"""``ndnsci xrootd up|down|status``: an XRootD server that reads files by NDN name.

The server is Debian's ``xrootd`` with NDNc's storage plugin (``libXrdNdnOss``, built and
patched by deploy/xrootd/build.sh) and the configuration ``deploy/xrootd/xrootd-ndn.cfg``: with
the prefix ``/CMS`` the CMS logical file name is the path, so

    xrdcp root://HOST:1094//store/mc/.../F.root .

reads the NDN name ``/CMS/store/mc/.../F.root`` (the name ``ndnsci publish`` gives that LFN)
from whichever producer serves it: ``ndnsci serve --engine ndn-dpdk`` on the NDN-DPDK
forwarder, or any producer NDNd reaches (``ndnsci serve``, another site), through the plane's
link to NDNd.

The plugin reaches NDN only through the **NDN-DPDK forwarder**: it makes itself a memif face
through the forwarder's GraphQL server (the socket is ``/run/ndn/ndnc-memif-<pid>-<time>.sock``).
NDNd has no memif faces, so ``--engine ndnd`` is refused (see :data:`NDND_REFUSAL`); the plane
must be up (``ndnsci native up``).

XRootD refuses to run as root: started by root, the server runs as the user ``xrootd`` (Debian's
package makes it), and its folder (:func:`run_dir`) belongs to that user. What ``up`` started is
recorded in ``<run>/state.json``; ``down`` stops the server and deletes the plugin's face from
the forwarder (the plugin leaves it behind when it is stopped) and its socket. ``ndnsci native
down`` stops the server too: without the forwarder its pipeline is closed for good.

``--local-root DIR`` serves a local directory with XRootD's own storage system instead, same
settings otherwise (no plane needed): the bench's "plain XRootD" baseline.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ndnsci.base import processes
from ndnsci.errors import NativePlaneError
from ndnsci.native import gql, install
from ndnsci.native.plane import NDNC_SOCKET_DIR, Plane, tail

XROOTD_USER = "xrootd"  # Debian's xrootd-server package makes it
DEFAULT_PORT = 1094
READY_SECONDS = 30.0
STOP_SECONDS = 10.0
CMS_PREFIX = "/CMS"
NDND_REFUSAL = (
    "NDNc's XRootD storage plugin reaches NDN only through the NDN-DPDK forwarder, over a memif "
    "face it makes through the forwarder's GraphQL server; NDNd has no memif faces (and the "
    "plugin no other transport), so an XRootD server on NDNd alone is not supported. Use "
    "--engine ndn-dpdk (`ndnsci native up` first): the plane's forwarder is linked to NDNd, so "
    "every name NDNd reaches (`ndnsci serve`, other sites) is read through it."
)


def run_dir() -> Path:
    """The server's folder: ``$NDNSCI_XROOTD_RUN``, else ``/run/ndnsci/xrootd``. The server's
    user must be able to reach it (every parent searchable by others)."""
    from ndnsci.base.environment import settings

    return settings().xrootd_run


def config_file() -> Path:
    """``deploy/xrootd/xrootd-ndn.cfg`` of the source checkout."""
    from ndnsci.ndn.forwarder import repo_dir

    repo = repo_dir()
    if repo is None:
        raise NativePlaneError(
            "ndnsci xrootd needs the source checkout (deploy/xrootd/xrootd-ndn.cfg)"
        )
    return repo / "deploy" / "xrootd" / "xrootd-ndn.cfg"


@dataclass
class Settings:
    """What the server is started with (``NDNSCI_XRD_*`` of xrootd-ndn.cfg)."""

    port: int = DEFAULT_PORT
    prefix: str = CMS_PREFIX
    cc: str = "aimd"  # the plugin's pipelineType: aimd or fixed
    window: int = 1024  # pipelineSize: aimd's largest window, fixed's window
    lifetime_ms: int = 4000
    mtu: int = 9000  # memif dataroom (the plane's)
    local_root: str | None = None  # serve this directory from the disk instead
    trace_aio: bool = False  # log each asynchronous read (ofs_aioread lines; verbose)

    def check(self) -> None:
        if not 1 <= self.port <= 65535:
            raise ValueError(f"port {self.port}: not a TCP port")
        if self.cc not in ("aimd", "fixed"):
            raise ValueError(f"congestion control {self.cc!r}: aimd or fixed")
        if not 1 <= self.window <= 65536:
            raise ValueError(f"window {self.window}: 1..65536")
        if not 100 <= self.lifetime_ms <= 60000:
            raise ValueError(f"Interest lifetime {self.lifetime_ms} ms: 100..60000")
        if not 64 <= self.mtu <= 9000:
            raise ValueError(f"MTU {self.mtu}: 64..9000")
        if not self.prefix.startswith("/") or any(c.isspace() for c in self.prefix):
            raise ValueError(f"prefix {self.prefix!r}: an NDN name URI without spaces")
        if self.local_root is not None and not os.path.isdir(self.local_root):
            raise ValueError(f"--local-root {self.local_root}: not a directory")


@dataclass
class State:
    """What ``up`` started (``down`` undoes whatever is here)."""

    pid: int = 0
    user: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    gqlserver: str | None = None  # the forwarder the plugin uses (None: local disk)
    faces: list[str] = field(default_factory=list)  # the plugin's memif faces
    log: str = ""
    started: float = 0.0

    @property
    def port(self) -> int:
        return int(self.settings.get("port", DEFAULT_PORT))

    @property
    def url(self) -> str:
        return f"root://127.0.0.1:{self.port}/"


class XrootdServer:
    """The server recorded in ``run`` (default :func:`run_dir`), on ``plane``."""

    def __init__(self, run: Path | None = None, plane: Plane | None = None) -> None:
        self.run = run or run_dir()
        self.plane = plane or Plane()
        self.state_file = self.run / "state.json"

    # --- state -------------------------------------------------------------------------------

    def load(self) -> State | None:
        return processes.load_state(self.state_file, State, NativePlaneError, "XRootD state")

    def _save(self, state: State) -> None:
        processes.save_state(self.state_file, state)

    def is_up(self) -> bool:
        state = self.load()
        return state is not None and _alive(state.pid)

    # --- up ----------------------------------------------------------------------------------

    def up(self, settings: Settings, preexec: Callable[[], None] | None = None) -> State:
        """Start the server and wait until it answers on its port (and, on NDN, until the
        plugin's face is on the forwarder). On failure nothing is left running.

        Raises:
            ValueError: a setting is out of range.
            NativePlaneError: XRootD or the plugin is missing, the plane is down, the port is
                taken, the server's user cannot use the folder, or the server did not start
                (with the end of its log).
        """
        settings.check()
        xrootd = shutil.which("xrootd")
        if xrootd is None:
            raise NativePlaneError(
                "XRootD is not installed (no xrootd on PATH): deploy/xrootd/install.sh "
                "(`make system`) installs Debian's xrootd-server and xrootd-client"
            )
        current = self.load()
        if current is not None:
            if _alive(current.pid):
                raise NativePlaneError(
                    f"an XRootD server already runs ({current.url}, pid {current.pid}): "
                    "`ndnsci xrootd down` first"
                )
            self.down()  # a stale record (a crash, a reboot): clean up what it left
        env = {
            "NDNSCI_XRD_PORT": str(settings.port),
            "NDNSCI_XRD_PREFIX": settings.prefix,
            "NDNSCI_XRD_PIPELINE": settings.cc,
            "NDNSCI_XRD_WINDOW": str(settings.window),
            "NDNSCI_XRD_LIFETIME": str(settings.lifetime_ms),
            "NDNSCI_XRD_MTU": str(settings.mtu),
        }
        if settings.trace_aio:
            env["NDNSCI_XRD_TRACEAIO"] = "1"
        gqlserver: str | None = None
        if settings.local_root is not None:
            env["NDNSCI_XRD_LOCALROOT"] = os.path.realpath(settings.local_root)
        else:
            plugin = install.require_xrootd_ndn()
            plane = self.plane.load()
            if plane is None or not self.plane.is_up():
                raise NativePlaneError(
                    "the XRootD server reads NDN through the NDN-DPDK forwarder, which is not "
                    "up: `ndnsci native up` first"
                )
            gqlserver = plane.layout.forwarder.url
            env["NDNSCI_XRD_OSSLIB"] = str(plugin.prefix / "lib" / "libXrdNdnOss.so")
            env["NDNSCI_XRD_GQLSERVER"] = gqlserver
            NDNC_SOCKET_DIR.mkdir(parents=True, exist_ok=True)
        _require_free(settings.port)
        user = self._prepare_run()
        admin = self.run / "admin"
        env["NDNSCI_XRD_RUN"] = str(admin)
        config = self.run / "xrootd-ndn.cfg"
        shutil.copyfile(config_file(), config)
        logfile = self.run / "xrootd.log"
        command = [xrootd, "-c", str(config), "-l", str(logfile)]
        if user:
            command[1:1] = ["-R", user]
        state = State(
            user=user or pwd.getpwuid(os.geteuid()).pw_name,
            settings=asdict(settings),
            gqlserver=gqlserver,
            log=str(logfile),
            started=time.time(),
        )
        proc = processes.start(  # in a session of its own: it outlives `ndnsci xrootd up`
            command,
            self.run / "stdout.log",
            env={**os.environ, **env},
            cwd=self.run,
            preexec=preexec,
            append=True,
        )
        state.pid = proc.pid
        self._save(state)
        try:
            self._wait_ready(proc, state, logfile)
        except BaseException:
            self.down()
            raise
        if gqlserver is not None:  # `ndnsci native down` stops it too
            sockets = [str(p) for p in NDNC_SOCKET_DIR.glob(f"ndnc-memif-{state.pid}-*.sock")]
            self.plane.register_client(f"xrootd-{state.port}", state.pid, "xrootd", sockets)
        return state

    def _prepare_run(self) -> str | None:
        """Make the folder; the user the server runs as when we are root (else None: us)."""
        self.run.mkdir(parents=True, exist_ok=True)
        (self.run / "admin").mkdir(exist_ok=True)
        if os.geteuid() != 0:
            return None
        try:
            account = pwd.getpwnam(XROOTD_USER)
        except KeyError:
            raise NativePlaneError(
                f"XRootD refuses to run as root and there is no user {XROOTD_USER!r} to run it "
                "as (Debian's xrootd-server package makes it: deploy/xrootd/install.sh)"
            ) from None
        for path in (self.run, self.run / "admin"):
            os.chown(path, account.pw_uid, account.pw_gid)
        probe = subprocess.run(
            ["runuser", "-u", XROOTD_USER, "--", "test", "-w", str(self.run / "admin")],
            check=False,
        )
        if probe.returncode != 0:
            raise NativePlaneError(
                f"the server runs as {XROOTD_USER!r}, who cannot write {self.run / 'admin'} "
                "(is every parent folder searchable by others?): set NDNSCI_XROOTD_RUN"
            )
        return XROOTD_USER

    def _wait_ready(self, proc: subprocess.Popen[bytes], state: State, logfile: Path) -> None:
        said = processes.log_says(logfile, f":{state.port} initialization completed")
        try:
            processes.wait_ready(proc, lambda: said() and _answers(state.port), READY_SECONDS)
        except processes.NotReady as exc:
            if exc.returncode is not None:
                raise NativePlaneError(
                    f"xrootd exited with {exc.returncode}{_why(logfile)}; see {logfile}\n"
                    f"{tail(logfile)}"
                ) from None
            raise NativePlaneError(
                f"xrootd did not answer on port {state.port} within {READY_SECONDS:.0f} s; "
                f"see {logfile}\n{tail(logfile)}"
            ) from None
        if state.gqlserver is not None:
            state.faces = _plugin_faces(state.gqlserver, state.pid)
            if not state.faces:
                raise NativePlaneError(
                    f"xrootd started but its NDN plugin has no face on the forwarder at "
                    f"{state.gqlserver}; see {logfile}"
                )
        self._save(state)

    # --- down --------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Stop the server and delete the plugin's face and socket; what could not be done
        (empty: all)."""
        state = self.load()
        if state is None:
            return []
        problems: list[str] = []
        if state.pid and _alive(state.pid):
            with _collect(problems, "xrootd"):
                _stop(state.pid)
        if state.gqlserver is not None:
            with _collect(problems, "the plugin's face"):
                _delete_faces(state.gqlserver, state.pid, state.faces)
            for sock in NDNC_SOCKET_DIR.glob(f"ndnc-memif-{state.pid}-*.sock"):
                with contextlib.suppress(OSError):
                    sock.unlink()
        if not problems:
            self.state_file.unlink(missing_ok=True)
        return problems

    # --- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        state = self.load()
        if state is None:
            return {"up": False}
        out: dict[str, Any] = {
            "up": _alive(state.pid),
            "url": state.url,
            "pid": state.pid,
            "user": state.user,
            "engine": "local" if state.gqlserver is None else "ndn-dpdk",
            "forwarder": state.gqlserver,
            "faces": state.faces,
            "settings": state.settings,
            "log": state.log,
            "run": str(self.run),
        }
        return out


def _alive(pid: int | None) -> bool:
    """Whether ``pid`` is a running XRootD server."""
    return processes.alive(pid, "xrootd")


def _stop(pid: int) -> None:
    """SIGTERM (XRootD exits at once), then SIGKILL."""
    if not processes.stop_pid(pid, STOP_SECONDS / 2, program="xrootd"):
        raise NativePlaneError(f"xrootd (pid {pid}) does not stop")


def _plugin_faces(gqlserver: str, pid: int) -> list[str]:
    """The memif faces the plugin of server ``pid`` made (NDNc names the socket after its
    pid). The plugin makes its face during start-up, before XRootD says it is ready."""
    with gql.Client(gqlserver, timeout=5) as fw:
        return sorted(
            face["id"]
            for face in fw.faces()
            if face["locator"].get("scheme") == "memif"
            and f"/ndnc-memif-{pid}-" in str(face["locator"].get("socketName", ""))
        )


def _delete_faces(gqlserver: str, pid: int, recorded: list[str]) -> None:
    """Delete the plugin's faces (stopped by a signal, NDNc does not)."""
    try:
        faces = set(recorded) | set(_plugin_faces(gqlserver, pid))
    except NativePlaneError:
        return  # the forwarder is gone, and the faces with it
    with gql.Client(gqlserver, timeout=5) as fw:
        for face in sorted(faces):
            with contextlib.suppress(gql.GraphQLError):  # already gone
                fw.delete(face)


def _require_free(port: int) -> None:
    with socket.socket(socket.AF_INET6 if socket.has_ipv6 else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError as exc:
            raise NativePlaneError(
                f"port {port} is not free ({exc.strerror}): another XRootD server? "
                "--port chooses another"
            ) from None


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
        return True
    return False


def _why(logfile: Path) -> str:
    """``: <why>`` for the failures a user can act on."""
    text = processes.read_log(logfile)
    if "unable to init consumer" in text or "createFace" in text:
        return (
            ": the NDN plugin could not make its face on the NDN-DPDK forwarder (is the plane "
            "up? `ndnsci native status`)"
        )
    if "Unable to bind" in text or "Address already in use" in text:
        return ": its port is taken"
    if "Plugin version" in text or "version mismatch" in text.lower():
        return ": the plugin was built for another XRootD version (`make native` rebuilds it)"
    return ""


@contextlib.contextmanager
def _collect(problems: list[str], what: str) -> Any:
    try:
        yield
    except (NativePlaneError, OSError) as exc:
        problems.append(f"{what}: {exc}")
