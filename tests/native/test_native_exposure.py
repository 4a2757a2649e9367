"""The native plane keeps to the machine (issue 29): the NDNd <-> NDN-DPDK link adds only a
link-local address (169.254.212.1/30, ``scope link``) to the machine's namespace, never one of
10/8, 172.16/12, 192.168/16; no process of the plane (nor NDNd) listens off loopback; and an
Interest sent over UDP from another network (a namespace on a veth to the host) to the host's
address or to the link's addresses gets no answer, while the plane's own fetches cross the link.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from exposure import interest_for, ipv4_addresses, outside, private, sockets_of, udp_probe
from native_support import PlaneFixture
from support import Forwarder, Serve

from ndnsci.native.fetcher import NdnDpdkTransport
from ndnsci.native.plane import LINK_NET, NDN_UDP_PORT, VETH_NDND
from ndnsci.ndn import forwarder
from ndnsci.sdk.transports import FetchOptions, Job

Addresses = set[tuple[str, ipaddress.IPv4Interface]]
Linked = tuple[PlaneFixture, Addresses]


@pytest.fixture(scope="module")
def linked(native_ready: object, native_run: Path, fw: Forwarder) -> Iterator[Linked]:
    """The plane up, with the machine's IPv4 addresses from just before it came up."""
    before = ipv4_addresses()
    started = PlaneFixture(native_run, fw)
    try:
        yield started.up(), before
    finally:
        started.down()


def _ndnd_pid(fw: Forwarder) -> int:
    return int(forwarder.Paths(fw.sock).pidfile.read_text())


def test_the_link_adds_only_a_link_local_address_to_the_machine(linked: Linked) -> None:
    _, before = linked
    added = ipv4_addresses() - before
    # whatever came meanwhile (another test run's probe namespace has a veth on the host too),
    # none is private
    assert [f"{i} {a}" for i, a in added if private(a)] == []
    link = {(i, a) for i, a in added if i.startswith("ndnsci-")}
    assert link == {(VETH_NDND, ipaddress.IPv4Interface(f"{LINK_NET}.1/30"))}
    assert all(a.ip.is_link_local for _, a in link)
    scopes = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", VETH_NDND],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert f"inet {LINK_NET}.1/30 scope link" in scopes


def test_no_process_of_the_plane_nor_ndnd_listens_off_loopback(
    linked: Linked,
    fw: Forwarder,
    tmp_path: Path,
) -> None:
    plane, _ = linked
    root = tmp_path / "root"
    (root / "f").mkdir(parents=True)
    (root / "f" / "x.bin").write_bytes(os.urandom(100_000))
    server = Serve(root, f"/test/exposure-fs{os.getpid()}", ["--engine", "ndn-dpdk"])
    server.start(timeout=120)
    try:
        state = plane.plane.load()
        assert state is not None
        assert set(state.pids) == {"forwarder", "fetcher", "fileserver"}
        for role, pid in state.pids.items():
            off = [str(s) for s in sockets_of(pid) if s.listening and not s.on_loopback]
            assert off == [], f"{role} (pid {pid}) listens off loopback"
        ndnd = sockets_of(_ndnd_pid(fw))
        assert [str(s) for s in ndnd if s.listening and not s.on_loopback] == []
        # NDNd's one socket on the link is its face's: connected to the forwarder's UDP face
        link = [s for s in ndnd if str(s.local) == f"{LINK_NET}.1"]
        assert [(str(s.remote), s.remote_port, s.listening) for s in link] == [
            (f"{LINK_NET}.2", NDN_UDP_PORT, False)
        ]
    finally:
        server.stop()


def test_an_interest_from_another_network_gets_no_answer_and_the_link_still_works(
    linked: Linked,
    fw: Forwarder,
    tmp_path: Path,
) -> None:
    plane, _ = linked
    root = tmp_path / "root"
    original = root / "a" / "file.bin"
    original.parent.mkdir(parents=True)
    original.write_bytes(os.urandom(2_000_003))
    prefix = f"/test/exposure-py{os.getpid()}"
    server = Serve(root, prefix, ["--unsigned"]).start()
    try:
        interest = interest_for(f"{prefix}/nothing-here")
        ndnd_port = int(fw.ports["NDNSCI_FW_UDP_PORT"])
        with outside(routes=(f"{LINK_NET}.1", f"{LINK_NET}.2")) as net:
            for address, port in (
                (net.host, ndnd_port),  # the host's address on that network
                (f"{LINK_NET}.1", ndnd_port),  # NDNd's end of the link
                (f"{LINK_NET}.2", NDN_UDP_PORT),  # the forwarder's UDP face
            ):
                answer = udp_probe(net, address, port, interest)
                assert answer is None, f"{address}:{port} answered from {answer.peer}"
        # the plane's own fetch crosses the link: NDN-DPDK's fetcher <- NDNd <- the producer
        part = tmp_path / "out.part"
        part.touch()
        job = Job(
            name=f"{prefix}/a/file.bin",
            part=str(part),
            state=f"{part}.state",
            resume=False,
            options=FetchOptions(),
            progress=lambda done, total: None,
            stop=threading.Event(),
        )
        got = NdnDpdkTransport(plane.plane).receive(job)
    finally:
        server.stop()
    assert got.size == original.stat().st_size
    digest = hashlib.sha256(original.read_bytes()).hexdigest()
    assert hashlib.sha256(part.read_bytes()).hexdigest() == digest
