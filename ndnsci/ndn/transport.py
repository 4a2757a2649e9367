"""The connection to the local forwarder: where it is, and a face with batched I/O.

Where: ``NDN_CLIENT_TRANSPORT`` (``unix:///path`` or ``tcp://host:port``), as python-ndn and
NDNd's own tools read it; without it, the socket ``ndnsci forwarder start`` uses.

How: one stream socket, non-blocking, read with ``recv_into`` into a buffer that holds many
packets at once (256 KiB, doubled up to 4 MiB each time a read fills it up);
:meth:`Face.packets` frames them by offset (no copies) and the caller parses them in place.
Writes are batched: a list of packets goes out in one ``sendmsg``.
"""

from __future__ import annotations

import _socket
import contextlib
import select
import time
from typing import TYPE_CHECKING

from ndnsci.base import environment
from ndnsci.errors import TransportError
from ndnsci.ndn import tlv

if TYPE_CHECKING:
    from collections.abc import Sequence

ENV = "NDN_CLIENT_TRANSPORT"
RECV_BUFFER = 4 << 20  # what the receive buffer grows to while data comes faster than it is read
# what it starts with: a fresh 4 MiB buffer (zero-filled: 1024 page faults) costs each face
# ~1-3 ms, and a small file's fetch opens two (the engine's check, then the transfer)
FIRST_RECV_BUFFER = 256 << 10
SOCKET_BUFFER = 8 << 20
# sendmsg takes at most IOV_MAX (1024 on Linux) buffers
_IOV_MAX = 1024


def default_socket() -> str:
    """The socket ``ndnsci forwarder start`` (and ``deploy/forwarder/run.sh``) listens on."""
    return environment.default_socket()


def transport_uri() -> str:
    """The forwarder every ndnsci command talks to."""
    return environment.client_transport() or f"unix://{default_socket()}"


def parse_transport(uri: str) -> tuple[int, str | tuple[str, int]]:
    """``unix:///p`` -> (AF_UNIX, "/p"); ``tcp://h:p`` -> (AF_INET*, (h, p))."""
    if uri.startswith("unix:///") and not any(c in uri for c in "?#\t\r\n"):
        # urlsplit's path of such a URI, without importing urllib.parse (with ipaddress, ~10 M
        # instructions of a fetch's start-up)
        return _socket.AF_UNIX, uri[7:]
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    if parts.scheme == "unix":
        path = parts.path or parts.netloc
        if not path:
            raise TransportError(f"{ENV}={uri!r}: no socket path")
        return _socket.AF_UNIX, path
    if parts.scheme in ("tcp", "tcp4", "tcp6"):
        host = parts.hostname or "localhost"
        family = _socket.AF_INET6 if parts.scheme == "tcp6" or ":" in host else _socket.AF_INET
        return family, (host, parts.port or 6363)
    raise TransportError(f"{ENV}={uri!r}: only unix:// and tcp:// transports are supported")


