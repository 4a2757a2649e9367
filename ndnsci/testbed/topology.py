"""Testbed topologies: sites, nodes and links, read from a TOML file and checked at the edge.

::

    name = "seed"

    [nodes]
    c1 = { site = "A", role = "consumer" }
    gwa = { site = "A", role = "router", cs_capacity = 131070 }
    server = { site = "B", role = "server", serve = "/ndnsci/files", http_port = 8080 }

    [[links]]
    name = "wan"
    a = "gwa"
    b = "server"
    rate_mbps = 200
    delay_ms = 20        # one way: the round trip is 40 ms

Every node runs its own NDNd forwarder, except a consumer with ``attach = "ROUTER"``: an end
host with no forwarder of its own, whose applications connect to that neighbouring router's
forwarder over TCP (as a laptop attaches to an NDN testbed hub). ``role`` says what else:
``consumer`` (nothing: users and experiments run ``ndnsci fetch`` there), ``router`` (a
gateway; its content store is the cache under study) or ``server`` (``ndnsci serve`` for
``serve``, an HTTP server of the same files on ``http_port``). NDN routes towards each served
prefix, and IP routes between all links, follow the fewest hops; ``[[routes]]`` adds NDN routes
by hand. See ``deploy/testbed/README.md`` for every key.
"""

from __future__ import annotations

import re
import tomllib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ndnsci.errors import TestbedError

ROLES = ("consumer", "router", "server")
FACES = ("udp", "tcp")
# NDNd v1.5.3 knows one content store replacement policy (fw/table/pit-cs-tree.go)
CS_POLICIES = ("lru",)
CS_PER_THREAD_MAX = 65535  # NDNd's capacity is a uint16 per forwarding thread
NDN_MAX_PACKET = 8800
IP_UDP_HEADERS = 28
# node names end up in interface names (15 bytes at most) and namespace names
_NODE_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_NODE_KEYS = {
    "site",
    "role",
    "cs_capacity",
    "cs_policy",
    "threads",
    "serve",
    "segment_size",
    "http_port",
    "data",
    "attach",
}
_LINK_KEYS = {"name", "a", "b", "rate_mbps", "delay_ms", "face", "mtu", "queue_ms"}
_ROUTE_KEYS = {"node", "prefix", "via"}
_TOP_KEYS = {"name", "description", "nodes", "links", "routes", "udp_receive_buffer_kb"}


