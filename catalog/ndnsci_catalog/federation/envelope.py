"""A batch of one site's changes, signed by the site: the same bytes over NDN and over HTTP.

::

    MAGIC ("NDNSCI-CHANGES/1\\n", 17 bytes) | Ed25519 signature (64 bytes) | body

``body`` is zlib-compressed JSON lines: the header first, then one change per line
(``{"op": "publish", "name", "record"}`` or ``{"op": "retract", "name"}``). The signature
covers MAGIC and body, and the header names the site, its boot and the batch number, so a
batch cannot be replayed as another site's, another boot's or another number's. A receiver
checks the signature with the key its trust list holds for the site it asked, *before*
decompressing anything, then checks the header against what it asked for.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ndnsci.errors import RefusedChangesError
from ndnsci.ndn import keys

MAGIC = b"NDNSCI-CHANGES/1\n"
SIGNATURE = 64
#: refuse larger envelopes and bodies that inflate beyond this (a zip bomb)
MAX_ENVELOPE = 64 << 20
MAX_BODY = 512 << 20


@dataclass(frozen=True, slots=True)
class Header:
    site: str
    prefix: str
    boot: int
    batch: int
    first_seq: int
    last_seq: int
    changes: int
    created: str


@dataclass(frozen=True, slots=True)
class Batch:
    header: Header
    changes: list[dict[str, Any]]


def seal(header: Header, changes: Sequence[dict[str, Any]], key: keys.PublisherKey) -> bytes:
    """The signed envelope of ``changes`` (``header.changes`` must be their number)."""
    lines = [json.dumps(asdict(header), separators=(",", ":"))]
    lines += [json.dumps(change, separators=(",", ":"), allow_nan=True) for change in changes]
    body = zlib.compress("\n".join(lines).encode(), 6)
    return MAGIC + key.sign(MAGIC + body) + body


def open_envelope(
    envelope: bytes, *, site: str, public_key: str, boot: int | None, batch: int
) -> Batch:
    """The verified batch; RefusedChangesError (saying why) for anything else.

    ``boot`` None accepts the boot the envelope states (the HTTP mirror learns it so)."""
    if len(envelope) > MAX_ENVELOPE:
        raise RefusedChangesError(f"batch {batch} of {site}: larger than {MAX_ENVELOPE} bytes")
    if not envelope.startswith(MAGIC) or len(envelope) < len(MAGIC) + SIGNATURE:
        raise RefusedChangesError(f"batch {batch} of {site}: not a signed change batch")
    signature = envelope[len(MAGIC) : len(MAGIC) + SIGNATURE]
    body = envelope[len(MAGIC) + SIGNATURE :]
    if not keys.verify(bytes.fromhex(public_key), MAGIC + body, signature):
        raise RefusedChangesError(
            f"batch {batch} of {site}: the signature is not site {site}'s key "
            f"{keys.key_id(bytes.fromhex(public_key))} (forged or tampered with)"
        )
    header, changes = _decode(body, site, batch)
    wanted_boot = header.boot if boot is None else boot
    stated = (header.site, header.boot, header.batch)
    if stated != (site, wanted_boot, batch) or header.changes != len(changes):
        raise RefusedChangesError(
            f"batch {batch} of {site}: its header says site {header.site!r} boot {header.boot} "
            f"batch {header.batch} with {header.changes} changes ({len(changes)} found)"
        )
    return Batch(header, changes)


def _decode(body: bytes, site: str, batch: int) -> tuple[Header, list[dict[str, Any]]]:
    inflater = zlib.decompressobj()
    try:
        text = inflater.decompress(body, MAX_BODY)
    except zlib.error as exc:
        raise RefusedChangesError(f"batch {batch} of {site}: body not readable: {exc}") from None
    if inflater.unconsumed_tail or not inflater.eof:
        raise RefusedChangesError(f"batch {batch} of {site}: body truncated or too large")
    try:
        lines = [json.loads(line) for line in text.split(b"\n")]
        header = Header(**lines[0])
    except (ValueError, TypeError) as exc:
        raise RefusedChangesError(f"batch {batch} of {site}: malformed: {exc}") from None
    changes = lines[1:]
    if not all(isinstance(change, dict) for change in changes):
        raise RefusedChangesError(f"batch {batch} of {site}: a change is not a JSON object")
    return header, changes
