"""SHA-2 for the fetch path, chosen by how much it will hash.

Importing hashlib loads OpenSSL's libcrypto: ~11 M instructions (2.5-3 ms) before a fetch's
first byte. CPython's own SHA-2, which hashlib falls back to without OpenSSL (and which
``random`` imports instead of hashlib for the same reason), costs nothing to load but hashes
SHA-256 at ~160 MB/s here against OpenSSL's ~880 MB/s. A fetched file is hashed twice (each
segment's digest, then the whole file on disk), so the two break even at about 256 KiB: smaller
inputs take the built-in, larger ones and streams of packets hashlib's (DEVELOPERS.md,
"Start-up budget").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeAlias

if TYPE_CHECKING:
    from collections.abc import Callable

    class Hash(Protocol):
        """What the fetch path uses of a hash object (hashlib's and the built-in ones alike)."""

        def update(self, data: bytes | bytearray | memoryview, /) -> None: ...
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...

    Constructor: TypeAlias = Callable[..., Hash]

__all__ = ["SMALL", "sha256", "sha512"]

SMALL = 256 * 1024  # bytes in all: up to this, loading OpenSSL costs more than it saves

try:  # CPython 3.12+
    from _sha2 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
    from _sha2 import sha512 as _builtin_sha512
except ImportError:
    try:  # CPython 3.11
        from _sha256 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
        from _sha512 import sha512 as _builtin_sha512  # type: ignore[import-not-found]
    except ImportError:  # a Python built without its own SHA-2
        from hashlib import sha256 as _builtin_sha256
        from hashlib import sha512 as _builtin_sha512


def sha256(size: int | None = None) -> Constructor:
    """SHA-256's constructor for hashing ``size`` bytes in all (None: unknown, or a stream of
    inputs without end, as a producer's packets)."""
    if size is not None and size <= SMALL:
        return _builtin_sha256  # type: ignore[no-any-return]
    import hashlib

    return hashlib.sha256


def sha512(size: int | None = None) -> Constructor:
    """SHA-512's constructor for hashing ``size`` bytes in all (None: unknown)."""
    if size is not None and size <= SMALL:
        return _builtin_sha512  # type: ignore[no-any-return]
    import hashlib

    return hashlib.sha512
