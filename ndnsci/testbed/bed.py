"""A running testbed: one network namespace and one NDNd per node, veths between them, tbf
for rates, a delay element on each delayed link, NDN faces and routes, producers and HTTP
servers; and the handful of operations the experiments are made of (fetch, curl, NDN ping,
counters).

:class:`Testbed` is a context manager: whatever happens inside (an error, Ctrl-C, SIGTERM
turned into KeyboardInterrupt by the caller), leaving it stops every process and removes every
namespace it made. The processes also die with the builder if it is killed outright
(PR_SET_PDEATHSIG); ``ndnsci testbed down`` then removes the namespaces from the record.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ndnsci.base import processes
from ndnsci.errors import ForwarderError, TestbedError
from ndnsci.testbed import delay, netns
from ndnsci.testbed.topology import Link, Node, Topology

UDP_PORT = 56364  # deploy/forwarder/ndnd.yml's unicast UDP listener
UDP_BIND = "0.0.0.0,[::]"  # its addresses (faces.udp.bind_unicast of our NDNd build)
TCP_PORT = 6363
START_TIMEOUT = 60.0
FW_LOG_LEVEL = "WARN"


def require_root() -> None:
    """Namespaces, veths and qdiscs need root: say so plainly (the CLI exits 2)."""
    if os.geteuid() != 0:
        raise TestbedError(
            "the testbed needs root (it creates network namespaces, veth pairs and tc qdiscs); "
            "run it as root, e.g. `sudo .venv/bin/ndnsci testbed ...` or `sudo make testbed`"
        )


@dataclass
class Process:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 12) -> str:
        return processes.tail(self.log, lines)


class Testbed:
    """The emulated network of ``topology``; ``up()`` builds it, ``down()`` removes it all."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, topology: Topology, *, log: IO[str] | None = None) -> None:
        self.topo = topology
        self.id = f"{netns.ID_PREFIX}{os.getpid()}"
        # short: AF_UNIX socket paths live here (about 100 bytes at most)
        self.rundir = Path(tempfile.gettempdir()) / self.id
        self.log = log if log is not None else sys.stderr
        self.python = sys.executable
        self.record: netns.BedRecord | None = None
        self.procs: dict[str, Process] = {}
        self.faces: dict[tuple[str, str], int] = {}  # (node, neighbour) -> NDNd face id
        self.ndn_routes: list[tuple[str, str]] = []  # (prefix, node serving it)
        self.delay_stats: dict[str, Path] = {}  # link name -> statistics file
        self._down = False

    # --- names -------------------------------------------------------------------------------

    def ns(self, node: str) -> str:
        return f"{self.id}-{node}"

    def link_ns(self, link: Link) -> str:
        return f"{self.id}-{link.a}-{link.b}"

    def node_dir(self, node: str) -> Path:
        return self.rundir / node

    def socket(self, node: str) -> Path:
        return self.node_dir(node) / "nfd.sock"

    def transport(self, node: str) -> str:
        """What applications on ``node`` connect to: its forwarder's socket, or for a node
        that attaches to a router, that router's TCP listener across their link."""
        router = self.topo.nodes[node].attach
        if router is not None:
            return f"tcp://{self.topo.path(node, router)[0].address(router)}:{TCP_PORT}"
        return f"unix://{self.socket(node)}"

    def forwarders(self) -> list[str]:
        """The nodes that run NDNd (all but the attached consumers)."""
        return [n.name for n in self.topo.nodes.values() if n.has_forwarder]

    def data_dir(self, node: str) -> Path:
        return self.node_dir(node) / "data"

    def address(self, node: str, toward: str | None = None) -> str:
        """``node``'s address on its link toward ``toward`` (default: its first link)."""
        links = self.topo.links_of(node)
        if toward is not None:
            links = [self.topo.path(node, toward)[0]]
        return links[0].address(node)

    def env(self, node: str, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "NDN_CLIENT_TRANSPORT": self.transport(node),
            "NDNSCI_CONFIG_DIR": str(self.rundir / "config"),
            "PYTHONUNBUFFERED": "1",
            **extra,
        }

    def say(self, text: str) -> None:
        print(f"testbed {self.id}: {text}", file=self.log, flush=True)

    # --- up ----------------------------------------------------------------------------------

    def __enter__(self) -> Testbed:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    def up(self) -> Testbed:
        require_root()
        started = time.monotonic()
        self._forget_stale_self()
        self.rundir.mkdir(parents=True, exist_ok=True)
        self.record = netns.BedRecord(
            id=self.id,
            owner_pid=os.getpid(),
            owner_start=processes.start_time(os.getpid()),
            topology=self.topo.source or self.topo.name,
            rundir=str(self.rundir),
        )
        self.record.save()
        try:
            self._build_network()
            for node in self.topo.nodes.values():
                if node.has_forwarder:
                    self._start_forwarder(node)
            for name in self.forwarders():
                self._create_faces(name)
                self._tune_sockets(name)
            for server in self.topo.role("server"):
                if server.serve:
                    self.add_routes(server.serve, server.name)
            for route in self.topo.routes:
                self._route_add(route.node, route.prefix, self.faces[(route.node, route.via)])
            self._start_servers()
        except BaseException:
            self.down()
            raise
        self.say(
            f"up in {time.monotonic() - started:.1f} s: {len(self.topo.nodes)} nodes, "
            f"{len(self.topo.links)} links (topology {self.topo.name})"
        )
        return self

    def _forget_stale_self(self) -> None:
        """A record under our id can only be from a dead process that had our pid: remove it."""
        path = netns.state_dir() / f"{self.id}.json"
        if path.exists():
            netns.remove(netns.BedRecord.load(path))

    def _build_network(self) -> None:
        assert self.record is not None
        for node in self.topo.nodes:
            netns.add_namespace(self.record, self.ns(node))
            netns.sysctl(self.ns(node), "net.ipv4.ip_forward", "1")
        for link in self.topo.links:
            self._build_link(link)
        self._ip_routes()

    def _build_link(self, link: Link) -> None:
        assert self.record is not None
        ns_a, ns_b = self.ns(link.a), self.ns(link.b)
        if link.delay_ms > 0:
            middle = self.link_ns(link)
            netns.add_namespace(self.record, middle)
            netns.add_veth(ns_a, link.b, middle, link.a, link.mtu)
            netns.add_veth(ns_b, link.a, middle, link.b, link.mtu)
            stats = self.rundir / f"delay-{link.name}.json"
            self.delay_stats[link.name] = stats
            self.spawn(
                middle, f"delay-{link.name}", delay.command(link.a, link.b, link.delay_ms, stats)
            )
        else:
            netns.add_veth(ns_a, link.b, ns_b, link.a, link.mtu)
        netns.address(ns_a, link.b, f"{link.address(link.a)}/24")
        netns.address(ns_b, link.a, f"{link.address(link.b)}/24")
        netns.neighbour(ns_a, link.b, link.address(link.b), netns.mac(ns_b, link.a))
        netns.neighbour(ns_b, link.a, link.address(link.a), netns.mac(ns_a, link.b))
        if link.rate_mbps is not None:
            netns.rate_limit(ns_a, link.b, link.rate_mbps, link.queue_bytes)
            netns.rate_limit(ns_b, link.a, link.rate_mbps, link.queue_bytes)

    def _ip_routes(self) -> None:
        """IPv4 routes to every link's subnet along the fewest hops (for HTTP, ping, probes)."""
        hops = {node: self.topo.next_hops(node) for node in self.topo.nodes}
        for node in self.topo.nodes:
            for link in self.topo.links:
                if node in (link.a, link.b):
                    continue
                target = min((link.a, link.b), key=lambda end: len(self.topo.path(node, end)))
                first = hops[target][node]
                netns.route(self.ns(node), f"{link.subnet}.0/24", first.address(first.other(node)))

    # --- forwarders, faces, routes -----------------------------------------------------------

    def _start_forwarder(self, node: Node) -> None:
        from ndnsci.ndn import forwarder

        self.node_dir(node.name).mkdir(parents=True, exist_ok=True)
        uses_tcp = any(
            link.face == "tcp" or not self.topo.nodes[link.other(node.name)].has_forwarder
            for link in self.topo.links_of(node.name)
        )
        settings = {
            "NDNSCI_FW_THREADS": str(node.threads),
            "NDNSCI_FW_CS_CAPACITY": str(node.cs_per_thread),
            "NDNSCI_FW_CS_POLICY": node.cs_policy,
            "NDNSCI_FW_TCP_ENABLED": "true" if uses_tcp else "false",
            "NDNSCI_FW_UDP_PORT": str(UDP_PORT),
            # inside the node's own namespace: every address, as upstream NDNd (ndnd.yml's
            # default is loopback); its links' peers reach it on their subnets' addresses
            "NDNSCI_FW_UDP_BIND": UDP_BIND,
            "NDNSCI_FW_LOG_LEVEL": FW_LOG_LEVEL,
        }
        try:
            forwarder.start(
                self.socket(node.name),
                extra_env=settings,
                preexec=processes.die_with_parent,
                command_prefix=netns.in_ns(self.ns(node.name), []),
            )
        except ForwarderError as exc:
            raise TestbedError(f"node {node.name}: {exc}") from exc

    def ndnd(self, node: str, *args: str, timeout: float = 20.0) -> str:
        """An ``ndnd`` tool command against ``node``'s forwarder; returns its stdout."""
        from ndnsci.ndn import forwarder

        if not self.topo.nodes[node].has_forwarder:
            raise TestbedError(
                f"node {node} has no forwarder of its own (it attaches to "
                f"{self.topo.nodes[node].attach}): `ndnd {' '.join(args)}` has nothing to ask"
            )
        argv = [str(forwarder.binary()), *args]
        try:
            proc = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=self.env(node),
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise TestbedError(f"node {node}: `ndnd {' '.join(args)}` timed out") from exc
        if proc.returncode != 0:
            answer = (proc.stderr + proc.stdout).strip()
            raise TestbedError(f"node {node}: `ndnd {' '.join(args)}` failed: {answer}")
        return proc.stdout

    def _tune_sockets(self, node: str) -> None:
        """Bigger UDP receive buffers for the node's forwarder (see the topology's
        ``udp_receive_buffer_kb`` and :func:`forwarder.raise_udp_receive_buffers`)."""
        from ndnsci.ndn import forwarder

        size = self.topo.udp_receive_buffer_kb * 1024
        if size <= 0:
            return
        pidfile = forwarder.Paths(self.socket(node)).pidfile
        try:
            forwarder.raise_udp_receive_buffers(int(pidfile.read_text()), size)
        except (OSError, ValueError) as exc:
            raise TestbedError(
                f"node {node}: cannot set its forwarder's UDP buffers: {exc}"
            ) from exc

    def _create_faces(self, node: str) -> None:
        for link in self.topo.links_of(node):
            if self.topo.nodes[link.other(node)].has_forwarder:  # attached hosts connect to us
                self._create_face(node, link)

    def _create_face(self, node: str, link: Link) -> None:
        peer = link.other(node)
        if link.face == "tcp":
            remote = f"tcp4://{link.address(peer)}:{TCP_PORT}"
        else:
            remote = f"udp4://{link.address(peer)}:{UDP_PORT}"
        out = self.ndnd(
            node,
            "fw",
            "face-create",
            f"remote={remote}",
            "persistency=permanent",
            f"mtu={link.face_mtu}",
        )
        match = re.search(r"FaceId=(\d+)", out)
        if match is None:
            raise TestbedError(f"node {node}: no face id in the answer to face-create: {out}")
        self.faces[(node, peer)] = int(match.group(1))

    def _route_add(self, node: str, prefix: str, face: int) -> None:
        self.ndnd(node, "fw", "route-add", f"prefix={prefix}", f"face={face}", "cost=0")

    def add_routes(self, prefix: str, target: str) -> None:
        """NDN routes for ``prefix`` on every node toward ``target``, along the fewest hops."""
        self.ndn_routes.append((prefix, target))
        for node, link in self.topo.next_hops(target).items():
            if self.topo.nodes[node].has_forwarder:
                self._route_add(node, prefix, self.faces[(node, link.other(node))])

    def set_strategy(self, node: str, prefix: str, strategy: str) -> None:
        """The forwarding strategy of ``prefix`` on ``node``'s forwarder, e.g. multicast."""
        self.ndnd(node, "fw", "strategy-set", f"prefix={prefix}", f"strategy={strategy}")

    def _install_routes(self, nodes: set[str]) -> None:
        for prefix, target in self.ndn_routes:
            for node, link in self.topo.next_hops(target).items():
                if node in nodes and self.topo.nodes[node].has_forwarder:
                    self._route_add(node, prefix, self.faces[(node, link.other(node))])
        for route in self.topo.routes:
            if route.node in nodes:
                self._route_add(route.node, route.prefix, self.faces[(route.node, route.via)])

    def restart_forwarder(self, node: str, **changes: Any) -> None:
        """Restart ``node``'s NDNd with changed settings (``cs_capacity``, ``threads``): an
        empty content store. Its faces and routes, and its neighbours' faces to it (a TCP face
        would otherwise wait for NDNd's reconnection timer), are made again."""
        from ndnsci.ndn import forwarder

        if changes:
            self.topo = self.topo.with_nodes(**{node: changes})
        forwarder.stop(self.socket(node))
        self._start_forwarder(self.topo.nodes[node])
        self._create_faces(node)
        peers = set()
        for link in self.topo.links_of(node):
            peer = link.other(node)
            if not self.topo.nodes[peer].has_forwarder:
                continue  # an attached host: its next application connects again
            peers.add(peer)
            self.ndnd(peer, "fw", "face-destroy", f"face={self.faces[(peer, node)]}")
            self._create_face(peer, link)
        for name in {node} | peers:
            self._tune_sockets(name)
        self._install_routes({node} | peers)

    # --- servers -----------------------------------------------------------------------------

    def _start_servers(self) -> None:
        servers = self.topo.role("server")
        if servers:
            self._publisher_key()
        for node in servers:
            data = self.data_dir(node.name)
            data.mkdir(parents=True, exist_ok=True)
            if node.data == "sample":
                self.say(f"{node.name}: generating the sample archive")
                self.ndnsci_cli(node.name, ["sample", str(data)], timeout=300)
            if node.serve:
                self.start_producer(node.name, data, node.serve, node.segment_size, route=False)
            if node.http_port:
                self.start_http(node.name, data, node.http_port)

    def _publisher_key(self) -> None:
        from ndnsci.site.stack import ensure_key

        ensure_key(self.rundir / "config")

    def start_producer(
        self, node: str, root: Path, prefix: str, segment_size: int = 8000, *, route: bool = True
    ) -> Process:
        """``ndnsci serve ROOT --prefix PREFIX`` on ``node``, with routes to it everywhere."""
        name = f"producer-{node}-{prefix.strip('/').replace('/', '_')}"
        argv = [
            self.python,
            "-m",
            "ndnsci",
            "serve",
            str(root),
            "--prefix",
            prefix,
            "--segment-size",
            str(segment_size),
        ]
        proc = self.spawn(self.ns(node), name, argv, env=self.env(node))
        self._wait_log(proc, " on unix://", "register its prefix")
        if route:
            self.add_routes(prefix, node)
        return proc

    def start_http(self, node: str, root: Path, port: int) -> Process:
        argv = [self.python, "-m", "http.server", str(port), "--directory", str(root)]
        proc = self.spawn(self.ns(node), f"http-{node}", argv, env=self.env(node))
        self._wait_log(proc, "Serving HTTP", "listen")
        return proc

    def start_pingserver(self, node: str, prefix: str) -> Process:
        from ndnsci.ndn import forwarder

        argv = [str(forwarder.binary()), "pingserver", prefix]
        proc = self.spawn(self.ns(node), f"pingserver-{node}", argv, env=self.env(node))
        time.sleep(0.3)  # it prints nothing when ready; registration takes a few ms
        if proc.proc.poll() is not None:
            raise TestbedError(f"ndnd pingserver on {node} exited:\n{proc.tail()}")
        return proc

    def spawn(
        self, ns: str, name: str, argv: list[str], env: dict[str, str] | None = None
    ) -> Process:
        logs = self.rundir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / f"{name}.log"
        # in a session of its own: Ctrl-C reaches the builder only, which stops them in order
        proc = processes.start(netns.in_ns(ns, argv), log, env=env)
        self.procs[name] = Process(name, proc, log)
        return self.procs[name]

    def _wait_log(self, proc: Process, text: str, what: str) -> None:
        try:
            processes.wait_ready(proc.proc, processes.log_says(proc.log, text), START_TIMEOUT, 0.05)
        except processes.NotReady as exc:
            if exc.returncode is not None:
                raise TestbedError(
                    f"{proc.name} exited before it could {what}:\n{proc.tail()}"
                ) from None
            raise TestbedError(
                f"{proc.name} did not {what} within {START_TIMEOUT:.0f} s:\n{proc.tail()}"
            ) from None

    def stop(self, proc: Process) -> None:
        processes.terminate(proc.proc)
        self.procs.pop(proc.name, None)

    # --- running things on nodes -------------------------------------------------------------

    def run(
        self,
        node: str,
        argv: list[str],
        *,
        timeout: float = 600.0,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside ``node``'s namespace (its forwarder as NDN_CLIENT_TRANSPORT;
        ``env`` adds to or overrides :meth:`env`, e.g. a site's own NDNSCI_CONFIG_DIR)."""
        try:
            proc = subprocess.run(
                netns.in_ns(self.ns(node), argv),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=self.env(node, **(env or {})),
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise TestbedError(
                f"{node}: {' '.join(argv[:4])} ... took over {timeout:.0f} s"
            ) from exc
        if check and proc.returncode != 0:
            raise TestbedError(
                f"{node}: {' '.join(argv[:6])} ... failed ({proc.returncode}):\n"
                f"{(proc.stderr or proc.stdout).strip()[-2000:]}"
            )
        return proc

    def ndnsci_cli(
        self,
        node: str,
        args: list[str],
        timeout: float = 600.0,
        env: dict[str, str] | None = None,
    ) -> str:
        argv = [self.python, "-m", "ndnsci", *args]
        return self.run(node, argv, timeout=timeout, env=env).stdout

    def fetch(
        self,
        node: str,
        name: str,
        *,
        cc: str = "aimd",
        window: int = 64,
        max_window: int = 1024,
        timeout: float = 600.0,
    ) -> dict[str, Any]:
        """``ndnsci fetch NAME --json`` on ``node``; its summary plus ``mbit_s``.

        The file is deleted afterwards (only the figures matter here).
        """
        out = self.node_dir(node) / "fetched"
        out.mkdir(parents=True, exist_ok=True)
        if cc == "fixed":
            max_window = window
        args = [
            "fetch",
            name,
            "-o",
            str(out),
            "--cc",
            cc,
            "--window",
            str(window),
            "--max-window",
            str(max_window),
            "--json",
            "-q",
        ]
        stdout = self.ndnsci_cli(node, args, timeout)
        result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
        with contextlib.suppress(OSError):
            os.unlink(result["path"])
        result["mbit_s"] = result["size"] * 8 / result["seconds"] / 1e6
        return result

    def curl(self, node: str, url: str, timeout: float = 600.0) -> dict[str, Any]:
        """curl ``url`` from ``node`` (body discarded); curl's own figures plus ``mbit_s``."""
        argv = [
            "curl",
            "--silent",
            "--show-error",
            "--fail",
            "--output",
            "/dev/null",
            "--write-out",
            "%{json}",
            url,
        ]
        stats: dict[str, Any] = json.loads(self.run(node, argv, timeout=timeout).stdout)
        stats["mbit_s"] = stats["speed_download"] * 8 / 1e6
        return stats

    def ndn_ping(
        self, node: str, prefix: str, count: int = 20, interval_ms: int = 50
    ) -> list[float]:
        """Round-trip times (ms) of ``ndnd ping`` Interests from ``node`` to ``prefix``."""
        from ndnsci.ndn import forwarder

        argv = [str(forwarder.binary()), "ping", prefix, "-c", str(count), "-i", str(interval_ms)]
        out = self.run(node, argv, timeout=count * (interval_ms / 1000 + 4) + 10, check=False)
        rtts = [float(m) for m in re.findall(r"content from .*? time=([0-9.]+) ms", out.stdout)]
        if not rtts:
            raise TestbedError(f"no answer to ndnd ping {prefix} from {node}:\n{out.stdout}")
        return rtts

    def cs_info(self, node: str) -> dict[str, int]:
        out = self.ndnd(node, "fw", "cs-info")
        fields = dict(re.findall(r"(\w+)=\s*(\S+)", out)) or dict(
            re.findall(r"^\s*(\w+)\s*[:=]?\s+(\S+)\s*$", out, re.MULTILINE)
        )
        return {k: int(v) for k, v in fields.items() if v.isdigit()}

    def producer_counters(self, proc: Process) -> dict[str, int]:
        """What the producer answered so far (``ndnsci serve`` logs it on SIGUSR1)."""
        before = proc.log.read_text(errors="replace").count("counters ")
        os.kill(proc.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            text = proc.log.read_text(errors="replace")
            lines = [line for line in text.splitlines() if "counters " in line]
            if len(lines) > before:
                counters: dict[str, int] = json.loads(lines[-1].split("counters ", 1)[1])
                return counters
            time.sleep(0.02)
        raise TestbedError(f"{proc.name} did not report its counters:\n{proc.tail()}")

    def udp_drops(self) -> dict[str, int]:
        """UDP datagrams each node's kernel dropped for want of receive buffer so far."""
        return {n: netns.udp_counters(self.ns(n))["RcvbufErrors"] for n in self.forwarders()}

    def interface_bytes(self, node: str, peer: str) -> tuple[int, int]:
        """(received, sent) bytes of ``node``'s interface toward its neighbour ``peer``."""
        return netns.interface_bytes(self.ns(node), peer)

    def delay_element_stats(self, link: Link) -> dict[str, Any]:
        proc = self.procs[f"delay-{link.name}"]
        return delay.stats(proc.proc.pid, self.delay_stats[link.name])

    def check_alive(self) -> None:
        """Raise if a part of the testbed died (with the end of its log)."""
        for proc in self.procs.values():
            if proc.proc.poll() is not None:
                raise TestbedError(f"{proc.name} exited ({proc.proc.returncode}):\n{proc.tail()}")

    # --- down --------------------------------------------------------------------------------

    def down(self) -> None:
        """Stop everything and remove every namespace; safe to call twice, never interrupted."""
        if self._down or self.record is None:
            return
        self._down = True
        with _signals_deferred():
            for proc in reversed(list(self.procs.values())):
                with contextlib.suppress(Exception):
                    processes.terminate(proc.proc)
            self.procs.clear()
            removed = netns.remove(self.record)
            self.say(f"down: removed {len(removed)} namespaces")


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Ignore Ctrl-C, SIGTERM and the time limit's SIGALRM while cleaning up: a second
    Ctrl-C must not leave half a testbed behind."""
    try:
        previous = {
            sig: signal.signal(sig, signal.SIG_IGN)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)
        }
    except ValueError:  # not the main thread: signals go elsewhere anyway
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
