"""ndnsci.base.hashes: CPython's own SHA-2 for small inputs, hashlib's (OpenSSL) for large ones."""

from __future__ import annotations

import hashlib
import os

import pytest

from ndnsci.base import hashes


@pytest.mark.parametrize("size", [0, 1, 8000, hashes.SMALL, hashes.SMALL + 1, 1 << 20])
def test_either_constructor_gives_hashlibs_digests(size: int) -> None:
    data = os.urandom(size)
    h = hashes.sha256(size)()
    h.update(data[: size // 2])
    h.update(memoryview(data)[size // 2 :])
    assert h.hexdigest() == hashlib.sha256(data).hexdigest()
    assert hashes.sha512(size)(data).digest() == hashlib.sha512(data).digest()


def test_small_inputs_do_not_load_openssl() -> None:
    assert hashes.sha256(hashes.SMALL) is not hashlib.sha256
    assert hashes.sha512(64) is not hashlib.sha512
    # large, unknown (None) or a stream of packets: hashlib's
    assert hashes.sha256(hashes.SMALL + 1) is hashlib.sha256
    assert hashes.sha256() is hashlib.sha256
    assert hashes.sha512(None) is hashlib.sha512
