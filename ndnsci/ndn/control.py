"""Control plane: NFD management commands through python-ndn's encoder.

Rare and not on the data path, so python-ndn builds the signed command Interest and parses the
ControlResponse; the bytes travel over our own :class:`~ndnsci.ndn.transport.Face`. NDNd accepts
``/localhost/nfd/...`` commands from local faces without checking their signature.

Besides registering an application's own prefix: faces towards other forwarders, routes over
them, strategy choices, and the FIB dataset (the federation links sites with these:
docs/federation.md).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ndnsci.errors import TransportError
from ndnsci.ndn import tlv
from ndnsci.ndn.transport import Face

ORIGIN_APP = 0
ORIGIN_STATIC = 255
_CHILD_INHERIT = 1
_CAPTURE = 2
MULTICAST = "/localhost/nfd/strategy/multicast"
#: FacePersistency: kept (and retried) however long the other side is away
PERMANENT = 2
_CONTROL_RESPONSE = 0x65
_STATUS_CODE = 0x66
_STATUS_TEXT = 0x67
_CONTROL_PARAMETERS = 0x68
_FACE_ID = 0x69
#: FaceId, Origin, Cost, Flags, Mask, ExpirationPeriod, FacePersistency
_NUMERIC_PARAMETERS = frozenset({0x69, 0x6F, 0x6A, 0x6C, 0x70, 0x6D, 0x85})
_URI, _LOCAL_URI = 0x72, 0x81
_STRING_PARAMETERS = frozenset({_URI, _LOCAL_URI})


def register(face: Face, prefix: list[bytes], timeout: float = 4.0) -> None:
    """Register ``prefix`` towards ``face`` (``rib/register``, origin app, cost 0).

    Raises TransportError when the forwarder refuses or does not answer in time.
    """
    command(face, "rib", "register", timeout, name=list(prefix), origin=ORIGIN_APP, cost=0,
            flags=_CHILD_INHERIT)  # fmt: skip


def command(
    face: Face,
    module: str,
    verb: str,
    timeout: float = 4.0,
    accept: tuple[int, ...] = (),
    **params: Any,
) -> Response:
    """Send one management command; its response, or TransportError when the forwarder
    refuses it (a status other than 200 and not in ``accept``, e.g. 409 for a face that
    exists already) or does not answer in time."""
    response = _request(face, module, verb, timeout, **params)
    if response.status != 200 and response.status not in accept:
        raise TransportError(f"the forwarder refused {module}/{verb}: {response}")
    return response


@dataclass(frozen=True)
class Response:
    """A ControlResponse: status, text, the numeric and the URI ControlParameters (by
    TLV-TYPE)."""

    status: int
    text: str
    numbers: dict[int, int]
    strings: dict[int, str] = field(default_factory=dict)

    @property
    def face_id(self) -> int | None:
        return self.numbers.get(_FACE_ID)

    @property
    def local_uri(self) -> str | None:
        return self.strings.get(_LOCAL_URI)

    def __str__(self) -> str:
        return f"{self.status} {self.text}"


def parse_response(content: bytes) -> Response:
    """Read a ControlResponse (NDNd orders some parameters differently from NFD, which
    python-ndn's strict decoder refuses, so this reads them by type)."""
    top = tlv.iter_tlvs(content, 0, len(content))
    if len(top) != 1 or top[0][0] != _CONTROL_RESPONSE:
        raise TransportError("the forwarder's answer is not a ControlResponse")
    status, text, numbers, strings = 0, "", {}, {}
    for typ, vs, ve in tlv.iter_tlvs(content, top[0][1], top[0][2]):
        if typ == _STATUS_CODE:
            status = tlv.read_nni(content[vs:ve])
        elif typ == _STATUS_TEXT:
            text = content[vs:ve].decode(errors="replace")
        elif typ == _CONTROL_PARAMETERS:
            for ptyp, pvs, pve in tlv.iter_tlvs(content, vs, ve):
                if ptyp in _NUMERIC_PARAMETERS:
                    numbers[ptyp] = tlv.read_nni(content[pvs:pve])
                elif ptyp in _STRING_PARAMETERS:
                    strings[ptyp] = bytes(content[pvs:pve]).decode(errors="replace")
    return Response(status, text, numbers, strings)


def _request(face: Face, module: str, verb: str, timeout: float, **params: Any) -> Response:
    from ndn.app_support.nfd_mgmt import make_command  # type: ignore[import-untyped]
    from ndn.encoding import InterestParam, make_interest  # type: ignore[import-untyped]

    name = make_command(module, verb, **params)
    nonce = int.from_bytes(os.urandom(4), "big")
    wire = bytes(make_interest(name, InterestParam(lifetime=int(timeout * 1000), nonce=nonce)))
    face.send([wire])
    return parse_response(_await_data(face, timeout).content)


def create_face(face: Face, uri: str, timeout: float = 4.0) -> int:
    """A face towards another forwarder (``udp4://host:port``, ...); its id. An existing face
    to the same remote is reused (the forwarder answers 409 with its id)."""
    response = _request(face, "faces", "create", timeout, uri=uri.encode(),
                        face_persistency=PERMANENT)  # fmt: skip
    face_id = response.numbers.get(_FACE_ID)
    if response.status not in (200, 409) or not face_id:
        raise TransportError(f"the forwarder refused a face to {uri}: {response}")
    return face_id


def add_route(
    face: Face,
    prefix: list[bytes],
    face_id: int,
    *,
    cost: int = 0,
    origin: int = ORIGIN_STATIC,
    capture: bool = False,
) -> None:
    """Route ``prefix`` over face ``face_id`` (``rib/register`` with a FaceId). ``capture``:
    the routes of shorter prefixes do not apply below it (a producer registered on the root
    with child-inherit would otherwise share every more specific entry)."""
    flags = _CHILD_INHERIT | (_CAPTURE if capture else 0)
    command(face, "rib", "register", name=list(prefix), face_id=face_id, origin=origin,
            cost=cost, flags=flags)  # fmt: skip


def remove_route(
    face: Face, prefix: list[bytes], face_id: int, origin: int = ORIGIN_STATIC
) -> None:
    command(face, "rib", "unregister", name=list(prefix), face_id=face_id, origin=origin)


def set_strategy(face: Face, prefix: list[bytes], strategy: str) -> None:
    """``strategy-choice/set``, e.g. :data:`MULTICAST` for a sync group's prefix."""
    from ndn.encoding import Name

    command(face, "strategy-choice", "set", name=list(prefix), strategy=Name.from_str(strategy))


def fib(face: Face, timeout: float = 4.0) -> dict[bytes, list[tuple[int, int]]]:
    """The FIB: each prefix (name TLV-VALUE) -> its next hops as (face id, cost)."""
    from ndn.app_support.nfd_mgmt import FibStatus

    status = FibStatus.parse(dataset(face, "fib/list", timeout))
    table: dict[bytes, list[tuple[int, int]]] = {}
    for entry in status.entries:
        name = b"".join(bytes(c) for c in entry.name)
        table[name] = [(int(h.face_id), int(h.cost or 0)) for h in entry.next_hop_records]
    return table


def rib(face: Face, timeout: float = 4.0) -> list[tuple[bytes, int, int, int]]:
    """The RIB's routes as (prefix TLV-VALUE, face id, origin, cost)."""
    from ndn.app_support.nfd_mgmt import RibStatus

    status = RibStatus.parse(dataset(face, "rib/list", timeout))
    routes = []
    for entry in status.entries:
        prefix = b"".join(bytes(c) for c in entry.name)
        for r in entry.routes:
            routes.append((prefix, int(r.face_id), int(r.origin or 0), int(r.cost or 0)))
    return routes


#: FaceStatus fields read by :func:`faces` (NFD face management protocol)
_FACE_FIELDS = {
    0x69: "face_id", 0x90: "in_interests", 0x91: "in_data", 0x92: "out_interests",
    0x93: "out_data", 0x94: "in_bytes", 0x95: "out_bytes",
}  # fmt: skip


def faces(face: Face, timeout: float = 4.0) -> list[dict[str, int | str]]:
    """The face table: id, remote URI and the packet and byte counters of each face."""
    content = dataset(face, "faces/list", timeout)
    table: list[dict[str, int | str]] = []
    for typ, vs, ve in tlv.iter_tlvs(content, 0, len(content)):
        if typ != 0x80:  # FaceStatus
            continue
        entry: dict[str, int | str] = {}
        for ftyp, fvs, fve in tlv.iter_tlvs(content, vs, ve):
            if ftyp == 0x72:  # Uri
                entry["uri"] = content[fvs:fve].decode(errors="replace")
            elif ftyp in _FACE_FIELDS:
                entry[_FACE_FIELDS[ftyp]] = tlv.read_nni(content[fvs:fve])
        table.append(entry)
    return table


def dataset(face: Face, path: str, timeout: float = 4.0) -> bytes:
    """A status dataset (``/localhost/nfd/<path>``), all its segments joined."""
    prefix = b"".join(tlv.generic(p) for p in ("localhost", "nfd", *path.split("/")))
    parts: list[bytes] = []
    name = prefix
    can_be_prefix = True
    while True:
        nonce = int.from_bytes(os.urandom(4), "big")
        face.send([tlv.interest(name, nonce, int(timeout * 1000), can_be_prefix, True)])
        data = _await_data(face, timeout)
        parts.append(data.content)
        comps = data.components
        last = data.final_block_id
        if last is None or comps[-1] == last or tlv.component_type(comps[-1]) != tlv.SEGMENT:
            return b"".join(parts)
        name = b"".join(comps[:-1]) + tlv.segment(tlv.component_number(comps[-1]) + 1)
        can_be_prefix = False


def _await_data(face: Face, timeout: float) -> tlv.DataPacket:
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        face.fill(remaining)
        for typ, first, value_start, last in face.packets():
            start, end = first, last
            if typ == tlv.LP_PACKET:
                frame = tlv.unwrap_lp(face.buf, value_start, end)
                if frame is None or frame.nack_reason is not None:
                    continue
                start, end = frame.start, frame.end
            if face.buf[start] == tlv.DATA:
                return tlv.parse_data(face.view[start:end])
    raise TransportError(f"the forwarder at {face.uri} did not answer a management command")
