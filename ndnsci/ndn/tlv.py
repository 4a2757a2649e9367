"""Lean NDN-TLV codec: the few fields the data plane needs, nothing else.

python-ndn's general decoder manages a few thousand packets per second, far below what a
file transfer needs, so the producer and consumer encode and decode through this module: plain
``bytes`` building and offset arithmetic over ``bytes``/``bytearray``/``memoryview``. Every
encoder here is checked byte for byte against python-ndn's (``tests/ndn/test_tlv.py``).

A name is handled as its TLV-VALUE: the concatenation of its encoded components (each a
complete TLV, type + length + value), which is exactly what sits on the wire after the
``07 LL`` header. That makes "is this Data under my prefix" a ``startswith`` on the buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ndnsci.base import hashes

if TYPE_CHECKING:
    from collections.abc import Callable

# packet and field types (NDN packet format v0.3, NDNLPv2)
INTEREST = 0x05
DATA = 0x06
NAME = 0x07
GENERIC = 0x08
NONCE = 0x0A
INTEREST_LIFETIME = 0x0C
MUST_BE_FRESH = 0x12
META_INFO = 0x14
CONTENT = 0x15
SIGNATURE_INFO = 0x16
SIGNATURE_VALUE = 0x17
CONTENT_TYPE = 0x18
FRESHNESS_PERIOD = 0x19
FINAL_BLOCK_ID = 0x1A
SIGNATURE_TYPE = 0x1B
KEY_LOCATOR = 0x1C
CAN_BE_PREFIX = 0x21
HOP_LIMIT = 0x22
APP_PARAMETERS = 0x24

# name component types (naming conventions rev3)
KEYWORD = 0x20
SEGMENT = 0x32
BYTE_OFFSET = 0x34
VERSION = 0x36
TIMESTAMP = 0x38
SEQUENCE_NUM = 0x3A
IMPLICIT_SHA256 = 0x01
PARAMETERS_SHA256 = 0x02

# ContentType values
CT_BLOB = 0
CT_LINK = 1
CT_KEY = 2
CT_NACK = 3

# SignatureType values
SIG_DIGEST_SHA256 = 0
SIG_ED25519 = 5
SIG_NULL = 200

# NDNLPv2 (what NDNd wraps every packet to and from an application face in)
LP_PACKET = 0x64
LP_FRAGMENT = 0x50
LP_PIT_TOKEN = 0x62
LP_NACK = 0x0320
LP_NACK_REASON = 0x0321
LP_CONGESTION_MARK = 0x0340

NACK_REASONS = {0: "None", 50: "Congestion", 100: "Duplicate", 150: "NoRoute"}

# The largest packet NDN forwarders accept (NFD, NDNd: MAX_NDN_PACKET_SIZE).
MAX_PACKET_SIZE = 8800

DIGEST_SIGNATURE_INFO = b"\x16\x03\x1b\x01\x00"


class TlvError(ValueError):
    """A packet or field is truncated or malformed."""


# --- variable-length numbers ------------------------------------------------------------------


def varnum(n: int) -> bytes:
    """Encode a TLV-TYPE or TLV-LENGTH number (1, 3, 5 or 9 bytes)."""
    if n < 253:
        return bytes((n,))
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, "big")
    if n <= 0xFFFFFFFF:
        return b"\xfe" + n.to_bytes(4, "big")
    return b"\xff" + n.to_bytes(8, "big")


def read_varnum(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Decode the TLV number at ``pos``; returns ``(value, position after it)``.

    Raises IndexError when the buffer ends inside the number (the framer treats that as "wait
    for more bytes").
    """
    first = buf[pos]
    if first < 253:
        return first, pos + 1
    size = 2 if first == 253 else 4 if first == 254 else 8
    end = pos + 1 + size
    if end > len(buf):
        raise IndexError("truncated TLV number")
    return int.from_bytes(buf[pos + 1 : end], "big"), end


