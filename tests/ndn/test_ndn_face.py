"""The face's receive buffer: small at first, grown while reads fill it up, no byte lost."""

from __future__ import annotations

import fcntl
import os
import socket
import struct
import termios
import threading
from pathlib import Path

from support import wait_for

from ndnsci.ndn import tlv
from ndnsci.ndn.transport import FIRST_RECV_BUFFER, RECV_BUFFER, Face


def queued(sock: socket.socket) -> int:
    """Bytes waiting in the kernel for ``sock`` to read."""
    value: int = struct.unpack("i", fcntl.ioctl(sock, termios.FIONREAD, b"\0" * 4))[0]
    return value


def test_the_receive_buffer_grows_when_a_read_fills_it_and_keeps_every_packet(
    tmp_path: Path,
) -> None:
    packets = [tlv.tlv(tlv.DATA, os.urandom(8000)) for _ in range(1000)]  # ~8 MB
    path = str(tmp_path / "fw.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(path)
        server.listen(1)

        def send_all() -> None:
            peer, _ = server.accept()
            with peer:
                peer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
                peer.sendall(b"".join(packets))

        sender = threading.Thread(target=send_all)
        sender.start()
        received: list[bytes] = []
        sizes = []
        with Face(f"unix://{path}") as face:
            assert len(face.buf) == FIRST_RECV_BUFFER
            wait_for(  # the forwarder is ahead: more than the buffer is waiting
                lambda: queued(face.sock) >= FIRST_RECV_BUFFER,
                10,
                "a first buffer's worth queued on the socket",
                every=0.01,
            )
            while len(received) < len(packets):
                assert face.fill(5.0), "the sender stopped early"
                sizes.append(len(face.buf))
                for _, start, _, end in face.packets():
                    received.append(bytes(face.view[start:end]))
        sender.join()
    assert received == packets
    assert sizes[0] == FIRST_RECV_BUFFER and max(sizes) <= RECV_BUFFER
    assert sizes[1] == 2 * FIRST_RECV_BUFFER  # the first read filled it up: it doubled


def test_a_unix_uri_is_read_as_urlsplit_reads_it() -> None:
    """The common ``unix:///path`` is parsed without urllib.parse, with the same result."""
    from urllib.parse import urlsplit

    from ndnsci.ndn.transport import parse_transport

    for uri in ("unix:///run/nfd.sock", "unix:///a b/%41.sock", "unix:////x", "unix:///"):
        assert parse_transport(uri) == (socket.AF_UNIX, urlsplit(uri).path)
    # the rest goes through urlsplit: query and fragment dropped, a host-like path kept
    assert parse_transport("unix:///p.sock?x#y") == (socket.AF_UNIX, "/p.sock")
    assert parse_transport("UNIX://relative.sock") == (socket.AF_UNIX, "relative.sock")
    assert parse_transport("tcp://[::1]:7000") == (socket.AF_INET6, ("::1", 7000))
