"""The ``Range`` header of a GET (RFC 9110, section 14): one byte range, or the whole file.

A header that is not one well-formed ``bytes=`` range (another unit, a syntax error, several
ranges) is ignored, as RFC 9110 allows: the answer is the whole file. A range starting at or
beyond the end of the file cannot be satisfied (416), nor one with a position of more than 19
digits (no file is that long).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SPEC = re.compile(r"bytes=(\d*)-(\d*)\Z")
#: digits of the longest position taken: beyond, no file has that many bytes (and ``int()``
#: refuses strings of over 4,300 digits), so the range cannot be satisfied (416)
_MAX_DIGITS = 19


class RangeNotSatisfiable(Exception):
    """The range asks for bytes the file does not have."""


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``start`` to ``end`` of a file, both included."""

    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The range asked of a file of ``size`` bytes; None for the whole file.

    Raises RangeNotSatisfiable.
    """
    if header is None:
        return None
    match = _SPEC.match(header.strip().replace(" ", ""))
    if match is None:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        suffix = _position(last)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable(f"bytes=-{suffix} of {size} bytes")
        return ByteRange(max(0, size - suffix), size - 1)
    start = _position(first)
    if last and _position(last) < start:
        return None  # invalid: ignored
    if start >= size:
        raise RangeNotSatisfiable(f"bytes={start}- of {size} bytes")
    return ByteRange(start, min(_position(last), size - 1) if last else size - 1)


def _position(digits: str) -> int:
    """A byte position from its decimal digits; RangeNotSatisfiable beyond any file."""
    digits = digits.lstrip("0") or "0"
    if len(digits) > _MAX_DIGITS:
        raise RangeNotSatisfiable(f"a position of {len(digits)} digits")
    return int(digits)