def tlv(typ: int, value: bytes | bytearray | memoryview = b"") -> bytes:
    return varnum(typ) + varnum(len(value)) + bytes(value)


def nni(n: int) -> bytes:
    """NonNegativeInteger: the shortest of 1, 2, 4 or 8 big-endian bytes."""
    if n < 0:
        raise ValueError(f"negative NonNegativeInteger {n}")
    for size in (1, 2, 4, 8):
        if n < 1 << (8 * size):
            return n.to_bytes(size, "big")
    raise ValueError(f"NonNegativeInteger too large: {n}")


def read_nni(value: bytes | bytearray | memoryview) -> int:
    if len(value) not in (1, 2, 4, 8):
        raise TlvError(f"bad NonNegativeInteger length {len(value)}")
    return int.from_bytes(value, "big")


def iter_tlvs(
    buf: bytes | bytearray | memoryview, start: int, end: int
) -> list[tuple[int, int, int]]:
    """The TLVs between ``start`` and ``end`` as ``(type, value start, value end)``."""
    out = []
    pos = start
    try:
        while pos < end:
            typ, pos = read_varnum(buf, pos)
            length, pos = read_varnum(buf, pos)
            out.append((typ, pos, pos + length))
            pos += length
    except IndexError as exc:
        raise TlvError("truncated TLV") from exc
    if pos != end:
        raise TlvError("TLV overruns its container")
    return out


# --- name components --------------------------------------------------------------------------


def component(typ: int, value: bytes | bytearray | memoryview) -> bytes:
    return tlv(typ, value)


def generic(value: bytes | str) -> bytes:
    return tlv(GENERIC, value.encode() if isinstance(value, str) else value)


def keyword(word: bytes | str) -> bytes:
    return tlv(KEYWORD, word.encode() if isinstance(word, str) else word)


def version(n: int) -> bytes:
    return tlv(VERSION, nni(n))


def segment(n: int) -> bytes:
    return tlv(SEGMENT, nni(n))


def split_components(name_value: bytes | bytearray | memoryview) -> list[bytes]:
    """The encoded components (type + length + value each) of a name TLV-VALUE."""
    out = []
    pos, end = 0, len(name_value)
    try:
        while pos < end:
            _, p = read_varnum(name_value, pos)
            length, p = read_varnum(name_value, p)
            if p + length > end:
                raise TlvError("name component overruns the name")
            out.append(bytes(name_value[pos : p + length]))
            pos = p + length
    except IndexError as exc:
        raise TlvError("truncated name component") from exc
    return out


def component_type(comp: bytes) -> int:
    return read_varnum(comp, 0)[0]


def component_value(comp: bytes) -> bytes:
    _, pos = read_varnum(comp, 0)
    length, pos = read_varnum(comp, pos)
    return comp[pos : pos + length]


def component_number(comp: bytes) -> int:
    return read_nni(component_value(comp))


def name_tlv(components: list[bytes] | tuple[bytes, ...]) -> bytes:
    return tlv(NAME, b"".join(components))


# --- MetaInfo, Interest, Data -----------------------------------------------------------------


def meta_info(
    content_type: int | None = CT_BLOB,
    freshness_ms: int | None = None,
    final_block_id: bytes | None = None,
) -> bytes:
    """MetaInfo TLV; ``final_block_id`` is an encoded component (e.g. ``segment(n)``)."""
    value = b""
    if content_type is not None:
        value += tlv(CONTENT_TYPE, nni(content_type))
    if freshness_ms is not None:
        value += tlv(FRESHNESS_PERIOD, nni(freshness_ms))
    if final_block_id is not None:
        value += tlv(FINAL_BLOCK_ID, final_block_id)
    return tlv(META_INFO, value)