@dataclass(frozen=True)
class Node:
    name: str
    site: str
    role: str
    cs_capacity: int  # Data packets, all forwarding threads together
    cs_policy: str = "lru"
    threads: int = 2
    serve: str | None = None  # NDN prefix the server's producer answers for
    segment_size: int = 8000
    http_port: int | None = None
    data: str = "empty"  # what a server serves: "sample" (``ndnsci sample``) or "empty"
    # a consumer without a forwarder: its applications use this neighbouring router's
    attach: str | None = None

    @property
    def has_forwarder(self) -> bool:
        return self.attach is None

    @property
    def cs_per_thread(self) -> int:
        return -(-self.cs_capacity // self.threads)


@dataclass(frozen=True)
class Link:
    index: int
    name: str
    a: str
    b: str
    rate_mbps: float | None  # None: no rate limit
    delay_ms: float  # one way, each direction
    face: str = "udp"
    mtu: int = 9000
    queue_ms: float | None = None  # tbf queue in time at the link rate (default: one RTT)

    @property
    def subnet(self) -> str:
        return f"10.{100 + self.index // 256}.{self.index % 256}"

    def address(self, node: str) -> str:
        """The IPv4 address of ``node``'s end of this link."""
        if node not in (self.a, self.b):
            raise TestbedError(f"{node} is not an end of link {self.name}")
        return f"{self.subnet}.{1 if node == self.a else 2}"

    def other(self, node: str) -> str:
        return self.b if node == self.a else self.a

    @property
    def face_mtu(self) -> int:
        """NDN packets up to this size go in one datagram (NDNd caps it at 8800)."""
        return min(self.mtu - IP_UDP_HEADERS, NDN_MAX_PACKET)

    @property
    def rtt_ms(self) -> float:
        return 2 * self.delay_ms

    @property
    def queue_bytes(self) -> int:
        """tbf's queue: ``queue_ms`` (default one RTT, at least 5 ms) at the link rate."""
        assert self.rate_mbps is not None
        queue_ms = self.queue_ms if self.queue_ms is not None else max(self.rtt_ms, 5.0)
        return max(int(self.rate_mbps * 1e6 / 8 * queue_ms / 1000), 64 * 1024)


@dataclass(frozen=True)
class Route:
    node: str
    prefix: str
    via: str


@dataclass
class Topology:
    name: str
    nodes: dict[str, Node]
    links: list[Link]
    routes: list[Route] = field(default_factory=list)
    source: str = ""
    # the forwarders' UDP receive buffers (NDNd leaves the kernel default); 0: leave them
    udp_receive_buffer_kb: int = 4096

    # --- queries -------------------------------------------------------------------------------

    def role(self, role: str) -> list[Node]:
        return [n for n in self.nodes.values() if n.role == role]

    def links_of(self, node: str) -> list[Link]:
        return [link for link in self.links if node in (link.a, link.b)]

    def link(self, name: str) -> Link:
        for link in self.links:
            if link.name == name:
                return link
        raise TestbedError(f"topology {self.name}: no link named {name!r}")

    def wan(self) -> Link:
        """The link named ``wan``, else the one with the longest delay."""
        named = [link for link in self.links if link.name == "wan"]
        return named[0] if named else max(self.links, key=lambda link: link.delay_ms)

    def next_hops(self, target: str) -> dict[str, Link]:
        """For every node that can reach ``target``: the link of its first hop (fewest hops)."""
        hops: dict[str, Link] = {}
        seen = {target}
        queue = deque([target])
        while queue:
            here = queue.popleft()
            for link in sorted(self.links_of(here), key=lambda lk: lk.other(here)):
                there = link.other(here)
                if there not in seen:
                    seen.add(there)
                    hops[there] = link
                    queue.append(there)
        return hops

    def path(self, source: str, target: str) -> list[Link]:
        """The links from ``source`` to ``target`` along the fewest hops."""
        hops = self.next_hops(target)
        path, here = [], source
        while here != target:
            if here not in hops:
                raise TestbedError(f"topology {self.name}: no path from {source} to {target}")
            path.append(hops[here])
            here = hops[here].other(here)
        return path

    def rtt_ms(self, source: str, target: str) -> float:
        return sum(link.rtt_ms for link in self.path(source, target))

    def bottleneck_mbps(self, source: str, target: str) -> float | None:
        rates = [lk.rate_mbps for lk in self.path(source, target) if lk.rate_mbps is not None]
        return min(rates) if rates else None

    def with_nodes(self, **changes: dict[str, Any]) -> Topology:
        """A copy with some nodes' fields changed, e.g. ``with_nodes(gwa={"cs_capacity": 0})``."""
        from dataclasses import replace

        nodes = dict(self.nodes)
        for name, fields in changes.items():
            nodes[name] = replace(nodes[name], **fields)
            if nodes[name].cs_per_thread > CS_PER_THREAD_MAX:
                raise TestbedError(
                    f"node {name}: {nodes[name].cs_capacity} packets is more than NDNd's "
                    f"{CS_PER_THREAD_MAX} per forwarding thread x {nodes[name].threads} threads"
                )
        copy = Topology(
            self.name,
            nodes,
            list(self.links),
            list(self.routes),
            self.source,
            self.udp_receive_buffer_kb,
        )
        _check_graph(copy)
        return copy


# --- reading -----------------------------------------------------------------------------------


def load(path: str | Path) -> Topology:
    """Read and check a topology file; raises TestbedError saying what is wrong and where."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except OSError as exc:
        raise TestbedError(f"cannot read the topology {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TestbedError(f"{path}: not valid TOML: {exc}") from exc
    return parse(raw, source=str(path))


def parse(raw: dict[str, Any], source: str = "<topology>") -> Topology:
    _unknown(raw, _TOP_KEYS, source)
    nodes_raw = raw.get("nodes")
    if not isinstance(nodes_raw, dict) or not nodes_raw:
        raise TestbedError(f"{source}: [nodes] is missing or empty")
    nodes = {name: _node(name, spec, source) for name, spec in nodes_raw.items()}
    links_raw = raw.get("links", [])
    if not isinstance(links_raw, list) or not links_raw:
        raise TestbedError(f"{source}: no [[links]]")
    links = [_link(i, spec, nodes, source) for i, spec in enumerate(links_raw)]
    routes = [_route(spec, nodes, source) for spec in raw.get("routes", [])]
    buffer_kb = int(_number(raw, "udp_receive_buffer_kb", source, 4096, 0))
    topo = Topology(
        str(raw.get("name", Path(source).stem)), nodes, links, routes, source, buffer_kb
    )
    _check_graph(topo)
    return topo


def _unknown(spec: dict[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(spec) - known)
    if extra:
        raise TestbedError(
            f"{where}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})"
        )


def _number(spec: dict[str, Any], key: str, where: str, default: Any, low: float) -> Any:
    value = spec.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
        raise TestbedError(f"{where}: {key} must be a number >= {low:g}, not {value!r}")
    return value


def _node(name: str, spec: Any, source: str) -> Node:
    where = f"{source}: node {name!r}"
    if not _NODE_NAME.match(name):
        raise TestbedError(
            f"{where}: a node name is 1-12 lower-case letters and digits, starting with a letter"
        )
    if not isinstance(spec, dict):
        raise TestbedError(f"{where}: expected a table of settings")
    _unknown(spec, _NODE_KEYS, where)
    role = spec.get("role")
    if role not in ROLES:
        raise TestbedError(f"{where}: role must be one of {', '.join(ROLES)}, not {role!r}")
    threads = int(_number(spec, "threads", where, 2, 1))
    capacity = int(_number(spec, "cs_capacity", where, 131070 if role == "router" else 0, 0))
    if -(-capacity // threads) > CS_PER_THREAD_MAX:
        raise TestbedError(
            f"{where}: cs_capacity {capacity} needs {-(-capacity // CS_PER_THREAD_MAX)} "
            f"threads (NDNd holds at most {CS_PER_THREAD_MAX} packets per forwarding thread)"
        )
    policy = spec.get("cs_policy", "lru")
    if policy not in CS_POLICIES:
        raise TestbedError(
            f"{where}: cs_policy {policy!r} is not offered by NDNd v1.5.3 (it has: "
            f"{', '.join(CS_POLICIES)}); the other policies are studied by the simulation"
        )
    serve = spec.get("serve")
    http_port = spec.get("http_port")
    if role != "server" and (serve or http_port):
        raise TestbedError(f"{where}: serve and http_port belong on a server node")
    if serve is not None and (not isinstance(serve, str) or not serve.startswith("/")):
        raise TestbedError(f"{where}: serve must be an NDN prefix such as /ndnsci/files")
    if http_port is not None and (not isinstance(http_port, int) or not 0 < http_port < 65536):
        raise TestbedError(f"{where}: http_port must be a TCP port, not {http_port!r}")
    attach = spec.get("attach")
    if attach is not None and (role != "consumer" or not isinstance(attach, str)):
        raise TestbedError(f"{where}: attach (a router's name) belongs on a consumer node")
    data = spec.get("data", "empty")
    if data not in ("empty", "sample"):
        raise TestbedError(f"{where}: data must be 'empty' or 'sample', not {data!r}")
    return Node(
        name=name,
        site=str(spec.get("site", "")),
        role=role,
        cs_capacity=capacity,
        cs_policy=policy,
        threads=threads,
        serve=serve,
        segment_size=int(_number(spec, "segment_size", where, 8000, 64)),
        http_port=http_port,
        data=data,
        attach=attach,
    )


def _link(index: int, spec: Any, nodes: dict[str, Node], source: str) -> Link:
    where = f"{source}: link {index + 1}"
    if not isinstance(spec, dict):
        raise TestbedError(f"{where}: expected a table of settings")
    _unknown(spec, _LINK_KEYS, where)
    a, b = spec.get("a"), spec.get("b")
    for end in (a, b):
        if end not in nodes:
            raise TestbedError(f"{where}: {end!r} is not a node (nodes: {', '.join(nodes)})")
    a, b = str(a), str(b)
    if a == b:
        raise TestbedError(f"{where}: a link joins two different nodes")
    face = spec.get("face", "udp")
    if face not in FACES:
        raise TestbedError(f"{where}: face must be udp or tcp, not {face!r}")
    mtu = int(_number(spec, "mtu", where, 9000, 1280))
    if mtu > 65535:
        raise TestbedError(f"{where}: mtu must be at most 65535")
    rate = _number(spec, "rate_mbps", where, None, 0.01)
    return Link(
        index=index,
        name=str(spec.get("name", f"{a}-{b}")),
        a=a,
        b=b,
        rate_mbps=float(rate) if rate is not None else None,
        delay_ms=float(_number(spec, "delay_ms", where, 0.0, 0.0)),
        face=face,
        mtu=mtu,
        queue_ms=_number(spec, "queue_ms", where, None, 0.1),
    )


def _route(spec: Any, nodes: dict[str, Node], source: str) -> Route:
    where = f"{source}: route {spec!r}"
    if not isinstance(spec, dict):
        raise TestbedError(f"{where}: expected a table of settings")
    _unknown(spec, _ROUTE_KEYS, where)
    node, via, prefix = spec.get("node"), spec.get("via"), spec.get("prefix")
    if node not in nodes or via not in nodes:
        raise TestbedError(f"{where}: node and via must be nodes of the topology")
    if not isinstance(prefix, str) or not prefix.startswith("/"):
        raise TestbedError(f"{where}: prefix must be an NDN name such as /ndnsci")
    return Route(node, prefix, via)


def _check_graph(topo: Topology) -> None:
    names = [link.name for link in topo.links]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TestbedError(f"{topo.source}: link names must differ: {', '.join(duplicates)}")
    for node in topo.nodes:
        peers = [link.other(node) for link in topo.links_of(node)]
        if len(peers) != len(set(peers)):
            raise TestbedError(f"{topo.source}: node {node} has two links to the same node")
    first = next(iter(topo.nodes))
    reached = set(topo.next_hops(first)) | {first}
    if reached != set(topo.nodes):
        lost = ", ".join(sorted(set(topo.nodes) - reached))
        raise TestbedError(f"{topo.source}: not connected: no path from {first} to {lost}")
    for host in topo.nodes.values():
        if host.attach is None:
            continue
        peers = [link.other(host.name) for link in topo.links_of(host.name)]
        router = topo.nodes.get(host.attach)
        if router is None or router.role != "router" or peers != [host.attach]:
            raise TestbedError(
                f"{topo.source}: node {host.name} attaches to {host.attach!r}: that must be a "
                "router and its only link (it has no forwarder to reach anything else)"
            )
    for route in topo.routes:
        if not topo.nodes[route.node].has_forwarder:
            raise TestbedError(
                f"{topo.source}: route at {route.node}: it has no forwarder (it attaches to "
                f"{topo.nodes[route.node].attach})"
            )
        if route.via not in [link.other(route.node) for link in topo.links_of(route.node)]:
            raise TestbedError(
                f"{topo.source}: route at {route.node} via {route.via}: not a neighbour"
            )


def bundled(name: str) -> Path:
    """A topology shipped in ``deploy/testbed`` (``default``, ``small``), or a path."""
    candidate = Path(name)
    if candidate.suffix == ".toml" or "/" in name:
        return candidate
    from ndnsci.ndn.forwarder import repo_dir

    repo = repo_dir()
    if repo is None:
        raise TestbedError("the bundled topologies live in the source checkout (deploy/testbed)")
    path = repo / "deploy" / "testbed" / f"{name}.toml"
    if not path.exists():
        shipped = sorted(p.stem for p in path.parent.glob("*.toml"))
        raise TestbedError(f"no topology {name!r} (bundled: {', '.join(shipped)}; or a .toml path)")
    return path
