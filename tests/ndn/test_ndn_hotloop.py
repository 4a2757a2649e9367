"""The compiled per-packet loop (ndnsci/ndn/_hotloop.c) against the pure-Python one.

Both run the same transfers (real NDNd, ``ndnsci serve``, ``ndnd put``, a producer that tampers
or Nacks) and must give the same bytes and the same counters; then the same hostile byte stream
is fed to both decoders (a unix socket standing in for the forwarder, in this one layer's test)
and must leave the same file, bitmap, counters and queues.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from support import ndnd_put, once_published
from test_ndn_reliability import SEG, EvilProducer

from ndnsci.errors import FetchError, FetchTimeout, NotFoundError
from ndnsci.ndn import consumer, tlv
from ndnsci.ndn.name import from_uri
from ndnsci.ndn.transport import Face
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.transports import FetchOptions, Received

LOOPS = ("c", "python")
COUNTERS = ("size", "segments", "rejected", "nacks", "resumed_segments", "checksum", "sha256")


def test_the_compiled_loop_is_built_and_is_the_default(monkeypatch):
    assert consumer._hotloop is not None, "make setup / pip install did not build _hotloop.c"
    monkeypatch.delenv(consumer.HOTLOOP_ENV, raising=False)
    assert consumer.hotloop() == "c"
    monkeypatch.setenv(consumer.HOTLOOP_ENV, "python")
    assert consumer.hotloop() == "python"
    monkeypatch.setenv(consumer.HOTLOOP_ENV, "fortran")
    with pytest.raises(ValueError, match="auto, c or python"):
        consumer.hotloop()


def fetch_with(loop: str, monkeypatch, uri: str, out: Path, **kw):
    monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
    result = fetch_file(uri, str(out / loop), **kw)
    return result, (out / loop / uri.rsplit("/", 1)[-1]).read_bytes()


def counters(result) -> tuple:
    return tuple(getattr(result, name) for name in COUNTERS)


@pytest.mark.parametrize("size", [1, 8000, 8001, 1_000_003])
def test_both_loops_fetch_the_same_bytes_from_serve(serve, tmp_path, monkeypatch, size):
    data = os.urandom(size)
    (serve.root / "f.bin").write_bytes(data)
    serve.start()
    got = {loop: fetch_with(loop, monkeypatch, f"{serve.prefix}/f.bin", tmp_path) for loop in LOOPS}
    assert got["c"][1] == got["python"][1] == data
    assert counters(got["c"][0]) == counters(got["python"][0])
    assert got["c"][0].checksum == "verified" and got["c"][0].rejected == 0


def test_both_loops_read_ndnd_put(fw, ndnd_binary, tmp_path, monkeypatch):
    data = os.urandom(300_001)
    prefix = f"/test/hotloop-put{os.getpid()}/obj"
    with ndnd_put(ndnd_binary, prefix, data):
        got = {
            loop: once_published(lambda loop=loop: fetch_with(loop, monkeypatch, prefix, tmp_path))
            for loop in LOOPS
        }
    assert got["c"][1] == got["python"][1] == data
    assert counters(got["c"][0]) == counters(got["python"][0])


@pytest.mark.parametrize("digests", ["always", "auto"])
def test_both_loops_reject_tampered_segments_alike(fw, tmp_path, monkeypatch, digests):
    data = os.urandom(60 * SEG + 123)
    got = {}
    for loop in LOOPS:
        uri = f"/test/hotloop/tamper-{digests}-{loop}"
        with EvilProducer(uri, data, lambda seg, n: seg in (0, 7, 59, 60) and n == 0):
            got[loop] = fetch_with(
                loop, monkeypatch, uri, tmp_path, options=FetchOptions(segment_digests=digests)
            )
    assert got["c"][1] == got["python"][1] == data
    assert got["c"][0].rejected == got["python"][0].rejected == 4
    assert counters(got["c"][0])[1:5] == counters(got["python"][0])[1:5]
    # auto: the first fetch left the digests to the file's SHA-256, which caught the segments
    assert got["c"][0].attempts == got["python"][0].attempts == (1 if digests == "always" else 2)


def test_both_loops_defer_digests_alike(fw, tmp_path, monkeypatch):
    data = os.urandom(60 * SEG + 123)
    got = {}
    for loop in LOOPS:
        monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
        uri = f"/test/hotloop/defer-{loop}"
        part = str(tmp_path / f"{loop}.part")
        with EvilProducer(uri, data, lambda seg, n: seg in (0, 7, 59, 60) and n == 0):
            received = consumer.receive(uri, part, part + ".state", defer_digests=True)
        got[loop] = (received.digests_deferred, received.rejected, Path(part).read_bytes())
    assert got["c"] == got["python"]
    assert got["c"][:2] == (True, 0) and got["c"][2] != data  # written unchecked


def test_both_loops_give_up_on_an_always_tampered_segment_alike(fw, tmp_path, monkeypatch):
    data = os.urandom(20 * SEG)
    errors = {}
    for loop in LOOPS:
        monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
        uri = f"/test/hotloop/always-{loop}"
        with EvilProducer(uri, data, lambda seg, n: seg == 5), pytest.raises(FetchTimeout) as e:
            fetch_file(uri, str(tmp_path / loop), options=FetchOptions(max_retries=2))
        errors[loop] = str(e.value)
    assert errors["c"] == errors["python"]
    assert "segment 5: rejected (digest mismatch) after 2 retransmissions" in errors["c"]


class VanishingProducer(EvilProducer):
    """Serves the first 20 segments, then closes its face."""

    def _answer(self, interest: tlv.InterestPacket) -> bytes | None:
        comps = tlv.split_components(interest.name_value)
        last = comps[-1] if comps else tlv.generic(b"")
        if tlv.component_type(last) == tlv.SEGMENT and tlv.component_number(last) >= 20:
            self.stop.set()  # _run leaves its loop and closes the face
            return None
        return super()._answer(interest)


def test_both_loops_give_up_alike_when_the_producer_vanishes(fw, tmp_path, monkeypatch):
    data = os.urandom(60 * SEG)
    for loop in LOOPS:
        monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
        uri = f"/test/hotloop/vanish-{loop}"
        options = FetchOptions(window=4, cc="fixed", stall_seconds=2)
        producer = VanishingProducer(uri, data, lambda seg, n: False)
        with producer, pytest.raises(FetchTimeout) as e:
            fetch_file(uri, str(tmp_path / loop), options=options)
        # what the consumer holds (its bitmap: the JSON key line, then a byte per segment)
        state = (tmp_path / loop / f"vanish-{loop}.part.state").read_bytes()
        held = sum(state.split(b"\n", 1)[1])
        assert 0 < held <= 20  # only segments below 20 were ever sent
        assert str(e.value) == (
            f"no Data for 2 s ({60 - held} segments missing); the producer may be gone"
        )
        # what arrived stays for a resumed fetch
        assert (tmp_path / loop / f"vanish-{loop}.part.state").exists()


def test_both_loops_resume_the_same_state(serve, tmp_path, monkeypatch):
    data = os.urandom(50 * 8000 + 99)
    (serve.root / "f.bin").write_bytes(data)
    serve.start()
    uri = f"{serve.prefix}/f.bin"
    for loop in LOOPS:
        part, state_path = tmp_path / f"{loop}.part", tmp_path / f"{loop}.part.state"
        with Face() as face:
            target = consumer.discover(face, from_uri(uri), FetchOptions())
        state = consumer._State(str(state_path), target, resume=False)
        with open(part, "wb") as f:  # every third segment is there already
            for seg in range(0, 51, 3):
                f.seek(seg * 8000)
                f.write(data[seg * 8000 : (seg + 1) * 8000])
                state.done[seg] = 1
        state.flush()
        monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
        received = consumer.receive(uri, str(part), str(state_path), resume=True)
        assert part.read_bytes() == data
        assert received.resumed_segments == 17 and received.segments == 51


# --- the decoders on one hostile byte stream ----------------------------------------------------

PREFIX = b"".join(from_uri("/test/hotloop/crafted")) + tlv.version(7)
SIZE, LAST, SEGMENT_SIZE = 950, 9, 100
BLOB = tlv.meta_info(tlv.CT_BLOB, None, tlv.segment(LAST))


def data(seg: int, content: bytes | None = None, meta: bytes = BLOB) -> bytes:
    if content is None:
        content = payload()[seg * SEGMENT_SIZE : (seg + 1) * SEGMENT_SIZE]
    return tlv.data_digest(PREFIX + tlv.segment(seg), meta, content)


def payload() -> bytes:
    return bytes((i * 7 + 3) % 251 for i in range(SIZE))


def lp(packet: bytes, *fields: bytes) -> bytes:
    return tlv.tlv(tlv.LP_PACKET, b"".join(fields) + tlv.tlv(tlv.LP_FRAGMENT, packet))


def tampered(seg: int) -> bytes:
    good = bytearray(data(seg))
    good[-40] ^= 1  # a content byte: the digest no longer matches
    return bytes(good)


def hostile_stream() -> list[bytes]:
    nack = tlv.tlv(tlv.LP_NACK, tlv.tlv(tlv.LP_NACK_REASON, tlv.nni(150)))
    ours = tlv.interest(PREFIX + tlv.segment(4), 1, 1000, False, False)
    truncated_name = b"\x06\x06\x07\x10" + PREFIX[:2]  # a Name longer than its Data
    return [
        data(0),
        lp(data(1)),  # NDNd's bare fragment
        lp(data(2), tlv.tlv(tlv.LP_PIT_TOKEN, b"tok")),  # a fragment after other fields
        lp(data(3), tlv.tlv(tlv.LP_CONGESTION_MARK, tlv.nni(1))),
        tampered(5),
        data(6, b"short"),  # wrong size
        data(6),
        lp(truncated_name),
        b"\x06\x03\x07\x01\x08",  # a Name that does not fit
        data(7, meta=b"\x14\x00"),  # an empty MetaInfo: fine
        tlv.data_digest(b"".join(from_uri("/other/name")) + tlv.segment(8), BLOB, b"x" * 100),
        data(0),  # a duplicate
        tlv.tlv(tlv.LP_PACKET, nack + tlv.tlv(tlv.LP_FRAGMENT, ours)),
        data(99, b"beyond"),  # a segment beyond the last
        data(9),
    ]


def run_decoder(loop: str, tmp_path: Path, monkeypatch, stream: list[bytes]):
    monkeypatch.setenv(consumer.HOTLOOP_ENV, loop)
    path = tmp_path / f"{loop}.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    face = Face(f"unix://{path}")
    peer, _ = listener.accept()
    target = consumer.Target(PREFIX, LAST, SEGMENT_SIZE, SIZE, None, False, "digest", False, b"")
    out = tmp_path / f"{loop}.out"
    fd = os.open(out, os.O_RDWR | os.O_CREAT)
    result = Received(size=0, published_sha256=None, signer="digest")
    transfer = consumer.Transfer(
        face, target, fd=fd, state=consumer._State(None, target, False),
        opts=FetchOptions(max_retries=5), result=result, progress=None,
    )  # fmt: skip
    assert (transfer.core is not None) == (loop == "c")
    transfer._send(time.monotonic())  # the window's Interests: every segment in flight
    try:
        peer.sendall(b"".join(stream))
        while transfer.face.fill(0.5):
            transfer._receive()
    finally:
        os.close(fd)
        face.close()
        peer.close()
        listener.close()
    return (
        out.read_bytes(),
        bytes(transfer.state.done),
        (transfer.remaining, transfer.received_bytes, transfer.last_size),
        (result.rejected, result.nacks, result.congestion_marks),
        sorted(transfer.inflight),
        list(transfer.pending),
        sorted(transfer.must_be_fresh),
        dict(transfer.retries),
    )


def test_both_decoders_leave_the_same_state_after_a_hostile_stream(tmp_path, monkeypatch):
    stream = hostile_stream()
    c = run_decoder("c", tmp_path, monkeypatch, stream)
    python = run_decoder("python", tmp_path, monkeypatch, stream)
    assert c == python
    content, done, (remaining, received, _), (rejected, nacks, marks), *_ = c
    assert done == bytes([1, 1, 1, 1, 0, 0, 1, 1, 0, 1]) and remaining == 3
    assert received == 6 * SEGMENT_SIZE + 50
    assert rejected == 2 and nacks == 1 and marks == 1
    for seg in (0, 1, 2, 3, 6, 7, 9):
        assert content[seg * SEGMENT_SIZE : (seg + 1) * SEGMENT_SIZE] == data_content(seg)


def data_content(seg: int) -> bytes:
    return payload()[seg * SEGMENT_SIZE : (seg + 1) * SEGMENT_SIZE]


@pytest.mark.parametrize("loop", LOOPS)
def test_a_refusal_in_a_segment_is_a_clear_error_in_both_loops(tmp_path, monkeypatch, loop):
    refused = data(4, b"gone: a new version", tlv.meta_info(tlv.CT_NACK, None, None))
    with pytest.raises(NotFoundError, match="the producer says: gone: a new version"):
        run_decoder(loop, tmp_path, monkeypatch, [data(0), refused])


@pytest.mark.parametrize("loop", LOOPS)
def test_a_desynchronised_stream_is_an_error_in_both_loops(tmp_path, monkeypatch, loop):
    with pytest.raises(tlv.TlvError, match="out of sync"):
        run_decoder(loop, tmp_path, monkeypatch, [data(0), b"\x06\xfe\x00\x10\x00\x00"])


def test_the_c_loop_is_required_when_asked_for(monkeypatch):
    monkeypatch.setattr(consumer, "_hotloop", None)
    monkeypatch.setenv(consumer.HOTLOOP_ENV, "c")
    with pytest.raises(FetchError, match="without its C extension"):
        consumer.hotloop()
    monkeypatch.setenv(consumer.HOTLOOP_ENV, "auto")
    assert consumer.hotloop() == "python"
