"""``ndnsci native up|down|status``: the NDN-DPDK plane on this machine.

``up`` reserves hugepages, starts two ``ndndpdk-svc`` instances and wires them:

- the **forwarder** (GraphQL on ``base_port``), the hub;
- the **fetcher** (``base_port + 1``), a traffic generator whose fetcher reaches the forwarder
  through a memif face (the forwarder is the memif server, as NDN-DPDK recommends);
- a **link to NDNd**: a veth pair, one end an AF_PACKET Ethernet port of the forwarder with a
  UDP face (``udpe``) on it, the other end a link-local IPv4 address (169.254/16, ``scope link``:
  never a private range, never routed off the machine) where NDNd gets a UDP face towards the
  forwarder. The forwarder's default route (``/``) points at NDNd, so everything NDNd reaches
  (``ndnsci serve``, other sites) the native fetcher reaches too; NDNd gets a route to the
  forwarder for each prefix the NDN-DPDK file server serves, so ``ndnd cat``, the Python plane
  and the portal's NDNts reach it.

The **file server** (``base_port + 2``) is started by ``ndnsci serve --engine ndn-dpdk``
(:mod:`ndnsci.native.serve`), which knows the mounts, through :meth:`Plane.start_fileserver`.
A plane has one file server, and several ``ndnsci serve`` may share it: each registers its
mounts under its pid (an *owner*), and the file server serves the union of the live owners'
mounts. A change of that union (an owner comes, goes, or dies) restarts it with the new union;
whichever owner notices first does it (:meth:`Plane.keep_fileserver`), under the plane's lock.

Everything ``up`` did is recorded in ``<run>/state.json`` (``$NDNSCI_NATIVE_RUN``, else
``/run/ndnsci/native``) as it happens, so ``down`` (any process, after any failure) undoes it:
stops the instances, deletes the veth pair and NDNd's face, gives the hugepages back.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ndnsci.base import processes
from ndnsci.errors import NativePlaneError, TransportError
from ndnsci.native import gql, hugepages, install
from ndnsci.native.layout import Instance, Layout, memif

log = logging.getLogger(__name__)

VETH_DPDK = "ndnsci-dp0"  # the forwarder's end (an AF_PACKET port)
VETH_NDND = "ndnsci-nd0"  # NDNd's end (a kernel interface with an address)
# .1 NDNd's end, .2 the forwarder's UDP face: a /30 of IPv4 link-local space (RFC 3927), which
# routers do not forward, so nothing of the link can be reached from off the machine (issue 29)
LINK_NET = "169.254.212"
LINK_PREFIX = 30
NDN_UDP_PORT = 6363
# Standard frames on the veth: DPDK 24.11's AF_PACKET driver caps frames at 1518 bytes
# (max_rx_pktlen = RTE_ETHER_MAX_LEN), so each 8 KB Data crosses in 6 NDNLPv2 fragments
# (NDNd and NDN-DPDK both fragment and reassemble). The UDP payload is at most 1472 bytes.
LINK_MTU = 1500
NDND_FACE_MTU = LINK_MTU - 28
# NDNd's UDP sockets on the link: the kernel's default buffer (208 KiB) holds a few dozen of
# those fragments (about a dozen Data), less than one window's burst (see _raise_ndnd_buffers)
NDND_UDP_BUFFER = 16 << 20
START_SECONDS = 60.0
# how long a forwarder busy with a transfer may take to answer before the plane is taken for
# down by what restarts a part of it (a file server that died mid-transfer: CI saw 60 s pass)
BUSY_SECONDS = 15.0
STOP_SECONDS = 15.0
NDNC_SOCKET_DIR = Path("/run/ndn")  # NDNc puts its memif sockets there (mgmt/client.cpp)
CLIENTS_DIR = "clients"  # in the run folder: processes to stop at down (register_client)


def run_dir() -> Path:
    from ndnsci.base.environment import settings

    return settings().native_run


@dataclass
class State:
    """What ``up`` made (recorded as it is made; ``down`` undoes whatever is here)."""

    base_port: int = 3030
    cpus: int = 0
    pids: dict[str, int] = field(default_factory=dict)
    hugepages_added: int = 0  # 2 MB pages added to vm.nr_hugepages (given back at down)
    veth: bool = False
    ndnd_socket: str | None = None
    ndnd_face: int | None = None
    ndnd_routes: list[str] = field(default_factory=list)
    link_face: str | None = None  # the forwarder's UDP face towards NDNd
    fetcher_face: str | None = None
    trafficgen: str | None = None  # the fetcher instance's traffic generator
    fetcher: str | None = None  # the fetcher's GraphQL id
    fileserver_face: str | None = None
    fileserver_prefixes: list[str] = field(default_factory=list)
    fileserver_fib: list[str] = field(default_factory=list)
    fileserver_mounts: list[dict[str, str]] = field(default_factory=list)  # what it serves
    # pid (as a string: JSON) of each ndnsci serve sharing the file server -> its mounts
    fileserver_owners: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    ready: bool = False  # up finished: until then nobody else may act on the plane

    @property
    def layout(self) -> Layout:
        return Layout.for_machine(self.cpus or None, self.base_port)


@dataclass
class Client:
    """A process to stop at ``down`` (:meth:`Plane.register_client`), recorded beside the state."""

    pid: int
    program: str  # a word of its command line: a recycled pid is left alone
    sockets: list[str] = field(default_factory=list)


class Plane:
    """The plane recorded in ``run`` (default :func:`run_dir`)."""

    def __init__(self, run: Path | None = None) -> None:
        self.run = run or run_dir()
        self.state_file = self.run / "state.json"
        self._lock_depth = 0
        self._lock_fd = -1

    @contextlib.contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Hold the plane's lock (``<run>/state.lock``, reentrant) for a read-modify-write of
        the state: ``native up`` and ``ndnsci serve`` restarting its file server run in
        different processes, and one's save must not undo the other's."""
        if self._lock_depth == 0:
            self.run.mkdir(parents=True, exist_ok=True)
            self._lock_fd = os.open(self.run / "state.lock", os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0:
                os.close(self._lock_fd)  # releases the lock
                self._lock_fd = -1

    # --- state -------------------------------------------------------------------------------

    def load(self) -> State | None:
        return processes.load_state(self.state_file, State, NativePlaneError, "plane state")

    def _save(self, state: State) -> None:
        processes.save_state(self.state_file, state)

    def is_up(self, timeout: float = 2.0) -> bool:
        """Whether the plane is up: its forwarder runs and answers within ``timeout`` seconds
        (a forwarder busy with a transfer on a loaded machine may take more than the default
        2 s; what restarts parts of the plane waits longer than what merely looks)."""
        state = self.load()
        if state is None or not state.ready or not _alive(state.pids.get("forwarder")):
            return False
        try:
            with gql.Client(state.layout.forwarder.url, timeout=timeout) as fw:
                fw.version()
        except NativePlaneError:
            return False
        return True

    # --- up ----------------------------------------------------------------------------------

    def up(
        self,
        ndnd_socket: Path | None,
        layout: Layout | None = None,
        preexec: Callable[[], None] | None = None,
    ) -> State:
        """Start the forwarder and the fetcher and link the forwarder to NDNd (``ndnd_socket``;
        None: no link). On any failure everything done so far is undone.

        Raises:
            NativePlaneError: not built, already up, hugepages not available, an instance
                did not start or refused its configuration (the message quotes its log).
        """
        build = install.require_ndn_dpdk()
        with self._exclusive():
            if self.load() is not None:
                if self.is_up():
                    raise NativePlaneError(f"the native plane is already up ({self.state_file})")
                self.down()  # what a crashed plane left behind
            layout = layout or Layout.for_machine()
            state = State(base_port=layout.forwarder.port, cpus=layout.cpus)
            self._save(state)
            try:
                fw = self._start(build, layout.forwarder, state, preexec)
                fw.activate("forwarder", layout.forwarder_args())
                if ndnd_socket is not None:
                    self._link(fw, ndnd_socket, state)
                self._start_fetcher(build, layout, fw, state, preexec)
            except BaseException:
                with contextlib.suppress(Exception):
                    self.down()
                raise
            state.ready = True
            self._save(state)
        return state

    def _start(
        self,
        build: install.Build,
        instance: Instance,
        state: State,
        preexec: Callable[[], None] | None,
    ) -> gql.Client:
        """Reserve its hugepages, start one ndndpdk-svc, wait until its GraphQL server answers.

        The pages are made free just before the instance starts and it claims them at once
        (``preallocateMem``): free hugepages do not stay free for long on a machine where
        PostgreSQL runs (it maps what it finds)."""
        self.run.mkdir(parents=True, exist_ok=True)
        reservation = hugepages.reserve(instance.hugepages)
        state.hugepages_added += reservation.added
        self._save(state)
        logfile = self.run / f"{instance.role}.log"
        proc = processes.start(
            [str(build.bin("ndndpdk-svc")), "--gqlserver", instance.url],
            logfile,
            preexec=preexec,
            append=True,
        )
        state.pids[instance.role] = proc.pid
        self._save(state)
        client = gql.Client(instance.url)
        try:
            client.wait_ready(START_SECONDS, alive=lambda: proc.poll() is None)
        except NativePlaneError as exc:
            raise NativePlaneError(
                f"ndndpdk-svc ({instance.role}) did not start: {exc}\n{tail(logfile)}"
            ) from exc
        return _Activating(client, instance.role, logfile)

    def _start_fetcher(
        self,
        build: install.Build,
        layout: Layout,
        fw: gql.Client,
        state: State,
        preexec: Callable[[], None] | None,
    ) -> None:
        sock = str(self.run / "fetcher.sock")
        state.fetcher_face = fw.create_face(memif(sock, "server")).id
        self._save(state)
        fetcher = self._start(build, layout.fetcher, state, preexec)
        fetcher.activate("trafficgen", layout.fetcher_args())
        state.trafficgen, state.fetcher = fetcher.start_fetcher(
            memif(sock, "client"), layout.fetcher_config()
        )
        self._save(state)

    def _link(self, fw: gql.Client, ndnd_socket: Path, state: State) -> None:
        """The veth pair, the forwarder's UDP face on it, NDNd's face back, the default route."""
        from ndnsci.ndn import control
        from ndnsci.ndn.transport import Face

        _ip("link", "del", VETH_DPDK, check=False)  # a leftover of a killed plane
        _ip("link", "add", VETH_DPDK, "type", "veth", "peer", "name", VETH_NDND)
        state.veth = True
        self._save(state)
        for dev in (VETH_DPDK, VETH_NDND):
            _sysctl(f"net.ipv6.conf.{dev}.disable_ipv6", "1")  # no router solicitations
            _ip("link", "set", dev, "mtu", str(LINK_MTU), "up")
        _ip("addr", "add", f"{LINK_NET}.1/{LINK_PREFIX}", "scope", "link", "dev", VETH_NDND)
        port = fw.create_eth_port("AF_PACKET", VETH_DPDK, LINK_MTU)
        # the forwarder answers no ARP: NDNd's end learns its address statically
        _ip("neigh", "replace", f"{LINK_NET}.2", "lladdr", port.mac, "dev", VETH_NDND)
        ndnd_mac = Path(f"/sys/class/net/{VETH_NDND}/address").read_text().strip()
        state.ndnd_socket = str(ndnd_socket)
        try:
            with Face(f"unix://{ndnd_socket}") as face:
                created = control.command(
                    face,
                    "faces",
                    "create",
                    accept=(409,),
                    uri=f"udp4://{LINK_NET}.2:{NDN_UDP_PORT}".encode(),
                    mtu=NDND_FACE_MTU,
                )
        except TransportError as exc:
            raise NativePlaneError(f"NDNd at {ndnd_socket} refused a face: {exc}") from exc
        if created.face_id is None:
            raise NativePlaneError(f"NDNd at {ndnd_socket} created a face without saying its id")
        state.ndnd_face = created.face_id
        self._save(state)
        ndnd_port = _udp_port(created.local_uri, ndnd_socket)
        _raise_ndnd_buffers(ndnd_port)
        state.link_face = fw.create_face(
            {
                "scheme": "udpe",
                "port": port.id,
                "local": port.mac,
                "remote": ndnd_mac,
                "localIP": f"{LINK_NET}.2",
                "remoteIP": f"{LINK_NET}.1",
                "localUDP": NDN_UDP_PORT,
                "remoteUDP": ndnd_port,
                "mtu": NDND_FACE_MTU,  # the NDN packet inside IPv4 + UDP
            }
        ).id
        self._save(state)
        fw.insert_fib("/", [state.link_face])

    # --- the file server (ndnsci serve --engine ndn-dpdk) -------------------------------------

    def start_fileserver(
        self,
        mounts: list[dict[str, str]],
        preexec: Callable[[], None] | None = None,
        owner: int | None = None,
    ) -> None:
        """Serve ``mounts`` (NDN-DPDK mount entries) for ``owner`` (a pid, default this
        process's): they replace what ``owner`` served before, and the file server is (re)started
        with the union of every live owner's mounts, its prefixes routed to it on the forwarder
        and on NDNd. The file server dies with the process that started it last (``preexec``).

        Raises:
            NativePlaneError: the plane is not up; a prefix is already served from another
                folder by another owner; more mounts than the file server takes; the file
                server did not start.
        """
        with self._exclusive():
            self._serve_for(self._require_up(), mounts, preexec, owner)

    def keep_fileserver(
        self,
        mounts: list[dict[str, str]],
        preexec: Callable[[], None] | None = None,
        owner: int | None = None,
    ) -> bool:
        """What :meth:`start_fileserver` does, when the plane is up (False when not), and
        nothing when the file server runs with every live owner's mounts already: called
        again and again, it starts the file server again when it died, registers ``mounts``
        again on a plane that restarted, and restarts the file server without an owner that
        stopped or died."""
        with self._exclusive():
            state = self.load()
            if state is None or not state.ready or not self.is_up(BUSY_SECONDS):
                return False
            self._serve_for(state, mounts, preexec, owner)
            return True

    def _serve_for(
        self,
        state: State,
        mounts: list[dict[str, str]],
        preexec: Callable[[], None] | None,
        owner: int | None,
    ) -> None:
        owner = os.getpid() if owner is None else owner
        others = _live_owners(state, exclude=owner)
        _check_mounts(mounts, others)
        state.fileserver_owners = {**others, str(owner): list(mounts)}
        self._save(state)
        self._reconcile_fileserver(state, preexec)

    def _reconcile_fileserver(self, state: State, preexec: Callable[[], None] | None) -> None:
        owners = _live_owners(state)
        if owners != state.fileserver_owners:
            state.fileserver_owners = owners
            self._save(state)
        wanted = _union(owners)
        running = _alive(state.pids.get("fileserver"))
        if running and state.fileserver_mounts == wanted:
            return
        if running:
            log.info("the file server's mounts change: %s", [m["prefix"] for m in wanted])
        elif "fileserver" in state.pids:
            log.warning("the file server stopped; starting it again")
        if "fileserver" in state.pids:
            self._stop_fileserver()
            state = self._require_up()
        if wanted:
            self._start_fileserver(state, wanted, preexec)

    def _start_fileserver(
        self, state: State, mounts: list[dict[str, str]], preexec: Callable[[], None] | None
    ) -> None:
        build = install.require_ndn_dpdk()
        layout = state.layout
        sock = str(self.run / "fileserver.sock")
        with gql.Client(layout.forwarder.url) as fw:
            state.fileserver_face = fw.create_face(memif(sock, "server")).id
            state.fileserver_prefixes = [m["prefix"] for m in mounts]
            self._save(state)
            server = self._start(build, layout.fileserver, state, preexec)
            server.activate("fileserver", layout.fileserver_args(memif(sock, "client"), mounts))
            for prefix in state.fileserver_prefixes:
                state.fileserver_fib.append(fw.insert_fib(prefix, [state.fileserver_face]))
                self._save(state)
        self._route_ndnd(state, state.fileserver_prefixes)
        state.fileserver_mounts = mounts  # serving: until then a retry starts it anew
        self._save(state)

    def _route_ndnd(self, state: State, prefixes: list[str]) -> None:
        if state.ndnd_socket is None or state.ndnd_face is None:
            return
        from ndnsci.ndn import control
        from ndnsci.ndn import name as ndnname
        from ndnsci.ndn.transport import Face

        with Face(f"unix://{state.ndnd_socket}") as face:
            for prefix in prefixes:
                control.command(
                    face,
                    "rib",
                    "register",
                    name=ndnname.from_uri(prefix),
                    face_id=state.ndnd_face,
                    origin=control.ORIGIN_STATIC,
                    cost=0,
                )
                state.ndnd_routes.append(prefix)
                self._save(state)

    def _unroute_ndnd(self, state: State) -> None:
        if state.ndnd_socket is None or state.ndnd_face is None or not state.ndnd_routes:
            return
        from ndnsci.ndn import control
        from ndnsci.ndn import name as ndnname
        from ndnsci.ndn.transport import Face

        with contextlib.suppress(TransportError), Face(f"unix://{state.ndnd_socket}") as face:
            for prefix in list(state.ndnd_routes):
                control.command(
                    face,
                    "rib",
                    "unregister",
                    accept=(404,),
                    name=ndnname.from_uri(prefix),
                    face_id=state.ndnd_face,
                    origin=control.ORIGIN_STATIC,
                )
                state.ndnd_routes.remove(prefix)
        self._save(state)

    def fileserver_running(self) -> bool:
        state = self.load()
        return state is not None and _alive(state.pids.get("fileserver"))

    def stop_fileserver(self, owner: int | None = None) -> bool:
        """``owner`` (default this process) serves nothing any more: the file server stops, or,
        when other owners remain, stops for one of them to start it again with their mounts
        (:meth:`keep_fileserver`: the file server dies with the process that started it, and
        ``owner`` may be leaving). False when no file server was running."""
        owner = os.getpid() if owner is None else owner
        with self._exclusive():
            state = self.load()
            if state is None:
                return False
            if state.fileserver_owners.pop(str(owner), None) is not None:
                self._save(state)
            return self._stop_fileserver()

    def _stop_fileserver(self) -> bool:
        state = self.load()
        if state is None or "fileserver" not in state.pids:
            return False
        self._unroute_ndnd(state)
        with (
            contextlib.suppress(NativePlaneError),
            gql.Client(state.layout.forwarder.url, timeout=5) as fw,
        ):
            for entry in state.fileserver_fib:
                fw.delete(entry)
            if state.fileserver_face:
                fw.delete(state.fileserver_face)
        _stop(state.layout.fileserver, state.pids.pop("fileserver"))
        state.fileserver_face, state.fileserver_prefixes, state.fileserver_fib = None, [], []
        state.fileserver_mounts = []
        self._save(state)
        return True

    def _require_up(self) -> State:
        state = self.load()
        if state is None or not self.is_up(BUSY_SECONDS):
            raise NativePlaneError("the native plane is not up: run `ndnsci native up` first")
        return state

    # --- down --------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Undo everything the state records; what could not be undone (empty: all)."""
        with self._exclusive():
            return self._down()

    def _down(self) -> list[str]:
        state = self.load()
        if state is None:
            return []
        problems: list[str] = []
        layout = state.layout
        with _collect(problems, "clients"):
            self._stop_clients()
        with _collect(problems, "NDNd routes"):
            self._unroute_ndnd(state)
        with _collect(problems, "NDNd face"):
            _destroy_ndnd_face(state)
        if state.trafficgen and _alive(state.pids.get("fetcher")):
            with contextlib.suppress(NativePlaneError), gql.Client(layout.fetcher.url, 5) as tg:
                tg.delete(state.trafficgen)
        for instance in (layout.fileserver, layout.fetcher, layout.forwarder):
            pid = state.pids.get(instance.role)
            if pid is not None:
                with _collect(problems, instance.role):
                    _stop(instance, pid)
                state.pids.pop(instance.role, None)
                self._save(state)
        if state.veth:
            with _collect(problems, "veth"):
                _ip("link", "del", VETH_DPDK, check=False)
        if state.hugepages_added:
            with _collect(problems, "hugepages"):
                hugepages.release(hugepages.Reservation(state.hugepages_added, 0))
                state.hugepages_added = 0
                self._save(state)
        for leftover in ("fetcher.sock", "fileserver.sock"):
            with contextlib.suppress(OSError):
                (self.run / leftover).unlink()
        if not problems:
            self.state_file.unlink(missing_ok=True)
        return problems

    # --- clients -----------------------------------------------------------------------------

    def register_client(self, name: str, pid: int, program: str, sockets: list[str]) -> None:
        """Note a process that reads through the forwarder over memif (an XRootD server with
        NDNc's plugin, ``ndnsci xrootd up``): ``down`` stops it and removes its sockets, since
        its pipeline is closed for good once the forwarder goes. ``program`` is a word of its
        command line (a recycled pid is left alone)."""
        client = Client(pid, program, sockets)
        processes.save_state(self.run / CLIENTS_DIR / f"{name}.json", client)

    def _stop_clients(self) -> None:
        for path in sorted((self.run / CLIENTS_DIR).glob("*.json")):
            client = processes.load_state(path, Client, NativePlaneError, "client record")
            if client is None:
                continue
            pid, program = client.pid, client.program
            if not processes.stop_pid(pid, STOP_SECONDS / 3, program=program):
                raise NativePlaneError(f"{program} (pid {pid}) does not stop")
            for sock in client.sockets:
                with contextlib.suppress(OSError):
                    Path(sock).unlink()
            path.unlink()

    # --- status ------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """What runs, with the forwarder's faces, FIB and lcores (for ``native status``)."""
        state = self.load()
        if state is None:
            return {"up": False}
        layout = state.layout
        out: dict[str, Any] = {
            "up": self.is_up(),
            "run": str(self.run),
            "instances": {
                role: {"pid": pid, "alive": _alive(pid), "graphql": _instance(layout, role).url}
                for role, pid in state.pids.items()
            },
            "hugepages": sum(_instance(layout, role).hugepages for role in state.pids),
            "ndnd": {
                "socket": state.ndnd_socket,
                "face": state.ndnd_face,
                "routes": state.ndnd_routes,
            },
            "fileserver_prefixes": state.fileserver_prefixes,
        }
        if out["up"]:
            with gql.Client(layout.forwarder.url, timeout=5) as fw:
                out["forwarder"] = {
                    "version": fw.version(),
                    "workers": fw.workers(),
                    "faces": fw.faces(),
                    "fib": fw.fib(),
                }
        return out


class _Activating(gql.Client):
    """A client whose ``activate`` quotes the instance's log when NDN-DPDK refuses."""

    def __init__(self, client: gql.Client, role: str, logfile: Path) -> None:
        super().__init__(client.url)
        client.close()
        self.role = role
        self.logfile = logfile

    def activate(self, role: str, args: dict[str, Any]) -> None:
        try:
            super().activate(role, args)
        except NativePlaneError as exc:
            text = tail(self.logfile)
            hint = ""
            if "Cannot allocate memory" in text or "mempool" in text:
                hint = (
                    "\nhugepages: NDN-DPDK could not allocate its memory; are enough 2 MB "
                    "hugepages free (grep Huge /proc/meminfo)?"
                )
            raise NativePlaneError(
                f"activating the {self.role} failed: {exc}{hint}\n{text}"
            ) from exc


def _live_owners(state: State, exclude: int | None = None) -> dict[str, list[dict[str, str]]]:
    """The file server's owners whose process still runs (a killed ``ndnsci serve`` leaves its
    entry behind)."""
    return {
        pid: mounts
        for pid, mounts in state.fileserver_owners.items()
        if pid != str(exclude) and processes.alive(int(pid))
    }


def _check_mounts(mounts: list[dict[str, str]], others: dict[str, list[dict[str, str]]]) -> None:
    from ndnsci.native.view import MAX_MOUNTS

    for pid, theirs in others.items():
        paths = {m["prefix"]: m["path"] for m in theirs}
        for mount in mounts:
            path = paths.get(mount["prefix"])
            if path is not None and path != mount["path"]:
                raise NativePlaneError(
                    f"{mount['prefix']} is already served from {path} by ndnsci serve "
                    f"(pid {pid}) on this plane's file server; stop it or choose another prefix"
                )
    union = _union({**others, "": mounts})
    if len(union) > MAX_MOUNTS:
        raise NativePlaneError(
            f"NDN-DPDK's file server takes at most {MAX_MOUNTS} mounts; with these, the "
            f"ndnsci serve processes on this plane would need {len(union)}"
        )


def _union(owners: dict[str, list[dict[str, str]]]) -> list[dict[str, str]]:
    """The mounts of every owner, each once, in prefix order."""
    merged = {(m["prefix"], m["path"]): m for mounts in owners.values() for m in mounts}
    return [merged[key] for key in sorted(merged)]


def _instance(layout: Layout, role: str) -> Instance:
    return {i.role: i for i in layout.instances}[role]


def tail(path: Path, lines: int = 15) -> str:
    """The end of an instance's log, for a message."""
    return processes.tail(path, lines, "  | ")


def _alive(pid: int | None) -> bool:
    """Whether ``pid`` is a running NDN-DPDK instance."""
    return processes.alive(pid, "ndndpdk-svc")


def _stop(instance: Instance, pid: int) -> None:
    """Ask the instance to shut down; SIGTERM, then SIGKILL, if it does not."""
    if not _alive(pid):
        return
    with contextlib.suppress(NativePlaneError), gql.Client(instance.url, timeout=3) as client:
        client.shutdown()
    signals = (None, signal.SIGTERM, signal.SIGKILL)
    if not processes.stop_pid(pid, STOP_SECONDS / 3, program="ndndpdk-svc", signals=signals):
        raise NativePlaneError(f"ndndpdk-svc ({instance.role}, pid {pid}) does not stop")


def _destroy_ndnd_face(state: State) -> None:
    if state.ndnd_socket is None or state.ndnd_face is None:
        return
    from ndnsci.ndn import control
    from ndnsci.ndn.transport import Face

    with contextlib.suppress(TransportError), Face(f"unix://{state.ndnd_socket}") as face:
        control.command(face, "faces", "destroy", accept=(404,), face_id=state.ndnd_face)
    state.ndnd_face = None


def _raise_ndnd_buffers(port: int) -> None:
    """Give NDNd's UDP sockets a receive buffer for the bursts NDN-DPDK sends over the link.

    Every 8 KB Data crosses in six fragments; NDN-DPDK answers a window of Interests from its
    file server at once, and at the kernel's default buffer NDNd's socket dropped fragments
    (``ndnd cat`` gave up: "retries exhausted"). Only NDNd's own sockets change, not the host's
    sysctl; a forwarder that cannot be found is logged, and the link works as before."""
    from ndnsci.ndn import forwarder

    pid = forwarder.udp_owner(port)
    if pid is None:
        log.warning("NDNd's UDP port %d: no process found; its receive buffer stays the "
                    "kernel's default", port)  # fmt: skip
        return
    try:
        changed = forwarder.raise_udp_receive_buffers(pid, NDND_UDP_BUFFER)
    except OSError as exc:
        log.warning("NDNd (pid %d): cannot raise its UDP receive buffers: %s", pid, exc)
        return
    log.info("NDNd (pid %d): %d UDP sockets get a %d MiB receive buffer", pid, changed,
             NDND_UDP_BUFFER >> 20)  # fmt: skip


def _udp_port(local_uri: Any, ndnd_socket: Path) -> int:
    """NDNd's UDP port: from the new face's LocalUri, else from its rendered config."""
    if isinstance(local_uri, bytes | str):
        text = local_uri.decode() if isinstance(local_uri, bytes) else local_uri
        port = text.rsplit(":", 1)[-1]
        if port.isdigit():
            return int(port)
    with contextlib.suppress(OSError):
        for line in (ndnd_socket.parent / "ndnd.yml").read_text().splitlines():
            if line.strip().startswith("port_unicast:") and "udp" not in line:
                return int(line.split(":")[1].split("#")[0])
    raise NativePlaneError(f"cannot tell NDNd's UDP port ({ndnd_socket})")


def _ip(*args: str, check: bool = True) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise NativePlaneError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _sysctl(key: str, value: str) -> None:
    with contextlib.suppress(OSError):
        Path("/proc/sys", *key.split(".")).write_text(value)


@contextlib.contextmanager
def _collect(problems: list[str], what: str) -> Iterator[None]:
    try:
        yield
    except Exception as exc:  # down goes on: every step is tried
        problems.append(f"{what}: {exc}")
