"""Publish records: loose JSON in, a strict :class:`PublishRecord` out, or an error saying what is
wrong.

A record is what the translators and the extractor produce: the keys of
``Translation.to_dict()`` (``ndnsci translate --json``) plus, when the file was read,
``metadata`` (the extractor's dict), ``size``, ``sha256``, ``mtime`` and ``version``.
The original file name (``original``) is the last component of the translator's ``input`` (what
it was given, before corrections) unless the record states it; ``original_path`` is the file's
path relative to the directory ``ndnsci publish`` walked, never an absolute provider path.
Well-known keys inside ``metadata`` (size, sha256, time coverage) are read defensively: the
extractor's layout may grow, and a record without them is still a valid name record.

Validation is hand-written rather than a pydantic model because ``ndnsci publish --records``
loads millions of lines and this is the hot path; the rules are the same for the API and the CLI.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from ndnsci_translators._core import control_character
from ndnsci_translators.names import UnsafePathError, build_name, safe_relative_path, split_name

#: query parameters of /search: a facet may not be called like one of them
RESERVED_KEYS = frozenset(
    {"q", "prefix", "start", "end", "scheme", "limit", "offset", "sort", "facets", "facet_limit"}
)
#: the facet the catalog sets itself: the site that published the record (docs/federation.md)
SITE_FACET = "site"
MAX_NAME = 4096
MAX_VALUE = 1024
MAX_METADATA = 1 << 20
#: objects and arrays nested in a record's metadata, the record's own object not counted: what
#: is stored must be served again (pydantic's serializer stops at a few hundred levels, a 500)
MAX_METADATA_DEPTH = 64
#: one record, as one JSON line: the metadata and room for the rest
MAX_RECORD = MAX_METADATA + (1 << 20)
MAX_FACETS = 64
MAX_CORRECTIONS = 64
#: the limits above, as ``GET /limits`` states them
FIELD_LIMITS = {
    "max_record_bytes": MAX_RECORD,
    "max_name_chars": MAX_NAME,
    "max_value_chars": MAX_VALUE,
    "max_facets": MAX_FACETS,
    "max_corrections": MAX_CORRECTIONS,
    "max_metadata_bytes": MAX_METADATA,
}
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_SCHEME = re.compile(r"[a-z][a-z0-9_-]{0,63}\Z")
#: a correction rule's id (kebab-case, as docs/naming.md lists them)
_KEY_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_TIME = re.compile(
    r"(?P<y>\d{4})(?:-?(?P<m>\d{2})(?:-?(?P<d>\d{2})"
    r"(?:[T ]?(?P<H>\d{2})(?::?(?P<M>\d{2})(?::?(?P<S>\d{2})(?:\.\d+)?)?)?)?)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?"  # a UTC mark or offset (CF times are UTC-like: ignored)
)
#: each part of a time and its valid range (any calendar: day 30 of February is a date)
_TIME_RANGES = (("month", "m", 1, 12), ("day", "d", 1, 31), ("hour", "H", 0, 24),
                ("minute", "M", 0, 59), ("second", "S", 0, 60))  # fmt: skip
TIME_EXAMPLES = "a date such as 1850, 1850-01, 18500116 or 1850-01-16T12:00:00"
_FILE_TIME_RANGE = re.compile(r"_(\d{4}(?:\d{2}){0,5})-(\d{4}(?:\d{2}){0,5})(?:-clim)?(?=[_.])")
# a name already in canonical NDN URI form with only unreserved characters, no component made
# only of periods: split + rebuild would give it back unchanged, so the bulk path skips both
_PLAIN_NAME = re.compile(r"(?:/\.*[A-Za-z0-9_~-][A-Za-z0-9._~-]*){2,}\Z")
#: keys of a record that may carry its time coverage
_TIME_KEYS = frozenset(
    {"time_start", "time_end", "start", "end", "time_coverage_start", "time_coverage_end"}
)
_LOWER = ("01", "01", "00", "00", "00")
_UPPER = ("12", "31", "23", "59", "59")


class RecordError(ValueError):
    """A record that cannot be published; ``line`` is set when it came from JSON lines."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"


@dataclass(slots=True)
class PublishRecord:
    name: str
    scheme: str
    filename: str | None
    #: the file name before corrections (the canonical ``filename`` when not known)
    original: str
    #: the path relative to the published directory, as found (None for name-only records)
    original_path: str | None
    facets: dict[str, str | None]
    corrections: list[dict[str, str]]
    metadata: dict[str, Any] | None
    size: int | None
    sha256: str | None
    mtime: float | None
    version: str | None
    time_start: str | None
    time_end: str | None

    @property
    def components(self) -> list[str]:
        return name_components(self.name)


