"""The local NDNd forwarder: find or build the binary, start it in the background, stop it.

The configuration is ``deploy/forwarder/ndnd.yml`` rendered exactly as
``deploy/forwarder/run.sh`` does (each line ending in ``# env NAME`` takes ``$NAME`` when set),
so the shell script and ``ndnsci forwarder start`` run the same forwarder. Beside the socket
live ``ndnd.yml`` (the rendered config), ``ndnd.pid`` and ``ndnd.log``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ndnsci.base.environment import settings
from ndnsci.errors import ForwarderError, TransportError
from ndnsci.ndn import tlv
from ndnsci.ndn.transport import Face

VERSION = "v1.5.3"
CS_PER_THREAD_MAX = 65535
SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture (5.6+)
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
DEFAULT_THREADS = 2
_ENV_LINE = re.compile(r"# env ([A-Z_0-9]+)[ \t]*$")


def repo_dir() -> Path | None:
    """The source checkout (editable install); None for an installed wheel."""
    here = Path(__file__).resolve().parents[2]
    return here if (here / "deploy" / "forwarder" / "build.sh").exists() else None


def binary(build: bool = False) -> Path:
    """The ndnd binary: ``$NDND``, the one build.sh made, or ``ndnd`` on PATH."""
    explicit = settings().ndnd
    if explicit:
        return Path(explicit)
    repo = repo_dir()
    if repo is not None:
        built = repo / ".cache" / "ndnd" / VERSION / "ndnd"
        if built.exists():
            return built
        if build:
            return _build(repo)
    on_path = shutil.which("ndnd")
    if on_path:
        return Path(on_path)
    raise ForwarderError(
        "no ndnd binary: run deploy/forwarder/build.sh (or `ndnsci forwarder start`, which "
        "builds it), or set NDND=/path/to/ndnd"
    )


def _build(repo: Path) -> Path:
    script = repo / "deploy" / "forwarder" / "build.sh"
    proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        raise ForwarderError(f"building ndnd failed:\n{proc.stderr.strip()}")
    return Path(proc.stdout.strip().splitlines()[-1])


def render_config(template: str, env: dict[str, str]) -> str:
    """``deploy/forwarder/run.sh``'s rendering: ``key: value  # env NAME`` takes ``env[NAME]``."""
    lines = []
    for line in template.splitlines():
        match = _ENV_LINE.search(line)
        if match and env.get(match.group(1)):
            key = line[: line.index(": ")]
            lines.append(f"{key}: {env[match.group(1)]}  # env {match.group(1)}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Paths:
    socket: Path

    @property
    def rundir(self) -> Path:
        return self.socket.parent

    @property
    def pidfile(self) -> Path:
        return self.rundir / "ndnd.pid"

    @property
    def logfile(self) -> Path:
        return self.rundir / "ndnd.log"

    @property
    def config(self) -> Path:
        return self.rundir / "ndnd.yml"


def socket_path(explicit: str | None = None) -> Path:
    """--socket, else the socket of NDN_CLIENT_TRANSPORT when unix://, else the default."""
    if explicit:
        return Path(explicit)
    found = settings()
    if found.transport.startswith("unix://"):
        return Path(found.transport[len("unix://") :])
    return found.fw_sock or found.default_socket


def cs_settings(capacity: int | None) -> dict[str, str]:
    """NDNd's capacity is per forwarding thread (a uint16): spread a total over threads."""
    if capacity is None:
        return {}
    if capacity < 0:
        raise ForwarderError("--cs-capacity must be >= 0")
    threads = max(DEFAULT_THREADS, -(-capacity // CS_PER_THREAD_MAX))
    return {
        "NDNSCI_FW_THREADS": str(threads),
        "NDNSCI_FW_CS_CAPACITY": str(-(-capacity // threads)),
    }


def is_running(sock: Path, timeout: float = 2.0) -> bool:
    try:
        status(sock, timeout)
    except (TransportError, ForwarderError):
        return False
    return True


def status(sock: Path, timeout: float = 2.0) -> dict[str, int | str]:
    """The forwarder's general status (NFD ``status/general`` dataset)."""
    from ndnsci.ndn.consumer import express

    uri = f"unix://{sock}"
    try:
        with Face(uri, connect_timeout=timeout) as face:
            name = tlv.generic("localhost") + tlv.generic("nfd")
            name += tlv.generic("status") + tlv.generic("general")
            wire = tlv.interest(name, int.from_bytes(os.urandom(4), "big"), 1000, True, True)
            answer = express(face, wire, name, timeout)
    except Exception as exc:  # a dead socket file, a timeout: both mean "not running"
        raise ForwarderError(f"no forwarder answers on {sock}: {exc}") from exc
    if isinstance(answer, int):
        raise ForwarderError(f"the forwarder on {sock} refused the status request")
    return _general_status(answer.content)


def _general_status(content: bytes) -> dict[str, int | str]:
    fields = {
        0x80: "version",
        0x81: "start_time_ms",
        0x82: "current_time_ms",
        0x83: "n_name_tree_entries",
        0x84: "n_fib_entries",
        0x85: "n_pit_entries",
        0x86: "n_measurement_entries",
        0x87: "n_cs_entries",
        0x90: "n_in_interests",
        0x97: "n_in_data",
        0x92: "n_out_interests",
        0x98: "n_out_data",
    }
    out: dict[str, int | str] = {}
    for typ, vs, ve in tlv.iter_tlvs(content, 0, len(content)):
        if typ == 0x80:
            out["version"] = content[vs:ve].decode(errors="replace")
        elif typ in fields:
            out[fields[typ]] = tlv.read_nni(content[vs:ve])
    return out


def start(
    sock: Path,
    cs_capacity: int | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = 20.0,
    preexec: Callable[[], None] | None = None,
    *,
    command_prefix: Sequence[str] = (),
) -> int:
    """Start ndnd in the background on ``sock``; returns its pid. Builds ndnd if needed.

    ``preexec`` runs in the child before ndnd starts (``ndnsci up`` ties ndnd's life to its own).
    ``command_prefix`` runs ndnd through another program that execs it, e.g.
    ``["ip", "netns", "exec", NS]`` (``ndnsci testbed``: one forwarder per network namespace).
    """
    paths = Paths(sock)
    if len(str(sock)) > 100:
        raise ForwarderError(f"socket path too long for AF_UNIX: {sock}")
    if is_running(sock):
        raise ForwarderError(f"a forwarder is already running on {sock}")
    repo = repo_dir()
    if repo is None:
        raise ForwarderError("forwarder start needs the source checkout (deploy/forwarder)")
    ndnd = binary(build=True)
    env = {**os.environ, **(extra_env or {}), **cs_settings(cs_capacity)}
    env["NDNSCI_FW_SOCK"] = str(sock)
    paths.rundir.mkdir(parents=True, exist_ok=True)
    os.chmod(paths.rundir, 0o700)
    template = (repo / "deploy" / "forwarder" / "ndnd.yml").read_text()
    config = render_config(template, env)
    _check_websocket_port(config)
    paths.config.write_text(config)
    with open(paths.logfile, "ab") as log:
        proc = subprocess.Popen(
            [*command_prefix, str(ndnd), "fw", "run", str(paths.config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # survives the shell that started it
            env=env,
            preexec_fn=preexec,  # noqa: PLW1509 (the caller's, e.g. one prctl call)
        )
    paths.pidfile.write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ForwarderError(
                f"ndnd exited with {proc.returncode}{_fatal(paths.logfile)}; see {paths.logfile}"
            )
        if sock.exists() and is_running(sock, 1.0):
            return proc.pid
        time.sleep(0.05)
    proc.terminate()
    raise ForwarderError(f"ndnd did not answer on {sock} within {timeout:.0f} s")


def _check_websocket_port(config: str) -> None:
    """ndnd cannot serve browsers on a WebSocket port another process holds (it would stop
    with a FATAL line in its log): say so before starting it."""
    match = re.search(r"^  websocket:\n(?:    .*\n)*?    port: (\d+)", config, re.MULTILINE)
    bind = re.search(r"^  websocket:\n(?:    .*\n)*?    bind: (\S+)", config, re.MULTILINE)
    if match is None or int(match[1]) == 0:
        return
    port, address = int(match[1]), bind[1] if bind else "127.0.0.1"
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((address, port))
        except OSError as exc:
            raise ForwarderError(
                f"the WebSocket port {address}:{port} is not free ({exc.strerror}): another "
                "forwarder? NDNSCI_FW_WS_PORT chooses another port"
            ) from None


def _fatal(log: Path) -> str:
    """``: <why>`` from ndnd's last FATAL log line, if any."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    fatal = [line for line in lines if "level=FATAL" in line]
    return f": {fatal[-1].split('msg=', 1)[-1]}" if fatal else ""


def _pid(paths: Paths) -> int | None:
    try:
        pid = int(paths.pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if b"ndnd" in cmdline else None  # a recycled pid is not ours to kill


def stop(sock: Path, timeout: float = 10.0) -> bool:
    """Stop the forwarder started on ``sock``; False when none was running."""
    paths = Paths(sock)
    pid = _pid(paths)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or _zombie(pid):
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
    paths.pidfile.unlink(missing_ok=True)
    return True


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


# --- UDP receive buffers ---------------------------------------------------------------------


def raise_udp_receive_buffers(pid: int, size: int) -> int:
    """Give every UDP socket of process ``pid`` a receive buffer of ``size`` bytes; returns
    how many sockets were changed.

    NDNd leaves its UDP sockets at the kernel's default buffer (net.core.rmem_default, 208 KiB
    here: about 15 packets of 8 KB), which a forwarder that waits a few milliseconds for a CPU
    overflows. Deployments raise that sysctl for the whole host; the testbed and the native
    plane's link must not touch the host, so they set the buffers of the forwarder's own
    sockets, from outside, on a copy of each descriptor (pidfd_getfd) with SO_RCVBUFFORCE
    (root).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    changed = 0
    pidfd = os.pidfd_open(pid)
    try:
        for entry in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if not os.readlink(f"/proc/{pid}/fd/{entry}").startswith("socket:"):
                    continue
            fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, int(entry), 0)
            if fd < 0:
                continue
            with socket.socket(fileno=fd) as sock:
                if sock.type == socket.SOCK_DGRAM and sock.family in (
                    socket.AF_INET,
                    socket.AF_INET6,
                ):
                    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
                    changed += 1
    finally:
        os.close(pidfd)
    return changed


def udp_owner(port: int) -> int | None:
    """The process holding a UDP socket bound to local ``port`` (this network namespace's
    /proc/net/udp and udp6); None when there is none, or it cannot be told."""
    inodes: set[str] = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(fields[9])
    wanted = {f"socket:[{inode}]" for inode in inodes if inode != "0"}
    if not wanted:
        return None
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in wanted:
                        return int(pid)
    return None
