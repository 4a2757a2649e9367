"""The producer's compiled segment path (ndnsci/ndn/_serveloop.c) against its Python loop.

The same Interests, one at a time and in batches, well-formed and not, go to a Producer with the
compiled path on and off: the replies must be the same bytes and the counters the same. A fake
face (a buffer and a list of what was sent) stands in for the forwarder in this one layer's
test; tests/ndn/test_ndn_transfer.py and bench/transfer.py run ``ndnsci serve`` end to end.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from ndnsci.errors import NdnError
from ndnsci.ndn import producer as producer_module
from ndnsci.ndn import tlv
from ndnsci.ndn.producer import Producer, version_of

PREFIX = [tlv.generic("sl"), tlv.generic("test")]
SEG = 8000


class FakeFace:
    """What Producer._answer uses of a Face: the receive buffer and send()."""

    def __init__(self, wire: bytes) -> None:
        self.buf = bytearray(wire) + bytearray(64)  # room after the end, as a real buffer has
        self.view = memoryview(self.buf)
        self.start, self.end = 0, len(wire)
        self.sent: list[bytes] = []
        self.sends = 0

    def packets(self) -> list[tuple[int, int, int, int]]:
        frames, self.start = tlv.frame_packets(self.buf, self.start, self.end)
        return frames

    def send(self, packets: list[bytes]) -> None:
        self.sent.extend(bytes(p) for p in packets)
        self.sends += 1


@pytest.fixture
def root(tmp_path: Path) -> Path:
    rng = random.Random(7)
    (tmp_path / "a.bin").write_bytes(rng.randbytes(5 * SEG + 123))
    (tmp_path / "b.bin").write_bytes(rng.randbytes(3 * SEG))
    (tmp_path / ("long-" + "x" * 200)).write_bytes(rng.randbytes(2 * SEG))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "c.bin").write_bytes(b"c" * 10)
    return tmp_path


def producers(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Producer, Producer]:
    monkeypatch.delenv("NDNSCI_HOTLOOP", raising=False)
    compiled = Producer(str(root), PREFIX, segment_size=SEG)
    monkeypatch.setenv("NDNSCI_HOTLOOP", "python")
    python = Producer(str(root), PREFIX, segment_size=SEG)
    monkeypatch.delenv("NDNSCI_HOTLOOP")
    assert compiled.compiled and not python.compiled
    return compiled, python


def versioned(root: Path, *path: str) -> bytes:
    return (
        b"".join(PREFIX)
        + b"".join(tlv.generic(p) for p in path)
        + tlv.version(version_of(os.stat(root.joinpath(*path))))
    )


def seg_interest(name: bytes, seg: int, width: int | None = None, nonce: int = 1) -> bytes:
    comp = tlv.segment(seg) if width is None else tlv.component(tlv.SEGMENT, seg.to_bytes(width))
    return tlv.interest(name + comp, nonce, 4000)


def answer(p: Producer, wire: bytes) -> tuple[bytes, dict[str, int], int]:
    """The bytes sent back (the wire is a stream), the counters, where the unread bytes start."""
    face = FakeFace(wire)
    replies = p._answer(face)  # type: ignore[arg-type]
    face.send(replies)
    SENDS[p.compiled] = face.sends
    return b"".join(face.sent), dict(p.stats), face.start


SENDS: dict[bool, int] = {}


def frames(joined: bytes) -> list[bytes]:
    found, end = tlv.frame_packets(joined, 0, len(joined))
    assert end == len(joined)
    return [joined[first:last] for _, first, _, last in found]


def warm(p: Producer, root: Path, *files: tuple[str, ...]) -> None:
    """Open the files the way a consumer does: the first segment goes the general way."""
    for path in files:
        answer(p, seg_interest(versioned(root, *path), 0))


FILES = (("a.bin",), ("b.bin",), ("long-" + "x" * 200,), ("d", "c.bin"))


def test_the_compiled_path_is_built_and_on_unless_switched_off(monkeypatch):
    assert producer_module._serveloop is not None, "pip install did not build _serveloop.c"
    monkeypatch.setenv("NDNSCI_HOTLOOP", "c")
    assert producer_module._compiled()
    monkeypatch.setattr(producer_module, "_serveloop", None)
    with pytest.raises(NdnError, match="without its C extension"):
        producer_module._compiled()
    monkeypatch.setenv("NDNSCI_HOTLOOP", "auto")
    assert not producer_module._compiled()


def test_every_segment_is_the_same_bytes_from_both_paths(root, monkeypatch):
    compiled, python = producers(root, monkeypatch)
    for p in (compiled, python):
        warm(p, root, *FILES)
    for path in FILES:
        name = versioned(root, *path)
        size = os.path.getsize(root.joinpath(*path))
        for seg in range(-(-size // SEG) + 1):  # one past the last: out of range
            for width in (None, 1, 2, 4, 8):
                for token in (None, b"\x01" * 8, b"t"):
                    wire = tlv.lp_wrap(seg_interest(name, seg, width), token)
                    got_c, stats_c, start_c = answer(compiled, wire)
                    got_py, stats_py, start_py = answer(python, wire)
                    assert got_c == got_py, (path, seg, width, token)
                    assert (stats_c, start_c) == (stats_py, start_py)
    assert compiled.stats["segments"] > 100


def test_a_batch_of_every_kind_gets_the_same_replies(root, monkeypatch):
    compiled, python = producers(root, monkeypatch)
    for p in (compiled, python):
        warm(p, root, *FILES)
    a = versioned(root, "a.bin")
    rng = random.Random(11)
    wires = [tlv.lp_wrap(seg_interest(a, s, nonce=s), b"tok%d" % s) for s in range(6)]
    wires += [
        seg_interest(versioned(root, "b.bin"), 2),  # no LpPacket
        seg_interest(a, 99),  # out of range
        seg_interest(a[:-3] + b"\x00\x00\x01", 0),  # another version: a Nack
        seg_interest(b"".join(PREFIX) + tlv.generic("nope"), 0),  # no such object
        tlv.tlv(0x06, b"\x07\x00"),  # a Data: ignored
        tlv.tlv(0x64, tlv.tlv(0x62, b"t") + tlv.tlv(0x03, b"\x00")),  # LpPacket without fragment
        tlv.tlv(tlv.INTEREST, tlv.tlv(0x0A, b"\x00" * 4)),  # an Interest without a name
    ]
    rng.shuffle(wires)
    wire = b"".join(wires) + seg_interest(a, 1)[:7]  # and the start of one more
    got_c, stats_c, start_c = answer(compiled, wire)
    got_py, stats_py, start_py = answer(python, wire)
    assert sorted(frames(got_c)) == sorted(frames(got_py))
    assert (stats_c, start_c) == (stats_py, start_py) and start_c == len(wire) - 7
    # six of a, one of b, and Nacks for the segment out of range, the other version, the
    # unknown name
    assert len(frames(got_c)) == 10


def test_many_replies_go_out_in_pieces_and_a_stale_file_is_rechecked(root, monkeypatch):
    compiled, python = producers(root, monkeypatch)
    a = versioned(root, "a.bin")
    for p in (compiled, python):
        warm(p, root, ("a.bin",))
    wire = b"".join(seg_interest(a, s % 6, nonce=s) for s in range(100))
    got_c, _, _ = answer(compiled, wire)
    got_py, _, _ = answer(python, wire)
    assert frames(got_c) == frames(got_py) and len(frames(got_c)) == 100
    assert SENDS[True] > 2  # sent in pieces of 2 * FLUSH_EVERY, not held to the end
    # a file due for its re-check goes the general way: rewritten, it is a new version, and the
    # old one's segments are refused (an application Nack), the same from both
    for p in (compiled, python):
        p.objects[a].checked = time.monotonic() - 10
    (root / "a.bin").write_bytes(b"new")
    got_c, stats_c, _ = answer(compiled, seg_interest(a, 1))
    got_py, stats_py, _ = answer(python, seg_interest(a, 1))
    assert got_c == got_py and tlv.parse_data(got_c).content_type == tlv.CT_NACK
    assert stats_c == stats_py


def test_hostile_bytes_leave_both_paths_alike(root, monkeypatch):
    compiled, python = producers(root, monkeypatch)
    for p in (compiled, python):
        warm(p, root, ("a.bin",))
    a = versioned(root, "a.bin")
    good = seg_interest(a, 3)
    rng = random.Random(5)
    for _ in range(3000):
        wire = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            wire[rng.randrange(len(wire))] = rng.randrange(256)
        results = []
        for p in (compiled, python):
            try:
                results.append(answer(p, bytes(wire))[0])
            except (tlv.TlvError, IndexError, ValueError, OverflowError) as exc:
                results.append(type(exc).__name__.encode())
        # what the compiled path does not answer it hands to the same Python code
        assert results[0] == results[1], bytes(wire).hex()
