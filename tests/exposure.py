"""What a process exposes on the network, read from the kernel, and a network namespace outside
the host to try it from (issue 29: nothing the project starts may answer on the machine's
other interfaces, nor use private-range addresses in the machine's own namespace).

- :func:`sockets_of`: the TCP and UDP sockets a process holds (its /proc/PID/fd inodes looked up
  in /proc/PID/net/tcp, tcp6, udp, udp6: the tables of that process's network namespace);
- :func:`private_addresses`: the IPv4 addresses of the machine's namespace in 10/8, 172.16/12
  or 192.168/16;
- :func:`outside`: a network namespace with a veth to the host, link-local addresses only,
  removed afterwards; :func:`udp_probe` sends one datagram from it and says what came back.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TCP_LISTEN = "0A"
UDP_UNCONNECTED = "07"  # TCP_CLOSE: bound, no peer (what takes datagrams from anyone)
PRIVATE = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))


@dataclass(frozen=True)
class Sock:
    proto: str  # tcp, tcp6, udp, udp6
    local: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    remote: ipaddress.IPv4Address | ipaddress.IPv6Address
    remote_port: int
    state: str

    @property
    def listening(self) -> bool:
        """Takes connections (TCP) or datagrams (UDP) from any peer."""
        return self.state == (TCP_LISTEN if self.proto.startswith("tcp") else UDP_UNCONNECTED)

    @property
    def on_loopback(self) -> bool:
        local = self.local
        if isinstance(local, ipaddress.IPv6Address) and local.ipv4_mapped is not None:
            local = local.ipv4_mapped
        return local.is_loopback

    def __str__(self) -> str:
        return f"{self.proto} {self.local}:{self.port} -> {self.remote}:{self.remote_port}"


def _address(hex_addr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """/proc/net's address: 32-bit words, each in the host's byte order (little-endian here)."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


def sockets_of(pid: int) -> list[Sock]:
    """The TCP and UDP sockets process ``pid`` holds."""
    inodes: set[str] = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] not in inodes:
                continue
            local, lport = fields[1].split(":")
            remote, rport = fields[2].split(":")
            found.append(
                Sock(
                    proto,
                    _address(local),
                    int(lport, 16),
                    _address(remote),
                    int(rport, 16),
                    fields[3],
                )
            )
    return found


def ipv4_addresses() -> set[tuple[str, ipaddress.IPv4Interface]]:
    """(interface, address) of every IPv4 address in this (the machine's) namespace."""
    out = subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=True)
    return {
        (link["ifname"], ipaddress.IPv4Interface(f"{a['local']}/{a['prefixlen']}"))
        for link in json.loads(out.stdout)
        for a in link.get("addr_info", [])
    }


def private(address: ipaddress.IPv4Interface) -> bool:
    return any(address.ip in net for net in PRIVATE)


@dataclass(frozen=True)
class Outside:
    """A namespace ``ns`` on a veth to the host: the host's end ``host`` (an address of the
    machine's own namespace, as another interface of the machine would have), its own ``me``."""

    ns: str
    host: str
    me: str


@contextlib.contextmanager
def outside(routes: tuple[str, ...] = ()) -> Iterator[Outside]:
    """A network namespace with a veth to the host: ``169.254.N.1/30`` the host's end,
    ``169.254.N.2/30`` the namespace's (link-local; N from this process's pid, 100 to 199, so
    test runs side by side differ and none meets the native plane's 169.254.212), IPv6 off;
    ``routes`` (addresses of the host) are reached from the namespace through the host's end.
    Everything is removed afterwards."""
    tag = f"{os.getpid() % 100000}"
    subnet = f"169.254.{100 + os.getpid() % 100}"
    ns, host_if, ns_if = f"ndnsci-probe-{tag}", f"npr{tag}h", f"npr{tag}n"
    me, host = f"{subnet}.2", f"{subnet}.1"

    def ip(*args: str) -> None:
        subprocess.run(["ip", *args], capture_output=True, text=True, check=True)

    subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)  # a leftover
    subprocess.run(["ip", "link", "del", host_if], capture_output=True, check=False)
    ip("netns", "add", ns)
    try:
        ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if, "netns", ns)
        Path(f"/proc/sys/net/ipv6/conf/{host_if}/disable_ipv6").write_text("1")
        subprocess.run(
            ["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{ns_if}.disable_ipv6=1"],
            check=True,
        )
        ip("addr", "add", f"{host}/30", "scope", "link", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("-n", ns, "addr", "add", f"{me}/30", "dev", ns_if)
        ip("-n", ns, "link", "set", ns_if, "up")
        ip("-n", ns, "link", "set", "lo", "up")
        for address in routes:
            ip("-n", ns, "route", "add", f"{address}/32", "via", host)
        yield Outside(ns, host, me)
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


_PROBE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.settimeout(float(sys.argv[4]))
s.sendto(bytes.fromhex(sys.argv[5]), (sys.argv[2], int(sys.argv[3])))
try:
    data, peer = s.recvfrom(65536)
except TimeoutError:
    print("none")
else:
    print(peer[0], peer[1], data.hex())
"""


@dataclass(frozen=True)
class Answer:
    peer: str
    port: int
    data: bytes


def udp_probe(
    where: Outside, address: str, port: int, datagram: bytes, timeout: float = 2.0
) -> Answer | None:
    """Send ``datagram`` from the namespace to ``address:port``; the first datagram back within
    ``timeout`` seconds, or None."""
    done = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            where.ns,
            sys.executable,
            "-c",
            _PROBE,
            where.me,
            address,
            str(port),
            str(timeout),
            datagram.hex(),
        ],
        capture_output=True,
        text=True,
        timeout=timeout + 30,
        check=True,
    )
    words = done.stdout.split()
    if words == ["none"]:
        return None
    return Answer(words[0], int(words[1]), bytes.fromhex(words[2]))


def interest_for(uri: str) -> bytes:
    """An Interest for ``uri`` (1 s lifetime), as a bare TLV: NDNd takes it without NDNLPv2."""
    from ndnsci.ndn import name, tlv

    return tlv.interest(b"".join(name.from_uri(uri)), int.from_bytes(os.urandom(4)), 1000)


def data_name(datagram: bytes) -> str | None:
    """The name of the Data in ``datagram`` (bare, or NDNLPv2-wrapped as NDNd sends it)."""
    from ndnsci.ndn import name, tlv

    for typ, start, end in tlv.iter_tlvs(datagram, 0, len(datagram)):
        if typ == tlv.LP_PACKET:
            frame = tlv.unwrap_lp(datagram, start, end)
            if frame is None:
                return None
            return data_name(datagram[frame.start : frame.end])
        if typ == tlv.DATA:
            return name.value_to_uri(tlv.parse_data(datagram).name_value)
        return None
    return None
