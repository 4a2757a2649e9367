"""catalog/records.py: the bulk path's shortcuts give what the plain code gives, errors included."""

from __future__ import annotations

import codecs
import json
import random

import pytest

from ndnsci_catalog import bulk, records
from ndnsci_catalog.records import RecordError, decode_line, parse_lines, parse_record
from ndnsci_translators._core import control_character

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
    # values msgspec reads differently or refuses: json.loads decides
    b'{"a": NaN, "b": Infinity}',
    b'{"a": 1e400}',
    b'{"a": 18446744073709551616, "b": -9223372036854775809}',
    b'{"a": 1, "a": 2}',
    b'{"a": -0.0, "b": 5e-324, "c": 1.7976931348623157e308, "d": 0.1}',
    b"[" * 5000 + b"]" * 5000,
]


@pytest.mark.parametrize("line", ODD_LINES + [x.decode("latin-1") for x in ODD_LINES])
def test_decode_line_is_json_loads(line):
    try:
        expected: object = json.loads(line)
    except ValueError as exc:
        expected = (type(exc), str(exc))
    except RecursionError:
        expected = RecursionError
    try:
        got: object = decode_line(line)
    except ValueError as exc:
        got = (type(exc), str(exc))
    except RecursionError:
        got = RecursionError
    assert repr(got) == repr(expected)  # -0.0 is not 0, 1.0 is not 1


def test_decode_line_is_json_loads_on_random_values():
    rng = random.Random(14)
    for _ in range(2000):
        value = _random_value(rng, 0)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
            for line in (text, text.encode("utf-8", "surrogatepass")):
                assert repr(decode_line(line)) == repr(json.loads(line)), line


def _random_value(rng: random.Random, depth: int) -> object:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False, rng.randrange(10)])
    if kind == 1:
        return rng.randint(-(2**70), 2**70)
    if kind == 2:
        return rng.choice([rng.random() * 10.0 ** rng.randint(-320, 300), -0.0, 5e-324])
    if kind in (3, 4):  # printable ASCII, any BMP character (lone surrogates too), the last one
        chars = [rng.randrange(32, 127), rng.randrange(0x3000), 0x10FFFF]
        return "".join(chr(rng.choice(chars)) for _ in range(rng.randrange(8)))
    if kind in (5, 6):
        return {
            str(rng.randrange(5)): _random_value(rng, depth + 1) for _ in range(rng.randrange(4))
        }
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]


@pytest.mark.parametrize(
    "facets",
    [
        {"model": "MPI-ESM-LR", "geo": None},
        {},
        {"a": 'quote " and back\\slash'},
        {"a": "caf\u00e9", "b": "\U0001f600"},
        {"a": "del \x7f", "b": "tab\tnewline\n", "c": "\x00"},
        {"a": "\ud800"},
    ],
)
def test_the_facets_json_is_json_dumps(facets):
    assert bulk.flat_json_encoder()(facets) == json.dumps(facets, separators=(",", ":"))


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


def test_the_control_check_is_the_translators_for_every_character():
    for code in range(0x110000):
        text = "tas" + chr(code)
        assert records._has_control(text) == (control_character(text) is not None), hex(code)
