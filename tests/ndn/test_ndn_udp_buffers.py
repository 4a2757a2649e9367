"""A forwarder's UDP receive buffers, raised from outside (ndnsci.ndn.forwarder): what the
testbed and the native plane's link do to NDNd, here on sockets of this process."""

from __future__ import annotations

import os
import socket

from ndnsci.ndn import forwarder


def test_the_owner_of_a_udp_port_is_found_and_only_its_udp_sockets_grow() -> None:
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp,
    ):
        udp.bind(("127.0.0.1", 0))
        tcp.bind(("127.0.0.1", 0))
        port = udp.getsockname()[1]
        assert forwarder.udp_owner(port) == os.getpid()
        before_tcp = tcp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        assert udp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) < 8 << 20
        changed = forwarder.raise_udp_receive_buffers(os.getpid(), 8 << 20)
        assert changed >= 1
        # SO_RCVBUFFORCE goes past net.core.rmem_max (the kernel reports twice what was set)
        assert udp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) >= 8 << 20
        assert tcp.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) == before_tcp
    # a port nobody holds
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as gone:
        gone.bind(("127.0.0.1", 0))
        free = gone.getsockname()[1]
    assert forwarder.udp_owner(free) is None
