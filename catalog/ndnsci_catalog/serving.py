"""The HTTP/1.1 protocol ``ndnsci catalog serve`` runs under uvicorn: uvicorn's httptools one,
with the request head bounded (uvicorn bounds it only with h11, which is not used).

- bytes of a request head (request line and header fields): :data:`MAX_HEAD_BYTES`; beyond,
  431 and the connection closes, so a client cannot make the server buffer a 100 MB header;
- header fields of a request: :data:`MAX_HEADERS`; beyond, 431;
- the time from a connection's opening (or a request's first byte) to its head's end:
  ``head_seconds`` (``NDNSCI_HEAD_SECONDS``, default :data:`HEAD_SECONDS`); beyond, 408 and
  the connection closes (a client sending its head a byte at a time holds no connection long).

The limits are checked as the bytes arrive: a head over the limit is refused before it is all
read (at most one read's worth, 64 KiB, beyond the limit is buffered).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD_BYTES = 64 << 10
MAX_HEADERS = 100
HEAD_SECONDS = 10.0

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _Refused(Exception):
    """Raised in a parser callback to stop parsing a head that is refused."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head's size, field count and time bounded."""

    max_head_bytes = MAX_HEAD_BYTES
    max_headers = MAX_HEADERS
    head_seconds = HEAD_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._refusal: tuple[int, str] | None = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_begins()

    def _head_begins(self, asked: bool = False) -> None:
        self._in_head = True
        self._asked = asked  # a request's first byte came
        self._head_bytes = 0
        self._header_count = 0
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_seconds, self._head_too_slow)

    def _head_ends(self) -> None:
        self._in_head = False
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_ends()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)  # a callback's _Refused is answered by send_400_response
        if self._in_head and self._head_bytes > self.max_head_bytes:
            self._refuse(431, f"the request head is over {self.max_head_bytes} bytes")

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_begins(asked=True)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.max_headers:
            self._refusal = (431, f"more than {self.max_headers} header fields")
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_ends()
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        if self._refusal is None:
            super().send_400_response(msg)
        else:
            self._refuse(*self._refusal)

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._in_head and self._asked:
            self._refuse(408, f"the request head took over {self.head_seconds:g} s")
        elif self._in_head and not self.transport.is_closing():
            self.transport.close()  # nothing asked: no answer owed

    def _refuse(self, status: int, message: str) -> None:
        self._head_ends()
        if self.transport.is_closing():
            return
        body = message.encode()
        head = [b"HTTP/1.1 %d %s\r\n" % (status, _REASONS[status])]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: text/plain; charset=utf-8\r\n")
        head.append(b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self.transport.close()


def protocol(head_seconds: float = HEAD_SECONDS) -> Any:
    """The protocol class for ``uvicorn.run(http=...)``, the head's time bounded so."""
    return type("CatalogHttpProtocol", (BoundedHttpToolsProtocol,), {"head_seconds": head_seconds})