def interest(  # noqa: PLR0917 - mirrors the packet's fields, in their order
    name_value: bytes,
    nonce: int,
    lifetime_ms: int | None = None,
    can_be_prefix: bool = False,
    must_be_fresh: bool = False,
    hop_limit: int | None = None,
) -> bytes:
    """An unsigned Interest (fields in the order of the packet format, as python-ndn writes)."""
    value = tlv(NAME, name_value)
    if can_be_prefix:
        value += b"\x21\x00"
    if must_be_fresh:
        value += b"\x12\x00"
    value += b"\x0a\x04" + nonce.to_bytes(4, "big")
    if lifetime_ms is not None:
        value += tlv(INTEREST_LIFETIME, nni(lifetime_ms))
    if hop_limit is not None:
        value += tlv(HOP_LIMIT, bytes((hop_limit,)))
    return tlv(INTEREST, value)


class SegmentInterests:
    """Interests ``<prefix>/seg=<n>`` built from precomputed headers.

    Only the segment number and the nonce change between two Interests of a transfer, so the
    header bytes for each of the four segment-number widths are computed once.
    """

    def __init__(
        self, prefix_value: bytes, lifetime_ms: int | None, must_be_fresh: bool = False
    ) -> None:
        self._lifetime = b"" if lifetime_ms is None else tlv(INTEREST_LIFETIME, nni(lifetime_ms))
        self._heads: dict[int, bytes] = {}
        fresh = b"\x12\x00" if must_be_fresh else b""
        tail = len(fresh) + 6 + len(self._lifetime)  # MustBeFresh, Nonce, InterestLifetime
        for width in (1, 2, 4, 8):
            name_len = len(prefix_value) + 2 + width
            name = varnum(NAME) + varnum(name_len) + prefix_value
            body_len = len(name) + 2 + width + tail
            self._heads[width] = (
                varnum(INTEREST) + varnum(body_len) + name + bytes((SEGMENT, width))
            )
        self._nonce_tag = fresh + b"\x0a\x04"

    def layout(self) -> tuple[tuple[bytes, bytes, bytes, bytes], bytes, bytes]:
        """The parts :meth:`encode` joins (headers for 1-, 2-, 4- and 8-byte segment numbers,
        the bytes before the nonce, the lifetime), for the compiled consumer."""
        heads = self._heads
        return (heads[1], heads[2], heads[4], heads[8]), self._nonce_tag, self._lifetime

    def encode(self, seg: int, nonce: int) -> bytes:
        width = 1 if seg < 0x100 else 2 if seg < 0x10000 else 4 if seg < 0x100000000 else 8
        return (
            self._heads[width]
            + seg.to_bytes(width, "big")
            + self._nonce_tag
            + nonce.to_bytes(4, "big")
            + self._lifetime
        )


def data_digest(
    name_value: bytes | bytearray | memoryview,
    meta: bytes,
    content: bytes | bytearray | memoryview,
) -> bytes:
    """A Data packet signed with DigestSha256 (what every segment carries)."""
    name = varnum(NAME) + varnum(len(name_value)) + bytes(name_value)
    return digest_packet(name, meta, varnum(CONTENT) + varnum(len(content)), content)


_DIGEST_TAIL = DIGEST_SIGNATURE_INFO + b"\x17\x20"


def digest_packet(
    name: bytes, meta: bytes, content_tl: bytes, content: bytes | bytearray | memoryview
) -> bytes:
    """The hot-path form of :func:`data_digest`: Name TLV and Content TL already encoded."""
    digest = hashes.sha256()(name)
    digest.update(meta)
    digest.update(content_tl)
    digest.update(content)
    digest.update(DIGEST_SIGNATURE_INFO)
    size = len(name) + len(meta) + len(content_tl) + len(content) + 39
    head = b"\x06" + (bytes((size,)) if size < 253 else b"\xfd" + size.to_bytes(2, "big"))
    return b"".join((head, name, meta, content_tl, content, _DIGEST_TAIL, digest.digest()))


