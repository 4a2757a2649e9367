"""Types of the compiled hot loop (ndnsci/ndn/_hotloop.c)."""

from collections import deque
from collections.abc import Callable
from typing import Any

_Layout = tuple[tuple[bytes, bytes, bytes, bytes], bytes, bytes]

class Core:
    def __init__(
        self,
        *,
        prefix: bytes,
        last: int,
        segment_size: int,
        fd: int,
        done: bytearray,
        inflight: dict[int, float],
        retries: dict[int, int],
        pending: deque[int],
        must_be_fresh: set[int],
        rtt: Any,
        cc: Any,
        result: Any,
        interests: _Layout,
        fresh_interests: _Layout,
        hook: bool,
        sha256: Callable[..., Any] | None,  # None: segment digests are deferred
        tlv_error: type[Exception],
    ) -> None: ...
    def receive(self, transfer: object, buf: bytearray, start: int, end: int) -> int: ...
    def send(self, transfer: object, now: float) -> bytes | None: ...

def ed25519_verify(public: bytes, message: bytes, signature: bytes, /) -> bool:
    """ndnsci.ndn.ed25519.verify_py's verdict, compiled (RFC 8032, cofactorless, strict)."""

def ed25519_decodes(encoded: bytes, /) -> bool:
    """Whether ``encoded`` is a canonical encoding of a curve point (for the tests)."""
