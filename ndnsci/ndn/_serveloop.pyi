"""Types of the producer's compiled segment path (ndnsci/ndn/_serveloop.c)."""

from collections.abc import Callable, Mapping
from typing import Any

def serve(
    buf: bytearray,
    start: int,
    end: int,
    objects: Mapping[bytes, Any],
    now: float,
    recheck: float,
    sha256: Callable[[Any], Any],
    max_replies: int,
    /,
) -> tuple[int, bytearray, list[tuple[int, int, int, int]], int, int, int]: ...