def signed_data(
    name_value: bytes,
    meta: bytes,
    content: bytes,
    signature_info: bytes,
    sign: Callable[[bytes], bytes],
) -> bytes:
    """A Data packet whose signature ``sign(signed portion)`` computes (e.g. Ed25519)."""
    signed = tlv(NAME, name_value) + meta + tlv(CONTENT, content) + signature_info
    return tlv(DATA, signed + tlv(SIGNATURE_VALUE, sign(signed)))


def signature_info(sig_type: int, key_name_value: bytes | None = None) -> bytes:
    value = tlv(SIGNATURE_TYPE, nni(sig_type))
    if key_name_value is not None:
        value += tlv(KEY_LOCATOR, tlv(NAME, key_name_value))
    return tlv(SIGNATURE_INFO, value)


# --- decoding (general path: metadata, first segment, control responses) ----------------------


class DataPacket(NamedTuple):
    """The fields of a Data packet ndnsci uses; ``signed`` is the signed portion."""

    name_value: bytes
    content_type: int
    freshness_ms: int | None
    final_block_id: bytes | None
    content: bytes
    signature_type: int
    key_locator: bytes | None  # name TLV-VALUE
    signature_value: bytes
    signed: bytes

    @property
    def components(self) -> list[bytes]:
        return split_components(self.name_value)

    def digest_ok(self) -> bool:
        return (
            self.signature_type == SIG_DIGEST_SHA256
            and hashes.sha256(len(self.signed))(self.signed).digest() == self.signature_value
        )


def parse_data(wire: bytes | bytearray | memoryview) -> DataPacket:
    """Parse one Data packet (``06 LL ...``); raises TlvError when malformed."""
    wire = bytes(wire)
    fields = iter_tlvs(wire, 0, len(wire))
    if len(fields) != 1 or fields[0][0] != DATA:
        raise TlvError("not a Data packet")
    _, start, end = fields[0]
    found: dict[int, tuple[int, int]] = {}
    signed_end = end
    for typ, vs, ve in iter_tlvs(wire, start, end):
        found.setdefault(typ, (vs, ve))
        if typ == SIGNATURE_VALUE:
            signed_end = vs - (2 if ve - vs < 253 else 4)
    if NAME not in found or SIGNATURE_INFO not in found or SIGNATURE_VALUE not in found:
        raise TlvError("Data without Name or signature")
    content_type, freshness, fbid = CT_BLOB, None, None
    if META_INFO in found:
        for typ, vs, ve in iter_tlvs(wire, *found[META_INFO]):
            if typ == CONTENT_TYPE:
                content_type = read_nni(wire[vs:ve])
            elif typ == FRESHNESS_PERIOD:
                freshness = read_nni(wire[vs:ve])
            elif typ == FINAL_BLOCK_ID:
                fbid = wire[vs:ve]
    sig_type, key_locator = -1, None
    for typ, vs, ve in iter_tlvs(wire, *found[SIGNATURE_INFO]):
        if typ == SIGNATURE_TYPE:
            sig_type = read_nni(wire[vs:ve])
        elif typ == KEY_LOCATOR:
            for ktyp, kvs, kve in iter_tlvs(wire, vs, ve):
                if ktyp == NAME:
                    key_locator = wire[kvs:kve]
    name_start = found[NAME][0] - (2 if found[NAME][1] - found[NAME][0] < 253 else 4)
    content = wire[slice(*found[CONTENT])] if CONTENT in found else b""
    return DataPacket(
        name_value=wire[slice(*found[NAME])],
        content_type=content_type,
        freshness_ms=freshness,
        final_block_id=fbid,
        content=content,
        signature_type=sig_type,
        key_locator=key_locator,
        signature_value=wire[slice(*found[SIGNATURE_VALUE])],
        signed=wire[name_start:signed_end],
    )


