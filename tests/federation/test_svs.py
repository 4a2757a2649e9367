"""State Vector Sync v3 codec and node rules (the wire against NDNd: test_svs_interop.py)."""

from __future__ import annotations

import hashlib
import time

import pytest
from ndn.encoding import parse_interest  # python-ndn: an independent Interest decoder

from ndnsci.ndn import name, tlv
from ndnsci_catalog.federation import svs

from .test_envelope import KEY

A = b"".join(name.from_uri("/kisti"))
B = b"".join(name.from_uri("/csu/ndn"))


def test_a_state_vector_round_trips() -> None:
    state = {A: {1700000000: 5}, B: {1700000001: 2, 1600000000: 40}}
    assert svs.decode_state_vector(svs.encode_state_vector(state)) == state


def test_the_encoding_is_ndnds() -> None:
    """SvsData 0xC9 > StateVectorEntry 0xCA > Name, SeqNoEntry 0xD2 > 0xD4 boot, 0xD6 seq
    (std/ndn/svs/v3/definitions.go)."""
    wire = svs.encode_state_vector({A: {258: 7}})
    name_tlv = b"\x07\x07\x08\x05kisti"
    seq_entry = b"\xd2\x07\xd4\x02\x01\x02\xd6\x01\x07"
    entry = b"\xca" + bytes([len(name_tlv + seq_entry)]) + name_tlv + seq_entry
    assert wire == b"\xc9" + bytes([len(entry)]) + entry


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\xc8\x00",  # not SvsData
        b"\xc9\x05\xca\x03\xd2\x01",  # lengths past the end
        b"\xc9\x04\xca\x02\xd2\x00",  # an entry without a name
        b"\xc9\x09garbage!!",
    ],
)
def test_a_malformed_vector_raises(content: bytes) -> None:
    with pytest.raises(tlv.TlvError):
        svs.decode_state_vector(content)


def test_a_sync_interest_carries_its_data_and_the_parameters_digest() -> None:
    group = b"".join(name.from_uri("/ndnsci/catalog/sync"))
    data = tlv.signed_data(A + tlv.version(1), tlv.meta_info(), b"\xc9\x00",
                           tlv.signature_info(tlv.SIG_ED25519, A), KEY.sign)  # fmt: skip
    wire = svs.sync_interest(group, data, nonce=7)
    parsed_name, params, app_param, _ = parse_interest(wire)
    assert bytes(app_param) == data
    assert params.lifetime == svs.SYNC_LIFETIME_MS
    digest = bytes(parsed_name[-1])
    assert digest == tlv.component(tlv.PARAMETERS_SHA256, hashlib.sha256(
        tlv.tlv(tlv.APP_PARAMETERS, data)).digest())  # fmt: skip
    found = svs.sync_data_of(wire, group)
    assert found is not None and found.content == b"\xc9\x00"
    assert svs.sync_data_of(wire, b"".join(name.from_uri("/other"))) is None


def _node() -> svs.SyncNode:
    return svs.SyncNode(b"".join(name.from_uri("/g")), A, boot=10, key=KEY, key_name=A,
                        on_update=lambda _u: None)  # fmt: skip


def _sync_data(state: svs.StateVector) -> tlv.DataPacket:
    content = svs.encode_state_vector(state)
    return tlv.parse_data(tlv.data_digest(B, tlv.meta_info(), content))


def test_a_node_learns_others_but_not_claims_about_itself() -> None:
    node = _node()
    updates: list[svs.Update] = []
    node.on_update = updates.append
    node.publish(3)
    node._on_sync_data(_sync_data({A: {10: 99}, B: {20: 4}}))
    assert node.seq_of(A) == {10: 3}  # ours is ours to set
    assert node.seq_of(B) == {20: 4}
    assert updates == [svs.Update(B, 20, 4)]
    node._on_sync_data(_sync_data({B: {20: 2}}))  # an older vector: nothing new
    assert updates == [svs.Update(B, 20, 4)]


def test_an_outdated_vector_makes_the_node_answer_after_suppression() -> None:
    node = _node()
    node.publish(3)
    node._steady()
    node._on_sync_data(_sync_data({B: {20: 1}}))  # lacks our entry
    assert node._suppressing
    assert node._timer - time.monotonic() <= svs.SUPPRESSION


def test_a_vector_from_the_far_future_is_dropped() -> None:
    node = _node()
    node._on_sync_data(_sync_data({B: {2**40: 4}}))
    assert node.seq_of(B) == {}
