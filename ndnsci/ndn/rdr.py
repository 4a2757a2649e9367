"""RDR metadata content: what ``<name>/32=metadata`` answers.

The content is a sequence of TLVs shared by NDNd (``rdr_2024``) and the NDN-DPDK file server
(``ndn6file``): the versioned name, FinalBlockId, then the file server's fields. ndnsci adds
the whole-file SHA-256 in a non-critical TLV (even type > 31, so ``ndnd cat`` and NDN-DPDK
ignore it). See docs/protocol.md, "Metadata content fields".
"""

from __future__ import annotations

from typing import NamedTuple

from ndnsci.ndn import tlv

SEGMENT_SIZE = 0xF500
SIZE = 0xF502
MODE = 0xF504
MTIME = 0xF50C
# ndnsci's own fields (even => non-critical: other consumers skip them)
SHA256 = 0xF510  # 32 bytes: SHA-256 of the whole file
SHA256_PENDING = 0xF512  # empty: the producer is still computing SHA256, ask again later

METADATA = tlv.keyword(b"metadata")
LS = tlv.keyword(b"ls")


class Metadata(NamedTuple):
    """RDR metadata of a file or a directory listing."""

    versioned_name: bytes  # name TLV-VALUE ending in a version component
    final_block_id: bytes | None = None  # encoded segment component
    segment_size: int | None = None
    size: int | None = None
    mode: int | None = None
    mtime_ns: int | None = None
    sha256: bytes | None = None
    sha256_pending: bool = False

    @property
    def version(self) -> int:
        last = tlv.split_components(self.versioned_name)[-1]
        return tlv.component_number(last)

    @property
    def last_segment(self) -> int | None:
        if self.final_block_id is None:
            return None
        return tlv.component_number(self.final_block_id)

    def encode(self) -> bytes:
        # widths as NDN-DPDK writes them (2-byte SegmentSize and Mode, 8-byte Size and Mtime)
        out = [tlv.tlv(tlv.NAME, self.versioned_name)]
        if self.final_block_id is not None:
            out.append(tlv.tlv(tlv.FINAL_BLOCK_ID, self.final_block_id))
        if self.segment_size is not None:
            out.append(tlv.tlv(SEGMENT_SIZE, self.segment_size.to_bytes(2, "big")))
        if self.size is not None:
            out.append(tlv.tlv(SIZE, self.size.to_bytes(8, "big")))
        if self.mode is not None:
            out.append(tlv.tlv(MODE, (self.mode & 0xFFFF).to_bytes(2, "big")))
        if self.mtime_ns is not None:
            out.append(tlv.tlv(MTIME, self.mtime_ns.to_bytes(8, "big")))
        if self.sha256 is not None:
            out.append(tlv.tlv(SHA256, self.sha256))
        elif self.sha256_pending:
            out.append(tlv.tlv(SHA256_PENDING))
        return b"".join(out)

    @classmethod
    def decode(cls, content: bytes) -> Metadata:
        """Parse metadata content; unknown non-critical TLVs are skipped, critical ones refused."""
        name = None
        fields: dict[str, object] = {}
        numbers = {SEGMENT_SIZE: "segment_size", SIZE: "size", MODE: "mode", MTIME: "mtime_ns"}
        for typ, vs, ve in tlv.iter_tlvs(content, 0, len(content)):
            value = content[vs:ve]
            if typ == tlv.NAME and name is None:
                name = value
            elif typ == tlv.FINAL_BLOCK_ID:
                fields["final_block_id"] = value
            elif typ in numbers:
                fields[numbers[typ]] = tlv.read_nni(value)
            elif typ == SHA256:
                if len(value) != 32:
                    raise tlv.TlvError("SHA-256 field is not 32 bytes")
                fields["sha256"] = value
            elif typ == SHA256_PENDING:
                fields["sha256_pending"] = True
            elif typ <= 31 or typ % 2 == 1:
                raise tlv.TlvError(f"unrecognised critical TLV {typ} in metadata")
        if name is None:
            raise tlv.TlvError("metadata without a Name")
        comps = tlv.split_components(name)
        if not comps or tlv.component_type(comps[-1]) != tlv.VERSION:
            raise tlv.TlvError("metadata Name does not end in a version")
        return cls(versioned_name=name, **fields)  # type: ignore[arg-type]


def encode_listing(entries: list[tuple[bytes, bool]]) -> bytes:
    """NDN-DPDK ``32=ls`` payload: each name, ``/`` after directories, NUL-terminated."""
    return b"".join(name + (b"/" if is_dir else b"") + b"\0" for name, is_dir in entries)


def decode_listing(payload: bytes) -> list[tuple[bytes, bool]]:
    out = []
    for item in payload.split(b"\0"):
        if item:
            out.append((item.rstrip(b"/"), item.endswith(b"/")))
    return out
