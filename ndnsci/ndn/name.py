"""NDN names as URIs (``/CMIP5/output1/.../v=1700000000/seg=3``) and as encoded components.

Loose input, strict output: :func:`from_uri` accepts what users type (percent escapes, typed
``v=``/``seg=``/``32=`` components, a trailing slash) and yields encoded components; every
other module works on those. The URI syntax is python-ndn's (and ndnd's): checked against
``ndn.encoding.Name`` in the tests.
"""

from __future__ import annotations

import string

from ndnsci.errors import InvalidNameError
from ndnsci.ndn import tlv

# RFC 3986 unreserved characters are written as they are; everything else is %XX-escaped
_PLAIN = frozenset((string.ascii_letters + string.digits + "-._~").encode())
_NUMBERED = {
    "seg": tlv.SEGMENT,
    "off": tlv.BYTE_OFFSET,
    "v": tlv.VERSION,
    "t": tlv.TIMESTAMP,
    "seq": tlv.SEQUENCE_NUM,
}
_NUMBERED_NAMES = {typ: prefix for prefix, typ in _NUMBERED.items()}
_HEX_TYPES = {"sha256digest": tlv.IMPLICIT_SHA256, "params-sha256": tlv.PARAMETERS_SHA256}
_HEX_NAMES = {typ: prefix for prefix, typ in _HEX_TYPES.items()}


def from_uri(uri: str) -> list[bytes]:
    """Encoded components of a name URI.

    >>> [c.hex() for c in from_uri("/a/v=1/seg=0")]
    ['080161', '360101', '320100']
    """
    text = uri.removeprefix("ndn:")
    slashes = text.startswith("/") + text.endswith("/")
    text = text.removeprefix("/").removesuffix("/")
    if not text and slashes <= 1:
        return []
    return [_component_from_uri(part) for part in text.split("/")]


def _component_from_uri(part: str) -> bytes:
    typ = tlv.GENERIC
    head, sep, rest = part.partition("=")
    if sep:
        if head in _NUMBERED:
            return tlv.component(_NUMBERED[head], tlv.nni(_int(rest, part)))
        if head in _HEX_TYPES:
            try:
                return tlv.component(_HEX_TYPES[head], bytes.fromhex(rest))
            except ValueError as exc:
                raise InvalidNameError(f"bad hex in name component {part!r}") from exc
        typ = _int(head, part)
        if not 0 < typ <= 0xFFFF:
            raise InvalidNameError(f"name component type {typ} out of range in {part!r}")
        part = rest
    return tlv.component(typ, _unescape(part))


def _int(text: str, part: str) -> int:
    if not text.isdigit():
        raise InvalidNameError(f"bad number in name component {part!r}")
    return int(text)


def _unescape(text: str) -> bytes:
    out = bytearray()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%":
            try:
                out.append(int(text[i + 1 : i + 3], 16))
            except ValueError as exc:
                raise InvalidNameError(f"bad percent escape in {text!r}") from exc
            if len(text[i + 1 : i + 3]) != 2:
                raise InvalidNameError(f"bad percent escape in {text!r}")
            i += 3
        else:
            out += ch.encode()
            i += 1
    return bytes(out)


def to_uri(components: list[bytes] | tuple[bytes, ...]) -> str:
    """URI of encoded components (the inverse of :func:`from_uri`)."""
    uri = "/" + "/".join(component_to_uri(c) for c in components)
    # a trailing empty component needs its own slash ("/a//" is /a plus an empty component)
    return uri + "/" if components and components[-1] == b"\x08\x00" else uri


def value_to_uri(name_value: bytes) -> str:
    return to_uri(tlv.split_components(name_value))


def component_to_uri(comp: bytes) -> str:
    typ = tlv.component_type(comp)
    value = tlv.component_value(comp)
    if typ in _NUMBERED_NAMES:
        return f"{_NUMBERED_NAMES[typ]}={int.from_bytes(value, 'big')}"
    if typ in _HEX_NAMES:
        return f"{_HEX_NAMES[typ]}={value.hex()}"
    text = "".join(chr(b) if b in _PLAIN else f"%{b:02X}" for b in value)
    return text if typ == tlv.GENERIC else f"{typ}={text}"


def is_prefix(prefix: list[bytes], components: list[bytes]) -> bool:
    return components[: len(prefix)] == prefix
