"""The lean codec against python-ndn's encoder, byte for byte, over many random inputs."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ndn.encoding import Component, InterestParam, MetaInfo, Name, make_data, make_interest
from ndn.encoding import parse_data as pyndn_parse_data
from ndn.security import DigestSha256Signer
from ndn.security.signer.ed25519_signer import Ed25519Signer

from ndnsci.errors import InvalidNameError
from ndnsci.ndn import keys, rdr, tlv
from ndnsci.ndn.name import from_uri, to_uri

generic_values = st.binary(min_size=0, max_size=40)
components = st.one_of(
    generic_values.map(lambda v: bytes(Component.from_bytes(v))),
    st.integers(0, 2**64 - 1).map(lambda n: bytes(Component.from_segment(n))),
    st.integers(0, 2**64 - 1).map(lambda n: bytes(Component.from_version(n))),
    st.sampled_from([b"metadata", b"ls", b"key"]).map(
        lambda v: bytes(Component.from_bytes(v, Component.TYPE_KEYWORD))
    ),
    st.tuples(
        st.integers(9, 0xFFFF).filter(lambda t: t not in (0x20, 0x32, 0x34, 0x36, 0x38, 0x3A)),
        generic_values,
    ).map(lambda tv: bytes(Component.from_bytes(tv[1], tv[0]))),
)
names = st.lists(components, min_size=1, max_size=12)


def _periods_only(comp: bytes) -> bool:
    typ = tlv.component_type(comp)
    numbered = (0x01, 0x02, 0x32, 0x34, 0x36, 0x38, 0x3A)
    return typ not in numbered and not tlv.component_value(comp).strip(b".")


@settings(max_examples=300)
@given(names)
def test_uri_round_trip_matches_python_ndn(comps: list[bytes]) -> None:
    uri = to_uri(comps)
    assert from_uri(uri) == comps  # every name survives its URI, byte for byte
    if not any(_periods_only(c) for c in comps):  # (those: the next test)
        assert uri == Name.to_str(comps)  # the same text as python-ndn writes
        assert from_uri(Name.to_str(comps)) == comps  # and python-ndn's text reads back


@pytest.mark.parametrize("value", [b"", b".", b"..", b"...", b"....."])
def test_periods_only_components_follow_the_uri_spec_on_the_same_wire(value: bytes) -> None:
    """A periods-only component gets three more periods in its URI (NDN packet spec; ndn-cxx,
    NDNts): the translators and the data plane write it so, and the wire name is python-ndn's
    encoding of the same component values."""
    from ndnsci_translators.names import build_name

    values = [b"CMS", b"store", value, b"f.root"]
    wire = Name.to_bytes([Component.from_bytes(v) for v in values])
    uri = to_uri([bytes(Component.from_bytes(v)) for v in values])
    assert uri == "/CMS/store/" + value.decode() + ".../f.root"
    assert uri == build_name([v.decode() for v in values])
    assert tlv.name_tlv(from_uri(uri)) == bytes(wire)  # python-ndn's encoding, byte for byte


@pytest.mark.parametrize(
    "uri", ["/a/b%2Fc", "/a/%00", "/x/32=metadata", "/v=5/seg=0", "ndn:/a", "/a/", "/8=%FF"]
)
def test_uri_parsing_matches_python_ndn(uri: str) -> None:
    assert from_uri(uri) == [bytes(c) for c in Name.from_str(uri.removeprefix("ndn:"))]


@pytest.mark.parametrize("uri", ["/seg=x", "/a/%zz", "/a/%4", "/70000=a"])
def test_bad_uris_are_refused(uri: str) -> None:
    with pytest.raises(InvalidNameError):
        from_uri(uri)


@settings(max_examples=300)
@given(
    names,
    st.integers(0, 2**32 - 1),
    st.one_of(st.none(), st.integers(0, 2**32 - 1)),
    st.booleans(),
    st.booleans(),
)
def test_interest_matches_python_ndn(comps, nonce, lifetime, cbp, mbf) -> None:
    ours = tlv.interest(b"".join(comps), nonce, lifetime, cbp, mbf)
    theirs = make_interest(
        comps, InterestParam(can_be_prefix=cbp, must_be_fresh=mbf, nonce=nonce, lifetime=lifetime)
    )
    assert ours == bytes(theirs)


@settings(max_examples=300)
@given(
    names,
    st.integers(0, 2**64 - 1),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 60_000)),
)
def test_segment_interest_template_matches_python_ndn(comps, seg, nonce, mbf, lifetime) -> None:
    template = tlv.SegmentInterests(b"".join(comps), lifetime, must_be_fresh=mbf)
    theirs = make_interest(
        [*comps, Component.from_segment(seg)],
        InterestParam(must_be_fresh=mbf, nonce=nonce, lifetime=lifetime),
    )
    assert template.encode(seg, nonce) == bytes(theirs)


@settings(max_examples=200)
@given(
    names,
    st.binary(max_size=9000),
    st.one_of(st.none(), st.integers(0, 10**7)),
    st.one_of(st.none(), st.integers(0, 2**40)),
    st.sampled_from([tlv.CT_BLOB, tlv.CT_NACK, tlv.CT_KEY]),
)
def test_digest_data_matches_python_ndn(comps, content, freshness, last, ctype) -> None:
    fbid = tlv.segment(last) if last is not None else None
    ours = tlv.data_digest(b"".join(comps), tlv.meta_info(ctype, freshness, fbid), content)
    theirs = make_data(
        comps,
        MetaInfo(content_type=ctype, freshness_period=freshness, final_block_id=fbid),
        content,
        signer=DigestSha256Signer(),
    )
    assert ours == bytes(theirs)
    parsed = tlv.parse_data(ours)
    assert parsed.digest_ok() and parsed.content == content
    assert parsed.final_block_id == fbid and parsed.freshness_ms == freshness


def test_ed25519_metadata_matches_python_ndn(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("NDNSCI_CONFIG_DIR", str(tmp_path))
    key = keys.create()
    key_name = from_uri(f"/p/32=key/{key.key_id}")
    name = from_uri("/p/file/32=metadata/v=7/seg=0")
    content = rdr.Metadata(
        b"".join(from_uri("/p/file/v=5")),
        tlv.segment(3),
        8000,
        30000,
        0o100644,
        5,
        sha256=hashlib.sha256(b"x").digest(),
    ).encode()
    meta = tlv.meta_info(tlv.CT_BLOB, 1000, tlv.segment(0))
    info = tlv.signature_info(tlv.SIG_ED25519, b"".join(key_name))
    ours = tlv.signed_data(b"".join(name), meta, content, info, key.sign)
    from Cryptodome.PublicKey import ECC

    der = ECC.import_key(key.pem).export_key(format="DER")
    theirs = make_data(
        name,
        MetaInfo(content_type=0, freshness_period=1000, final_block_id=tlv.segment(0)),
        content,
        signer=Ed25519Signer(key_name, der),
    )
    assert ours == bytes(theirs)
    parsed = tlv.parse_data(ours)
    assert keys.verify(key.public, parsed.signed, parsed.signature_value)
    assert not keys.verify(key.public, parsed.signed + b"x", parsed.signature_value)
    assert parsed.key_locator == b"".join(key_name)


def test_keys_in_one_process_each_sign_with_their_own(tmp_path, monkeypatch) -> None:
    """The parsed keys are cached per PEM (a producer signs every metadata answer): two keys,
    used in turn, never sign for each other, and a key created anew is the new one."""
    monkeypatch.setenv("NDNSCI_CONFIG_DIR", str(tmp_path))
    first, second = keys.create("one"), keys.create("two")
    for _ in range(2):
        for key, other in ((first, second), (second, first)):
            signature = key.sign(b"message")
            assert keys.verify(key.public, b"message", signature)
            assert not keys.verify(other.public, b"message", signature)
    replaced = keys.create("one", force=True)
    assert replaced.public != first.public and keys.load("one").key_id == replaced.key_id
    assert keys.verify(replaced.public, b"m", keys.load("one").sign(b"m"))


def test_parse_data_agrees_with_python_ndn() -> None:
    wire = bytes(
        make_data(
            "/a/b/v=1/seg=2",
            MetaInfo(freshness_period=5, final_block_id=tlv.segment(9)),
            b"hello",
            signer=DigestSha256Signer(),
        )
    )
    ours = tlv.parse_data(wire)
    name, meta, content, sig = pyndn_parse_data(wire)
    assert ours.components == [bytes(c) for c in name]
    assert ours.content == bytes(content) and ours.freshness_ms == meta.freshness_period
    assert ours.signed == b"".join(bytes(p) for p in sig.signature_covered_part)


def test_metadata_fields_round_trip_with_dpdk_widths() -> None:
    meta = rdr.Metadata(
        b"".join(from_uri("/a/v=9")), tlv.segment(4), 8000, 40000, 0o100644, 9, sha256=b"\x01" * 32
    )
    wire = meta.encode()
    assert bytes.fromhex("fdf500021f40") in wire  # SegmentSize: 3-byte type, 2-byte value
    assert rdr.Metadata.decode(wire) == meta
    assert meta.version == 9 and meta.last_segment == 4


def test_metadata_unknown_critical_field_is_refused_and_noncritical_skipped() -> None:
    base = rdr.Metadata(b"".join(from_uri("/a/v=9"))).encode()
    assert rdr.Metadata.decode(base + tlv.tlv(0xF520, b"x")).version == 9
    with pytest.raises(tlv.TlvError):
        rdr.Metadata.decode(base + tlv.tlv(0xF511, b"x"))


def test_listing_payload_is_ndn_dpdk_format() -> None:
    payload = rdr.encode_listing([(b"a.nc", False), (b"sub", True)])
    assert payload == b"a.nc\0sub/\0"
    assert rdr.decode_listing(payload) == [(b"a.nc", False), (b"sub", True)]


def test_captured_ndnd_packet_unwraps() -> None:
    # the metadata reply NDNd delivered to an application face (captured, see protocol.md)
    lp = bytes.fromhex(
        "6481507f067d072508057072 6f626508 05736d61 6c6c2008 6d657461 64617461 36080006 60d29ea3"
        "3f563201 00140c18 01001902 0fa01a03 32010215 1f071808 0570726f 62650805 736d616c"
        "6c360800 0660d29e a33f561a 03320102 16031b01 00172091 3a96580a 01955a53 62123e3a"
        "683c5480 52124eef 7b064dac bf96b6cc 7c1fa6".replace(" ", "")
    )
    frames, rest = tlv.frame_packets(lp, 0, len(lp))
    assert rest == len(lp) and frames[0][0] == tlv.LP_PACKET
    frame = tlv.unwrap_lp(lp, frames[0][2], frames[0][3])
    assert frame is not None and frame.nack_reason is None
    data = tlv.parse_data(lp[frame.start : frame.end])
    assert data.digest_ok()
    assert rdr.Metadata.decode(data.content).last_segment == 2


def test_framing_waits_for_incomplete_packets() -> None:
    packet = tlv.data_digest(b"".join(from_uri("/a")), tlv.meta_info(), b"x" * 300)
    stream = packet + packet[:100]
    frames, rest = tlv.frame_packets(stream, 0, len(stream))
    assert len(frames) == 1 and rest == len(packet)
