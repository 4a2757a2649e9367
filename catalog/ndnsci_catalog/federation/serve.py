"""Serving a site's change batches over NDN (names: :mod:`ndnsci_catalog.federation.names`).

A batch is served as ``ndnsci serve`` serves a file: RDR metadata signed with the site key
(the KeyLocator is ``<site prefix>/catalog/32=key/<key id>``, served here too) carrying the
SHA-256 of the whole envelope, then DigestSha256 segments. Batches never change, so their
segments stay valid in every cache on the way.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from ndnsci.ndn import keys, rdr, tlv
from ndnsci.ndn.producer import (
    METADATA_FRESHNESS_MS,
    SEGMENT_FRESHNESS_MS,
    NotServed,
    Producer,
    _Object,
)
from ndnsci_catalog.federation.names import BATCH_VERSION, CHANGES, catalog_prefix

#: batch number -> its envelope (None while it does not exist)
Loader = Callable[[int], bytes | None]
#: envelopes kept in memory (a catching-up site asks for them in order)
CACHED_BATCHES = 64


class BatchProducer(Producer):
    """Serves ``<site prefix>/catalog``: the key and the batches ``load`` returns."""

    def __init__(
        self, site_prefix: str, boot: int, key: keys.PublisherKey, load: Loader, **kwargs: Any
    ) -> None:
        # no file is ever served: every name is answered from ``load`` (_dispatch below)
        super().__init__("/", catalog_prefix(site_prefix), key=key, **kwargs)
        self.root = f"{site_prefix}/catalog (change batches)".encode()  # shown in the log only
        self.boot = boot
        self.load = load
        #: versioned name -> SHA-256 of the envelope (for the metadata)
        self.digests: dict[bytes, bytes] = {}

    def _dispatch(self, interest: tlv.InterestPacket, rel: list[bytes]) -> bytes | None:
        if rel and rel[0] == CHANGES:
            return self._batch(interest, rel[1:])
        if len(rel) == 2 and rel[0] != CHANGES:
            return super()._dispatch(interest, rel)  # the key
        raise NotServed("not a change batch or the site key")

    def _batch(self, interest: tlv.InterestPacket, rel: list[bytes]) -> bytes:
        if len(rel) < 3 or tlv.component_type(rel[0]) != tlv.TIMESTAMP:
            raise NotServed("a batch name is changes/t=<boot>/seq=<n>")
        if tlv.component_number(rel[0]) != self.boot:
            raise NotServed(f"no batches of boot {tlv.component_number(rel[0])} (now {self.boot})")
        if tlv.component_type(rel[1]) != tlv.SEQUENCE_NUM:
            raise NotServed("a batch name is changes/t=<boot>/seq=<n>")
        obj = self._object_of(tlv.component_number(rel[1]))
        tail = rel[2:]
        if tail == [rdr.METADATA]:
            if not interest.can_be_prefix:
                raise NotServed("a metadata Interest needs CanBePrefix")
            return self._batch_metadata(interest.name_value, obj)
        if len(tail) == 2 and tlv.component_type(tail[1]) == tlv.SEGMENT:
            if tail[0] != tlv.version(BATCH_VERSION):
                raise NotServed("batches have one version: v=1")
            seg = tlv.component_number(tail[1])
            if seg > obj.last_segment:
                raise NotServed(f"segment {seg} past the last one ({obj.last_segment})")
            return tlv.data_digest(interest.name_value, obj.meta, obj.read(seg))
        raise NotServed("not a metadata or segment name of a batch")

    def _object_of(self, number: int) -> _Object:
        base = self.prefix_value + CHANGES + tlv.component(tlv.TIMESTAMP, tlv.nni(self.boot))
        versioned = base + tlv.component(tlv.SEQUENCE_NUM, tlv.nni(number))
        versioned += tlv.version(BATCH_VERSION)
        obj = self.objects.get(versioned)
        if obj is not None:
            obj.checked = time.monotonic()  # immutable: the fast path may keep serving it
            return obj
        envelope = self.load(number)
        if envelope is None:
            raise NotServed(f"batch {number} is not published")
        last = max(0, -(-len(envelope) // self.segment_size) - 1)
        obj = _Object(
            versioned=versioned,
            path=b"",
            fd=None,
            payload=envelope,
            size=len(envelope),
            key=(b"", len(envelope), 0, 0),  # immutable: no file behind it
            segment_size=self.segment_size,
            last_segment=last,
            meta=tlv.meta_info(tlv.CT_BLOB, SEGMENT_FRESHNESS_MS, tlv.segment(last)),
            content_tl=tlv.varnum(tlv.CONTENT) + tlv.varnum(self.segment_size),
        )
        self.objects[versioned] = obj
        self.digests[versioned] = hashlib.sha256(envelope).digest()
        while len(self.objects) > CACHED_BATCHES:
            self.digests.pop(self.objects.popitem(last=False)[0], None)
        return obj

    def _batch_metadata(self, interest_name: bytes, obj: _Object) -> bytes:
        metadata = rdr.Metadata(
            versioned_name=obj.versioned,
            final_block_id=tlv.segment(obj.last_segment),
            segment_size=self.segment_size,
            size=obj.size,
            mode=0o100444,
            mtime_ns=0,
            sha256=self.digests[obj.versioned],
            sha256_pending=False,
        )
        name = interest_name + tlv.version(time.time_ns()) + tlv.segment(0)
        meta = tlv.meta_info(tlv.CT_BLOB, METADATA_FRESHNESS_MS, tlv.segment(0))
        return self._sign(name, meta, metadata.encode())
