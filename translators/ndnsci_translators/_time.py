"""DRS time ranges from a file's time coverage, shared by the CMIP5 and CMIP6 schemes.

A CMIP file name ends in ``_<N1>-<N2>[-clim]``: the times of the first and last records, cut to
the precision the data's frequency calls for (``185001-200512`` for monthly data). A climatology
is named by its period instead, the first and last cells of its climatology bounds, followed by
``-clim``; a monthly climatology's end is the month before its last bound (CMOR subtracts an hour
from the bound, which is the first instant after the period). Each scheme maps its frequencies to
a precision (``cmip5_tables.TIME_PRECISION``, ``cmip6_tables.TIME_PRECISION``).

The coverage comes as ISO 8601 text, e.g. the ACDD attributes ``time_coverage_start`` and
``time_coverage_end`` that ``netcdf.naming_attributes`` derives from a file's time axis. Dates
are read as written, without a calendar: a 360-day or no-leap date needs no conversion to be cut
to a precision. Times are cut, not rounded (the extractor already rounds them to the second).
"""

from __future__ import annotations

import re

# extended ISO 8601 date with optional time, as written by isoformat() and ACDD producers;
# only UTC offsets are accepted ("Z", "+00:00"): CMIP times carry no time zone
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?"
    r"(?:Z|[+-]00(?::?00)?)?"
)
_LIMITS = ((0, 9999), (1, 12), (1, 31), (0, 23), (0, 59), (0, 60))


def time_point(text: str) -> tuple[int, int, int, int, int, int] | None:
    """(year, month, day, hour, minute, second) of an ISO 8601 date or date-time, else None."""
    match = _ISO.fullmatch(text.strip())
    if match is None:
        return None
    values = tuple(int(v) if v is not None else 0 for v in match.groups())
    if any(not low <= v <= high for v, (low, high) in zip(values, _LIMITS, strict=True)):
        return None
    year, month, day, hour, minute, second = values
    return year, month, day, hour, minute, second


def drs_time_range(start: str, end: str, digits: int, climatology: bool = False) -> str | None:
    """``N1-N2`` (``N1-N2-clim`` for a climatology) from ISO 8601 ``start`` and ``end``, each
    point written with ``digits`` digits (4: yyyy, 6: yyyymm, ... 14: yyyymmddhhmmss); None when
    either is not an ISO 8601 date of a four-digit year.

    >>> drs_time_range("1850-01-16T12:00:00", "1850-02-15T00:00:00", 6)
    '185001-185002'
    >>> drs_time_range("2000-01-01T00:00:00", "2000-03-01T00:00:00", 6, climatology=True)
    '200001-200002-clim'
    """
    first, last = time_point(start), time_point(end)
    if first is None or last is None:
        return None
    if climatology and digits == 6 and last[2:4] == (1, 0):
        # the last bound of a monthly climatology opens the next month: one hour earlier is the
        # period's last month
        year, month = (last[0], last[1] - 1) if last[1] > 1 else (last[0] - 1, 12)
        if year < 0:
            return None
        last = (year, month, 28, 23, 0, 0)
    text = f"{_digits(first)[:digits]}-{_digits(last)[:digits]}"
    return text + "-clim" if climatology else text


def _digits(point: tuple[int, int, int, int, int, int]) -> str:
    year, month, day, hour, minute, second = point
    return f"{year:04d}{month:02d}{day:02d}{hour:02d}{minute:02d}{second:02d}"


def precision_pattern(digits: int) -> str:
    """How a DRS time point of ``digits`` digits is written: 6 -> ``'yyyymm'``."""
    return "yyyymmddhhmmss"[:digits]
