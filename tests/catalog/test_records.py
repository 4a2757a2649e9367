"""catalog/records.py: the bulk path's shortcuts give what the plain code gives, errors included."""

from __future__ import annotations

import codecs
import json

import pytest

from ndnsci.catalog.records import RecordError, decode_line, parse_lines, parse_record

ODD_LINES = [
    b'{"name": "/a/b", "scheme": "s"}',
    b'{"name": "/a/b", "scheme": "s"}  \r',
    b'{"name": "/a/b", "scheme": "s"}\x0b',  # not JSON whitespace: extra data
    b'{"name": "/a/b", "scheme": "s"} {}',
    b'{"name": "/a/b", "scheme": "s"',
    b'{"name": "/a/\xff"}',  # not UTF-8
    b'{"name": "/a/\xed\xa0\x80"}',  # an encoded surrogate: json.loads passes it through
    b'{"name": "/a/\\ud800"}',
    codecs.BOM_UTF8 + b'{"name": "/a/b"}',
    '{"name": "/a/b"}'.encode("utf-16-le"),
    b'{"a": [[[[1]]]]}',
    b"[1, 2]",
    b"not json",
    b"",
]


@pytest.mark.parametrize("line", ODD_LINES + [x.decode("latin-1") for x in ODD_LINES])
def test_decode_line_is_json_loads(line):
    try:
        expected: object = json.loads(line)
    except ValueError as exc:
        expected = (type(exc), str(exc))
    try:
        got: object = decode_line(line)
    except ValueError as exc:
        got = (type(exc), str(exc))
    assert got == expected


@pytest.mark.parametrize("scheme", [["cmip5"], {"a": 1}, "Bad", 5])
def test_a_scheme_of_the_wrong_type_is_a_record_error(scheme):
    parse_record({"name": "/a/b", "scheme": "cmip5"})  # a good scheme known first
    with pytest.raises(RecordError, match="'scheme' must be a scheme identifier"):
        parse_record({"name": "/a/b", "scheme": scheme})


def test_file_name_time_ranges_read_once_are_the_same_every_time():
    lines = [
        json.dumps({"name": f"/X/tas_Amon_M_e_r{i}_185001-200512.nc", "scheme": "s"})
        for i in range(3)
    ]
    lines.append(json.dumps({"name": "/X/tas_Amon_M_e_r9_185013-200512.nc", "scheme": "s"}))
    parsed = parse_lines(lines)
    times = [(r.time_start, r.time_end) for r in parsed.records]
    assert times[:3] == [("1850-01-01T00:00:00", "2005-12-31T23:59:59")] * 3
    assert times[3] == (None, "2005-12-31T23:59:59")  # month 13: no start, as before


@pytest.mark.parametrize(
    "facets",
    [{"a": 1}, {"a": ""}, {"a": None, "b": "x\u0085"}, {"a": "x" * 2000}, {"a": ["x"]}],
)
def test_each_bad_facet_value_is_named(facets):
    with pytest.raises(RecordError, match=f"facet '{list(facets)[-1]}' must be a non-empty"):
        parse_record({"name": "/a/b", "scheme": "s", "facets": facets})
