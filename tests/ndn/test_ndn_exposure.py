"""The local forwarder answers on loopback only (issue 29): its UDP listener (NDNd's
``faces.udp.bind_unicast``, our patch, 127.0.0.1 in deploy/forwarder/ndnd.yml) and its
WebSocket listener are bound to 127.0.0.1, and an Interest sent over UDP from another network
(a namespace on a veth to the host) to the host's address gets no answer, while the same
Interest from loopback does, and a forwarder bound to every address (upstream's behaviour,
what the testbed asks for inside its namespaces) answers it from there too.

The namespace test needs root (CI runs the suite as root)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from exposure import data_name, interest_for, outside, sockets_of, udp_probe
from support import Forwarder, Serve

from ndnsci.errors import ForwarderError
from ndnsci.ndn import forwarder


def _pid(fw: Forwarder) -> int:
    return int(forwarder.Paths(fw.sock).pidfile.read_text())


def _loopback_answer(port: int, interest: bytes) -> str | None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(interest, ("127.0.0.1", port))
        return data_name(s.recvfrom(65536)[0])


def test_the_forwarder_s_udp_and_websocket_listeners_are_on_loopback_only(fw: Forwarder) -> None:
    config = forwarder.Paths(fw.sock).config.read_text()
    assert "bind_unicast: 127.0.0.1  # env NDNSCI_FW_UDP_BIND" in config
    listening = [s for s in sockets_of(_pid(fw)) if s.listening]
    udp_port, ws_port = int(fw.ports["NDNSCI_FW_UDP_PORT"]), int(fw.ports["NDNSCI_FW_WS_PORT"])
    assert {(s.proto, s.port) for s in listening} >= {("udp", udp_port), ("tcp", ws_port)}
    assert [str(s) for s in listening if not s.on_loopback] == []


def test_a_bad_bind_address_stops_start_up_saying_so(fw: Forwarder, tmp_path: Path) -> None:
    bad = Forwarder(tmp_path)
    bad.ports["NDNSCI_FW_UDP_BIND"] = "127.0.0.1,not-an-address"
    with pytest.raises(ForwarderError, match="bind_unicast"):
        bad.start()


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CI runs as root)")
def test_an_interest_from_another_network_gets_no_answer_unless_bound_to_every_address(
    fw: Forwarder, session_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    prefix = f"/test/exposure{os.getpid()}"
    # a forwarder bound as upstream NDNd is, to show the probe would see an answer
    open_fw = Forwarder(session_dir / "exposure-open")
    open_fw.ports["NDNSCI_FW_UDP_BIND"] = "0.0.0.0"
    open_fw.start()
    producers = [Serve(root, prefix).start(), Serve(root, prefix, forwarder=open_fw.uri).start()]
    try:
        interest = interest_for(f"{prefix}/nothing-here")
        # the local forwarder's listener works, from loopback
        assert _loopback_answer(int(fw.ports["NDNSCI_FW_UDP_PORT"]), interest) == (
            f"{prefix}/nothing-here"
        )
        with outside() as net:
            # the host's address on that network: nothing within 2 s
            closed = udp_probe(net, net.host, int(fw.ports["NDNSCI_FW_UDP_PORT"]), interest)
            assert closed is None, f"the local forwarder answered from {closed.peer}"
            opened = udp_probe(net, net.host, int(open_fw.ports["NDNSCI_FW_UDP_PORT"]), interest)
            assert opened is not None, "a forwarder bound to 0.0.0.0 did not answer the probe"
            assert data_name(opened.data) == f"{prefix}/nothing-here"
    finally:
        for producer in producers:
            producer.stop()
        open_fw.stop()
