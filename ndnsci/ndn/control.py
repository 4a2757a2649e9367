"""Control plane: NFD management commands (prefix registration) through python-ndn's encoder.

Rare and not on the data path, so python-ndn builds the signed command Interest and parses the
ControlResponse; the bytes travel over our own :class:`~ndnsci.ndn.transport.Face`. NDNd accepts
``/localhost/nfd/...`` commands from local faces without checking their signature.
"""

from __future__ import annotations

import os
import time

from ndnsci.errors import TransportError
from ndnsci.ndn import tlv
from ndnsci.ndn.transport import Face

ORIGIN_APP = 0
_CHILD_INHERIT = 1


def register(face: Face, prefix: list[bytes], timeout: float = 4.0) -> None:
    """Register ``prefix`` towards ``face`` (``rib/register``, origin app, cost 0).

    Raises TransportError when the forwarder refuses or does not answer in time.
    """
    from ndn.app_support.nfd_mgmt import (  # type: ignore[import-untyped]
        make_command,
        parse_response,
    )
    from ndn.encoding import InterestParam, make_interest  # type: ignore[import-untyped]

    command = make_command(
        "rib", "register", name=list(prefix), origin=ORIGIN_APP, cost=0, flags=_CHILD_INHERIT
    )
    nonce = int.from_bytes(os.urandom(4), "big")
    wire = bytes(make_interest(command, InterestParam(lifetime=int(timeout * 1000), nonce=nonce)))
    face.send([wire])
    reply = _await_data(face, timeout)
    response = parse_response(reply.content)
    if response["status_code"] != 200:
        raise TransportError(
            f"the forwarder refused to register the prefix: "
            f"{response['status_code']} {response['status_text']}"
        )


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
