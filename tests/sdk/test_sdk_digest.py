"""ndnsci._digest: CPython's own SHA-2 for small inputs, hashlib's (OpenSSL) for large ones."""

from __future__ import annotations

import hashlib
import os

import pytest

from ndnsci import _digest


@pytest.mark.parametrize("size", [0, 1, 8000, _digest.SMALL, _digest.SMALL + 1, 1 << 20])
def test_either_constructor_gives_hashlibs_digests(size: int) -> None:
    data = os.urandom(size)
    h = _digest.sha256(size)()
    h.update(data[: size // 2])
    h.update(memoryview(data)[size // 2 :])
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
    assert _digest.sha512(size)(data).digest() == hashlib.sha512(data).digest()


def test_small_inputs_do_not_load_openssl() -> None:
    assert _digest.sha256(_digest.SMALL) is not hashlib.sha256
    assert _digest.sha512(64) is not hashlib.sha512
    # large, unknown (None) or a stream of packets: hashlib's
    assert _digest.sha256(_digest.SMALL + 1) is hashlib.sha256
    assert _digest.sha256() is hashlib.sha256
    assert _digest.sha512(None) is hashlib.sha512
