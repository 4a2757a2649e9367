"""How the SDK cuts a publish into request bodies (ndnsci.sdk.publish): lines go on as read,
once in memory, and a body is streamed in pieces, never joined whole."""

from __future__ import annotations

import json

from ndnsci.sdk.publish import Batcher, PublishLimits, encode


def test_a_line_read_from_a_file_is_sent_as_it_is_without_a_copy() -> None:
    line = json.dumps({"name": "/a/b.nc", "scheme": "cmip5"}).encode() + b"\n"
    assert encode(line) is line
    # other shapes are normalised to one line ending in a newline
    assert encode(line.rstrip(b"\n")) == line
    assert encode(line[:-1] + b"\r\n") == line
    assert encode(line.decode()) == line
    assert encode({"name": "/a/b.nc", "scheme": "cmip5"}) == line
    assert encode(b'{"name": "/a"}\n\n') == b'{"name": "/a"}\n'  # trailing breaks go
    # blank lines are skipped; a line break inside is refused
    assert encode(b"   \n") is None
    assert encode(b"\n") is None
    assert encode(b"\r\n") is None
    assert encode(b'{"name": "/a"}\n{"name": "/b"}\n') == "not one JSON line: it holds a line break"


def test_a_batch_body_streams_in_pieces_that_add_up_to_its_lines() -> None:
    batcher = Batcher(PublishLimits(max_records=10_000, max_bytes=64 << 20))
    lines = [json.dumps({"name": f"/x/{i:06d}.nc", "pad": "p" * 300}).encode() + b"\n"
             for i in range(5000)]  # fmt: skip
    for line in lines:
        assert batcher.add(line) is None
    pending = batcher.flush()
    assert pending is not None
    assert all(kept is given for kept, given in zip(pending.encoded, lines, strict=True))
    pieces = list(pending.chunks(size=64 << 10))
    assert b"".join(pieces) == b"".join(lines)
    assert len(pieces) > 1
    # each piece stops at the first line that takes it past the size: at most one line over
    longest = max(len(line) for line in lines)
    assert all(len(piece) < (64 << 10) + longest for piece in pieces)
