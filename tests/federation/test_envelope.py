"""The signed batch envelope: what verifies, and every way it is refused."""

from __future__ import annotations

import json
import zlib
from dataclasses import asdict
from typing import Any

import pytest
from Cryptodome.PublicKey import ECC

from ndnsci.errors import RefusedChangesError
from ndnsci.ndn import keys
from ndnsci_catalog.federation import envelope

CHANGES = [
    {"op": "publish", "name": "/CMIP5/a/b.nc", "record": {"name": "/CMIP5/a/b.nc", "x": 1.5}},
    {"op": "retract", "name": "/CMIP5/a/c.nc"},
]


def new_key(name: str = "k") -> keys.PublisherKey:
    return keys.PublisherKey(name, ECC.generate(curve="ed25519").export_key(format="PEM").encode())


KEY = new_key()


def header(**changed: Any) -> envelope.Header:
    fields: dict[str, Any] = dict(
        site="kisti", prefix="/kisti", boot=1700000000, batch=3, first_seq=10, last_seq=12,
        changes=len(CHANGES), created="2026-11-23T00:00:00Z",
    )  # fmt: skip
    fields.update(changed)
    return envelope.Header(**fields)


def open_(sealed: bytes, **asked: Any) -> envelope.Batch:
    params: dict[str, Any] = {"site": "kisti", "public_key": KEY.public.hex(), "boot": 1700000000,
                              "batch": 3}  # fmt: skip
    params.update(asked)
    return envelope.open_envelope(sealed, **params)


def test_a_sealed_batch_opens_with_the_sites_key() -> None:
    batch = open_(envelope.seal(header(), CHANGES, KEY))
    assert batch.header == header()
    assert batch.changes == CHANGES


def test_the_boot_may_be_learnt_from_the_envelope() -> None:
    assert open_(envelope.seal(header(), CHANGES, KEY), boot=None).header.boot == 1700000000


@pytest.mark.parametrize("position", [-1, -200, len(envelope.MAGIC) + 3])
def test_one_flipped_bit_is_refused(position: int) -> None:
    sealed = bytearray(envelope.seal(header(), CHANGES, KEY))
    sealed[position] ^= 0x10
    with pytest.raises(RefusedChangesError, match="forged or tampered"):
        open_(bytes(sealed))


def test_another_key_is_refused() -> None:
    forged = envelope.seal(header(), CHANGES, new_key("rogue"))
    with pytest.raises(RefusedChangesError, match="not site kisti's key"):
        open_(forged)


@pytest.mark.parametrize(
    ("asked", "stated"),
    [({"batch": 4}, {}), ({"site": "csu"}, {}), ({}, {"boot": 1}), ({}, {"changes": 5})],
)
def test_a_batch_replayed_as_another_is_refused(
    asked: dict[str, Any], stated: dict[str, Any]
) -> None:
    with pytest.raises(RefusedChangesError):
        open_(envelope.seal(header(**stated), CHANGES, KEY), **asked)


@pytest.mark.parametrize(
    "blob",
    [b"", b"hello", envelope.MAGIC, envelope.MAGIC + b"x" * 64, b"NDNSCI-CHANGES/2\n" + b"x" * 99],
)
def test_what_is_not_an_envelope_is_refused(blob: bytes) -> None:
    with pytest.raises(RefusedChangesError):
        open_(blob)


def _signed_body(body: bytes) -> bytes:
    return envelope.MAGIC + KEY.sign(envelope.MAGIC + body) + body


@pytest.mark.parametrize(
    "body",
    [
        b"not zlib",
        zlib.compress(b"not json"),
        zlib.compress(b'{"site": "kisti"}'),  # a header without its fields
        # a change that is not an object
        zlib.compress(json.dumps(asdict(header())).encode() + b"\n[1, 2]"),
        zlib.compress(b"x" * 100)[:-4],  # truncated
    ],
)
def test_a_signed_but_malformed_body_is_refused(body: bytes) -> None:
    with pytest.raises(RefusedChangesError):
        open_(_signed_body(body))


def test_a_body_that_inflates_without_end_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envelope, "MAX_BODY", 1 << 16)
    bomb = zlib.compress(b" " * (1 << 20))  # 1 KB that inflates to 1 MB
    with pytest.raises(RefusedChangesError, match="too large"):
        open_(_signed_body(bomb))


def test_an_oversized_envelope_is_refused_before_anything_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(envelope, "MAX_ENVELOPE", 100)
    with pytest.raises(RefusedChangesError, match="larger than"):
        open_(envelope.seal(header(), CHANGES, KEY))
