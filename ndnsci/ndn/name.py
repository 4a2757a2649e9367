"""NDN names as URIs (``/CMIP5/output1/.../v=1700000000/seg=3``) and as encoded components.

Loose input, strict output: :func:`from_uri` accepts what users type (percent escapes, typed
``v=``/``seg=``/``32=`` components, a trailing slash, ``//`` for an empty component as
python-ndn writes it) and yields encoded components; every other module works on those.
Component values are written and read by the one URI codec of ndnsci,
:mod:`ndnsci_translators.names` (periods-only components per the NDN URI spec), so a name the
translators build and the name the data plane sends are the same; the wire encoding is checked
against python-ndn's in the tests.
"""

from __future__ import annotations

from ndnsci.errors import InvalidNameError
from ndnsci.ndn import tlv
from ndnsci_translators import names as uri_codec

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
    if not text:
        return b""  # "/a//b": python-ndn's and ndnd's spelling of an empty component
    try:
        return uri_codec.value_from_uri(text)
    except ValueError as exc:
        raise InvalidNameError(str(exc)) from None


def to_uri(components: list[bytes] | tuple[bytes, ...]) -> str:
    """URI of encoded components (the inverse of :func:`from_uri`)."""
    return "/" + "/".join(component_to_uri(c) for c in components)


def value_to_uri(name_value: bytes) -> str:
    return to_uri(tlv.split_components(name_value))


def component_to_uri(comp: bytes) -> str:
    typ = tlv.component_type(comp)
    value = tlv.component_value(comp)
    if typ in _NUMBERED_NAMES:
        return f"{_NUMBERED_NAMES[typ]}={int.from_bytes(value, 'big')}"
    if typ in _HEX_NAMES:
        return f"{_HEX_NAMES[typ]}={value.hex()}"
    text = uri_codec.value_to_uri(bytes(value))
    return text if typ == tlv.GENERIC else f"{typ}={text}"


def is_prefix(prefix: list[bytes], components: list[bytes]) -> bool:
    return components[: len(prefix)] == prefix