def name_components(name: str) -> list[str]:
    """The components of a canonical name (:func:`normalize_name`), unescaped."""
    # canonical: anything but A-Z a-z 0-9 - . _ ~ escaped
    if "%" not in name and "/." not in name:  # nothing escaped, no all-period component
        return name[1:].split("/")
    return split_name(name)


def normalize_name(name: object) -> str:
    """The canonical NDN URI of a file name, or RecordError.

    Rejects what would be dangerous as a relative path in a manifest: empty, ``.`` and ``..``
    components, separators or control characters inside a component.
    """
    if not isinstance(name, str) or not name:
        raise RecordError("'name' must be a non-empty string (an NDN name such as /CMIP5/...)")
    if len(name) > MAX_NAME:
        raise RecordError(f"'name' is longer than {MAX_NAME} characters")
    if _PLAIN_NAME.match(name):
        return name
    try:
        components = split_name(name)
    except ValueError as exc:
        raise RecordError(f"'name' is not a valid NDN name: {exc}") from None
    if len(components) < 2:
        raise RecordError(f"'name' {name!r} needs a root and at least one more component")
    try:
        safe_relative_path(components)  # a manifest turns the name into a download path
    except UnsafePathError as exc:
        raise RecordError(f"'name' is unsafe as a path: {exc}") from None
    if any(_has_control(c) for c in components):
        raise RecordError(f"'name' {name!r} has a control or undecodable character")
    return build_name(components)


def _has_control(text: str) -> bool:
    if text.isascii():  # the usual text: two scans in C, ten times faster than the regex
        return not text.isprintable()  # in ASCII, exactly the controls (0-31 and DEL)
    return control_character(text) is not None


def normalize_time(text: object, *, upper: bool) -> str | None:
    """``'1850'``, ``'185001'``, ``'1850-01-16T12:00:00'`` -> fixed-width ISO text, or None.

    Missing parts are filled with the start (``upper=False``) or end of the period, so that
    ``end=2005`` includes all of 2005. Works for any calendar (``2005-02-30`` is kept as is).
    """
    try:
        return parse_time(text, upper=upper)
    except ValueError:
        return None


