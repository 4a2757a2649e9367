"""parse_range on numbers longer than int() takes (4,300 digits) or than any file: 416, never
ValueError (which the gateway answered as a 500)."""

from __future__ import annotations

import pytest

from ndnsci_catalog.gateway.ranges import ByteRange, RangeNotSatisfiable, parse_range

HUGE = "9" * 5000


@pytest.mark.parametrize(
    "header",
    [f"bytes={HUGE}-", f"bytes=0-{HUGE}", f"bytes=-{HUGE}", f"bytes={HUGE}-{HUGE}",
     "bytes=-" + "1" * 20, "bytes=" + "1" * 20 + "-"],
)  # fmt: skip
def test_a_position_beyond_any_file_is_not_satisfiable(header: str):
    with pytest.raises(RangeNotSatisfiable):
        parse_range(header, 1000)


@pytest.mark.parametrize(
    ("header", "expected"),
    [("bytes=" + "0" * 5000 + "5-9", ByteRange(5, 9)),  # leading zeros are no digits
     ("bytes=0-" + "9" * 19, ByteRange(0, 999)),  # 19 digits: clipped at the end
     ("bytes=-" + "9" * 19, ByteRange(0, 999))],
)  # fmt: skip
def test_long_but_possible_positions_still_read(header: str, expected: ByteRange):
    assert parse_range(header, 1000) == expected