class InterestPacket(NamedTuple):
    name_value: bytes
    can_be_prefix: bool
    must_be_fresh: bool
    nonce: int | None
    lifetime_ms: int | None


def parse_interest(wire: bytes | bytearray | memoryview) -> InterestPacket:
    wire = bytes(wire)
    fields = iter_tlvs(wire, 0, len(wire))
    if len(fields) != 1 or fields[0][0] != INTEREST:
        raise TlvError("not an Interest")
    name, cbp, mbf, nonce, lifetime = None, False, False, None, None
    for typ, vs, ve in iter_tlvs(wire, fields[0][1], fields[0][2]):
        if typ == NAME and name is None:
            name = wire[vs:ve]
        elif typ == CAN_BE_PREFIX:
            cbp = True
        elif typ == MUST_BE_FRESH:
            mbf = True
        elif typ == NONCE:
            nonce = int.from_bytes(wire[vs:ve], "big")
        elif typ == INTEREST_LIFETIME:
            lifetime = read_nni(wire[vs:ve])
    if name is None:
        raise TlvError("Interest without Name")
    return InterestPacket(name, cbp, mbf, nonce, lifetime)


class LpFrame(NamedTuple):
    """What NDNd's NDNLPv2 wrapper says about a network-layer packet."""

    start: int  # the wrapped packet, as offsets into the receive buffer
    end: int
    pit_token: bytes | None = None
    nack_reason: int | None = None  # set when the packet is a Nack of the wrapped Interest
    congestion_mark: int = 0


def unwrap_lp(buf: bytes | bytearray | memoryview, start: int, end: int) -> LpFrame | None:
    """The fragment of an LpPacket (value between ``start`` and ``end``); None if it has none."""
    token, reason, mark = None, None, 0
    for typ, vs, ve in iter_tlvs(buf, start, end):
        if typ == LP_FRAGMENT:
            return LpFrame(vs, ve, token, reason, mark)
        if typ == LP_PIT_TOKEN:
            token = bytes(buf[vs:ve])
        elif typ == LP_NACK:
            reason = 0
            for rtyp, rvs, rve in iter_tlvs(buf, vs, ve):
                if rtyp == LP_NACK_REASON:
                    reason = read_nni(buf[rvs:rve])
        elif typ == LP_CONGESTION_MARK:
            mark = read_nni(buf[vs:ve])
    return None


def lp_header(packet_size: int, pit_token: bytes | None) -> bytes:
    """What :func:`lp_wrap` puts before the packet (``b""`` without a token)."""
    if pit_token is None:
        return b""
    value = b"\x62" + varnum(len(pit_token)) + pit_token + b"\x50" + varnum(packet_size)
    return b"\x64" + varnum(len(value) + packet_size) + value


def lp_wrap(packet: bytes, pit_token: bytes | None) -> bytes:
    """Echo NDNd's PIT token back with the reply (it routes the Data to the right thread)."""
    if pit_token is None:
        return packet
    value = b"\x62" + varnum(len(pit_token)) + pit_token + b"\x50" + varnum(len(packet))
    return b"\x64" + varnum(len(value) + len(packet)) + value + packet


def frame_packets(
    buf: bytes | bytearray | memoryview, start: int, end: int
) -> tuple[list[tuple[int, int, int, int]], int]:
    """Complete top-level TLVs in ``buf[start:end]`` as ``(type, start, value start, end)``.

    Returns them with the offset where the first incomplete packet begins (stream framing).
    Raises TlvError on a packet larger than any forwarder would send (a desynchronised stream).
    """
    out = []
    pos = start
    while pos < end:
        try:
            typ, p = read_varnum(buf, pos)
            length, p = read_varnum(buf, p)
        except IndexError:
            break
        if length > 0x10000:
            raise TlvError(f"packet of {length} bytes: stream out of sync")
        if p + length > end:
            break
        out.append((typ, pos, p, p + length))
        pos = p + length
    return out, pos
