"""Control plane: NFD management commands (prefix registration) through python-ndn's encoder.

Rare and not on the data path, so python-ndn builds the signed command Interest and parses the
ControlResponse; the bytes travel over our own :class:`~ndnsci.ndn.transport.Face`. NDNd accepts
``/localhost/nfd/...`` commands from local faces without checking their signature.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ndnsci.errors import TransportError
from ndnsci.ndn import tlv
from ndnsci.ndn.transport import Face

ORIGIN_APP = 0
ORIGIN_STATIC = 255
_CHILD_INHERIT = 1


def register(face: Face, prefix: list[bytes], timeout: float = 4.0) -> None:
    """Register ``prefix`` towards ``face`` (``rib/register``, origin app, cost 0).

    Raises TransportError when the forwarder refuses or does not answer in time.
    """
    command(
        face,
        "rib",
        "register",
        timeout,
        name=list(prefix),
        origin=ORIGIN_APP,
        cost=0,
        flags=_CHILD_INHERIT,
    )


def command(
    face: Face,
    module: str,
    verb: str,
    timeout: float = 4.0,
    accept: tuple[int, ...] = (),
    **params: Any,
) -> dict[str, Any]:
    """Send one NFD management command (``/localhost/nfd/<module>/<verb>``) through ``face``;
    the ControlResponse's status and parameters.

    Raises TransportError when the forwarder refuses (status >= 300 and not in ``accept``, e.g.
    409 for a face that exists already) or does not answer.
    """
    from ndn.app_support.nfd_mgmt import make_command  # type: ignore[import-untyped]
    from ndn.encoding import InterestParam, make_interest  # type: ignore[import-untyped]

    name = make_command(module, verb, **params)
    nonce = int.from_bytes(os.urandom(4), "big")
    wire = bytes(make_interest(name, InterestParam(lifetime=int(timeout * 1000), nonce=nonce)))
    face.send([wire])
    reply = _await_data(face, timeout)
    response = parse_response(reply.content)
    if response["status_code"] >= 300 and response["status_code"] not in accept:
        raise TransportError(
            f"the forwarder refused {module}/{verb}: "
            f"{response['status_code']} {response['status_text']}"
        )
    return response


# ControlResponse fields (NFD management protocol); python-ndn's parser refuses the fields NDNd
# adds to a faces/create answer (e.g. BaseCongestionMarkingInterval), so ours skips unknown ones
_RESPONSE, _STATUS_CODE, _STATUS_TEXT, _PARAMETERS = 0x65, 0x66, 0x67, 0x68
_NUMBERS = {0x69: "face_id", 0x6A: "cost", 0x6C: "flags", 0x6F: "origin", 0x85: "face_persistency"}
_STRINGS = {0x72: "uri", 0x81: "local_uri"}


def parse_response(content: bytes | memoryview) -> dict[str, Any]:
    """Status code, text and the parameters ndnsci uses of a ControlResponse."""
    buf = bytes(content)
    out: dict[str, Any] = {"status_code": 0, "status_text": ""}
    for typ, start, end in tlv.iter_tlvs(buf, 0, len(buf)):
        if typ != _RESPONSE:
            continue
        for ftyp, fstart, fend in tlv.iter_tlvs(buf, start, end):
            if ftyp == _STATUS_CODE:
                out["status_code"] = tlv.read_nni(buf[fstart:fend])
            elif ftyp == _STATUS_TEXT:
                out["status_text"] = buf[fstart:fend].decode(errors="replace")
            elif ftyp == _PARAMETERS:
                for ptyp, pstart, pend in tlv.iter_tlvs(buf, fstart, fend):
                    if ptyp in _NUMBERS:
                        out[_NUMBERS[ptyp]] = tlv.read_nni(buf[pstart:pend])
                    elif ptyp in _STRINGS:
                        out[_STRINGS[ptyp]] = buf[pstart:pend].decode(errors="replace")
    return out


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