def parse_time(text: object, *, upper: bool) -> str:
    """:func:`normalize_time`, or ValueError saying what is wrong with ``text``."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not text; give {TIME_EXAMPLES}")
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text[:64]!r} is not {TIME_EXAMPLES}")
    for part, group, low, high in _TIME_RANGES:
        value = match.group(group)
        if value is not None and not low <= int(value) <= high:
            raise ValueError(f"{text!r}: {part} {value} is not between {low:02d} and {high:02d}")
    year, month, day, hour, minute, second = match.group("y", "m", "d", "H", "M", "S")
    fill = _UPPER if upper else _LOWER
    return (
        f"{year}-{month or fill[0]}-{day or fill[1]}T{hour or fill[2]}:{minute or fill[3]}:"
        f"{second or fill[4]}"
    )


def parse_record(obj: object) -> PublishRecord:
    """Validate one decoded JSON record (raises RecordError)."""
    if not isinstance(obj, Mapping):
        raise RecordError("a record must be a JSON object")
    if obj.get("ok") is False or obj.get("error"):
        error = obj["error"] if isinstance(obj.get("error"), Mapping) else {}
        raise RecordError(
            f"cannot be named: failed translation of {obj.get('input')!r}: "
            f"{error.get('code', '?')}: {error.get('message', '')}"
        )
    name = normalize_name(obj.get("name"))
    scheme = _scheme(obj.get("scheme"))
    metadata = _metadata(obj.get("metadata"))
    meta = metadata or {}
    filename = _optional_str(obj, "filename") or name.rsplit("/", 1)[-1]
    start, end = _time_coverage(obj, meta, filename)
    # positional, in the order of PublishRecord's fields (and of the checks: the first error wins)
    return PublishRecord(
        name,
        scheme,
        filename,
        _optional_str(obj, "original") or original_name(obj.get("input")) or filename,
        _relative_path(obj.get("original_path")),
        _facets(obj.get("facets")),
        _corrections(obj.get("corrections")),
        metadata,
        _size(obj.get("size", meta.get("size"))),
        _sha256(obj.get("sha256", meta.get("sha256"))),
        _mtime(obj.get("mtime", meta.get("mtime"))),
        _optional_str(obj, "version"),
        start,
        end,
    )


#: schemes already validated (a catalog has a few; each record repeats its own)
_GOOD_SCHEMES: set[str] = set()


def _scheme(scheme: object) -> str:
    if type(scheme) is str and scheme in _GOOD_SCHEMES:  # a list is not hashable: type first
        return scheme
    if not isinstance(scheme, str) or not _SCHEME.match(scheme):
        raise RecordError("'scheme' must be a scheme identifier such as 'cmip5'")
    if len(_GOOD_SCHEMES) < 1000:
        _GOOD_SCHEMES.add(scheme)
    return scheme


@dataclass(slots=True)
class ParsedLines:
    """The records of JSON lines, the line number of each, and every line refused."""

    records: list[PublishRecord]
    lines: list[int]
    #: (line number, why): every bad line, not only the first
    refused: list[tuple[int, str]]


#: msgspec's JSON decoder: the same values as ``json.loads`` in about half the time
_decode = msgspec.json.Decoder().decode


def decode_line(line: str | bytes) -> Any:
    """``json.loads(line)``: the same value and the same errors, in half the time.

    msgspec decodes what it can (a valid UTF-8 JSON value: the usual line); whatever it
    refuses goes to ``json.loads``, which accepts more (NaN, 1e400, encoded surrogates, a BOM)
    and words its errors as before."""
    try:
        return _decode(line)
    except (ValueError, msgspec.MsgspecError):  # UnicodeDecodeError is a ValueError
        return json.loads(line)


def parse_lines(lines: Iterable[bytes | str]) -> ParsedLines:
    """Records from JSON lines (blank lines skipped); each bad line is reported with its
    number, so a publisher can drop them all and send the rest once."""
    parsed = ParsedLines([], [], [])
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line) > MAX_RECORD:
            parsed.refused.append((number, f"the record is larger than {MAX_RECORD} bytes"))
            continue
        try:
            parsed.records.append(parse_record(decode_line(line)))
        except (ValueError, UnicodeDecodeError) as exc:  # RecordError is a ValueError
            reason = exc.message if isinstance(exc, RecordError) else f"not valid JSON: {exc}"
            parsed.refused.append((number, reason))
        except RecursionError:
            parsed.refused.append((number, "JSON nested too deeply"))
        else:
            parsed.lines.append(number)
    return parsed


def record_from_line(line: str | bytes, number: int) -> tuple[str, PublishRecord | str] | None:
    """One JSON line (as ``ndnsci translate --json`` writes them) -> ``(source, record)``, or
    ``(source, why it is refused)``; None for a blank line. ``source`` is the line's ``input``
    (the translator's input: a path, an LFN), else ``line N``: where to look for a report."""
    if not line.strip():
        return None
    if len(line) > MAX_RECORD:
        return (f"line {number}", f"the record is larger than {MAX_RECORD} bytes")
    try:
        obj = decode_line(line)
    except ValueError as exc:
        return f"line {number}", f"not valid JSON: {exc}"
    except RecursionError:
        return f"line {number}", "JSON nested too deeply"
    given = obj.get("input") if isinstance(obj, dict) else None
    source = given if isinstance(given, str) and given else f"line {number}"
    try:
        return source, parse_record(obj)
    except RecordError as exc:
        return source, exc.message


def _optional_str(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_VALUE or _has_control(value):
        raise RecordError(f"{key!r} must be a string of at most {MAX_VALUE} printable characters")
    return value


def original_name(text: object) -> str | None:
    """The last component of a translator's input (a path, a file name, an ESGF id, an LFN):
    the file name as it was before corrections. None when there is nothing usable."""
    if not isinstance(text, str):
        return None
    base = text.rstrip("/").rpartition("/")[2]
    if "/" not in text and "\\" in base:  # a Windows path, as the translators accept it
        base = base.rpartition("\\")[2]
    base = base.partition("|")[0].strip()  # ESGF search ids end in |<data node>
    if not base or len(base) > MAX_VALUE or _has_control(base):
        return None
    return base


def _relative_path(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME or _has_control(value):
        raise RecordError(
            "'original_path' must be a relative path (below the published directory) of at "
            f"most {MAX_NAME} printable characters"
        )
    try:
        return safe_relative_path(value)
    except UnsafePathError as exc:
        raise RecordError(
            f"'original_path' must stay below the published directory: {exc}"
        ) from None


def _facets(value: object) -> dict[str, str | None]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise RecordError("'facets' must be an object of key -> string or null")
    facets: dict[str, str | None] = value if type(value) is dict else dict(value)
    if len(facets) > MAX_FACETS:
        raise RecordError(f"'facets' has {len(facets)} keys; at most {MAX_FACETS}")
    if not _GOOD_KEYS.issuperset(facets):
        for key in facets:
            _check_key(key)
    # the checks run over all values at once (C loops); the slow path finds the culprit
    values = [v for v in facets.values() if v is not None]
    try:
        joined = "".join(values)  # TypeError: a value is not a string
    except TypeError:
        joined = None
    if values and (
        joined is None
        or "" in values
        or max(map(len, values)) > MAX_VALUE
        # one scan of all values together: control characters are looked for per character
        or _has_control(joined)
    ):
        for key, item in facets.items():
            if item is not None and (
                not isinstance(item, str) or not item or len(item) > MAX_VALUE or _has_control(item)
            ):
                raise RecordError(f"facet {key!r} must be a non-empty printable string or null")
    return facets


#: facet keys already validated (a catalog has tens of keys; each record repeats them)
_GOOD_KEYS: set[str] = set()


def _check_key(key: object) -> None:
    if not isinstance(key, str) or not _KEY.match(key) or key in RESERVED_KEYS:
        raise RecordError(
            f"facet key {key!r} must be a letter followed by letters, digits or '_' and not "
            f"one of the search parameters ({', '.join(sorted(RESERVED_KEYS))})"
        )
    if key == SITE_FACET:
        raise RecordError(
            f"facet key {key!r} is set by the catalog (the site that published the record); "
            "rename the record's facet"
        )
    if len(_GOOD_KEYS) < 10_000:
        _GOOD_KEYS.add(key)


def _corrections(value: object) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(
        isinstance(c, Mapping) and isinstance(c.get("rule"), str) for c in value
    ):
        raise RecordError("'corrections' must be a list of {'rule', 'message'} objects")
    if len(value) > MAX_CORRECTIONS:
        raise RecordError(f"'corrections' has {len(value)} entries; at most {MAX_CORRECTIONS}")
    corrections = [{"rule": c["rule"], "message": str(c.get("message", ""))} for c in value]
    for correction in corrections:
        if not _KEY_LIKE.match(correction["rule"]) or len(correction["message"]) > MAX_VALUE:
            raise RecordError(
                "a correction's 'rule' must be an identifier such as 'clim-suffix' and its "
                f"'message' at most {MAX_VALUE} characters"
            )
    return corrections


def _metadata(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RecordError("'metadata' must be an object")
    if _depth(value) > MAX_METADATA_DEPTH:
        raise RecordError(f"'metadata' nests more than {MAX_METADATA_DEPTH} levels")
    size = len(json.dumps(value, default=str))
    if size > MAX_METADATA:
        raise RecordError(f"'metadata' is larger than {MAX_METADATA} bytes")
    return value


def _depth(value: object) -> int:
    """Levels of objects and arrays in ``value`` (``{}``: 1), without recursion; it stops
    counting past :data:`MAX_METADATA_DEPTH`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if level > MAX_METADATA_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, level + 1) for child in children)
    return deepest


def _size(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 63:
        raise RecordError("'size' must be a non-negative integer (bytes)")
    return value


def _sha256(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _SHA256.match(value.lower()):
        raise RecordError("'sha256' must be 64 hexadecimal digits")
    return value.lower()


def _mtime(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise RecordError("'mtime' must be a number (seconds since the epoch)")
    return float(value)


def _time_coverage(
    obj: Mapping[str, Any], meta: Mapping[str, Any], filename: str
) -> tuple[str | None, str | None]:
    """From the record, else the extractor's metadata, else the file name's time range."""
    stated = not _TIME_KEYS.isdisjoint(obj)
    if stated:
        _check_times(obj)
    if stated or meta:
        holders = (obj, meta, *(meta.get(k) for k in ("time_coverage", "time", "coverage")))
        for holder in holders:
            if not isinstance(holder, Mapping):
                continue
            for start_key, end_key in (
                ("time_start", "time_end"),
                ("start", "end"),
                ("time_coverage_start", "time_coverage_end"),
            ):
                start = normalize_time(holder.get(start_key), upper=False)
                end = normalize_time(holder.get(end_key), upper=True)
                if start or end:
                    return start, end
    matches = _FILE_TIME_RANGE.findall(filename) if filename.endswith(".nc") else []
    if not matches:
        return None, None
    period = matches[-1]
    times = _FILE_TIMES.get(period)
    if times is None:
        if len(_FILE_TIMES) >= 100_000:
            _FILE_TIMES.clear()
        first, last = period
        times = _FILE_TIMES[period] = (
            normalize_time(first, upper=False),
            normalize_time(last, upper=True),
        )
    return times


#: the times of a file name's time range (``('185001', '200512')``): the files of an archive
#: share a few thousand ranges, so each is read once per process (a bounded cache)
_FILE_TIMES: dict[tuple[str, str], tuple[str | None, str | None]] = {}


def _check_times(obj: Mapping[str, Any]) -> None:
    """A time the record states must be a time: refused, not stored as unknown. (Times inside
    the extractor's metadata are read defensively: an unreadable one is passed over.)"""
    for key in sorted(_TIME_KEYS.intersection(obj)):
        if obj[key] is not None:
            try:
                parse_time(obj[key], upper=False)
            except ValueError as exc:
                raise RecordError(f"{key!r}: {exc}") from None