class Face:
    """A non-blocking stream connection to the forwarder with a large receive buffer."""

    full = False  # the last read filled the buffer up: more may wait in the kernel

    def __init__(self, uri: str | None = None, connect_timeout: float = 5.0) -> None:
        self.uri = uri or transport_uri()
        family, address = parse_transport(self.uri)
        # the C socket itself: the socket module's wrapper (its enums, selectors) costs a fetch
        # ~12 M instructions (~4 ms) before its first byte, and a face uses none of it
        self.sock = _socket.socket(family, _socket.SOCK_STREAM)
        self.sock.settimeout(connect_timeout)
        try:
            self.sock.connect(address)
        except OSError as exc:
            self.sock.close()
            raise TransportError(
                f"no NDN forwarder at {self.uri} ({exc.strerror or exc}); start one with "
                f"`ndnsci forwarder start` or set {ENV}"
            ) from exc
        for opt in (_socket.SO_RCVBUF, _socket.SO_SNDBUF):
            # capped by the kernel (net.core.rmem_max), never fatal
            with contextlib.suppress(OSError):
                self.sock.setsockopt(_socket.SOL_SOCKET, opt, SOCKET_BUFFER)
        self.sock.setblocking(False)
        self.buf = bytearray(FIRST_RECV_BUFFER)
        self.view = memoryview(self.buf)
        self.start = 0  # first unconsumed byte
        self.end = 0  # end of received bytes
        self._poll = select.poll()
        self._poll.register(self.sock, select.POLLIN)
        self.closed = False

    # --- receiving ---------------------------------------------------------------------------

    def fill(self, timeout: float) -> bool:
        """Receive what is available, waiting at most ``timeout`` seconds for something.

        Returns False when nothing arrived in time. Raises TransportError when the forwarder
        closed the connection. ``buf`` and ``view`` may be new objects afterwards.
        """
        if self.full and len(self.buf) < RECV_BUFFER:
            self._grow()
        elif self.start and self.start == self.end:
            self.start = self.end = 0
        elif self.end > len(self.buf) - tlv.MAX_PACKET_SIZE * 2:
            # move the incomplete tail to the front: at most one partial packet is copied
            pending = self.end - self.start
            self.buf[:pending] = self.view[self.start : self.end]
            self.start, self.end = 0, pending
        try:
            n = self.sock.recv_into(self.view[self.end :])
        except BlockingIOError:
            if timeout <= 0 or not self._poll.poll(timeout * 1000):
                return False
            try:
                n = self.sock.recv_into(self.view[self.end :])
            except BlockingIOError:
                return False
            except OSError as exc:
                raise self._lost(exc) from exc
        except OSError as exc:
            raise self._lost(exc) from exc
        if n == 0:
            raise self._lost(None)
        self.end += n
        self.full = self.end == len(self.buf)
        return True

    def _grow(self) -> None:
        """A buffer twice as large, with the unread bytes at its front."""
        grown = bytearray(min(2 * len(self.buf), RECV_BUFFER))
        pending = self.end - self.start
        grown[:pending] = self.view[self.start : self.end]
        self.buf, self.view = grown, memoryview(grown)
        self.start, self.end, self.full = 0, pending, False

    def packets(self) -> list[tuple[int, int, int, int]]:
        """Complete packets received so far, as ``(type, start, value start, end)`` in ``buf``.

        Offsets stay valid until the next :meth:`fill`.
        """
        frames, self.start = tlv.frame_packets(self.buf, self.start, self.end)
        return frames

    def _lost(self, exc: OSError | None) -> TransportError:
        self.closed = True
        why = f": {exc.strerror}" if exc is not None and exc.strerror else ""
        return TransportError(f"the forwarder at {self.uri} closed the connection{why}")

    # --- sending -----------------------------------------------------------------------------

    def send(self, packets: Sequence[bytes | bytearray], timeout: float = 10.0) -> None:
        """Send packets in as few system calls as possible (sendmsg of many buffers)."""
        deadline = time.monotonic() + timeout
        for i in range(0, len(packets), _IOV_MAX):
            self._send_all(list(packets[i : i + _IOV_MAX]), deadline)

    def _send_all(self, chunk: list[bytes | bytearray], deadline: float) -> None:
        try:
            n = self.sock.sendmsg(chunk)
        except BlockingIOError:
            n = 0
        except OSError as exc:
            raise self._lost(exc) from exc
        if n == sum(len(p) for p in chunk):
            return
        rest = memoryview(b"".join(chunk))[n:]
        while rest:
            self._wait_writable(deadline)
            try:
                n = self.sock.send(rest)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise self._lost(exc) from exc
            rest = rest[n:]

    def _wait_writable(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TransportError(f"the forwarder at {self.uri} stopped reading (send timed out)")
        select.select([], [self.sock], [], remaining)

    def close(self) -> None:
        self.closed = True
        self.sock.close()

    def __enter__(self) -> Face:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
