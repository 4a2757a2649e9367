"""DRS time ranges from ISO 8601 time coverage (translators/_time.py), shared by CMIP5 and CMIP6."""

import pytest

from ndnsci_translators._time import drs_time_range, time_point


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ("1850-01-16T12:00:00", (1850, 1, 16, 12, 0, 0)),
        ("0701-07-02T12:00:00", (701, 7, 2, 12, 0, 0)),  # CESM1-BGC's year 701
        ("2000-02-30T00:00:00", (2000, 2, 30, 0, 0, 0)),  # 360_day: read as written
        ("1850-01-16", (1850, 1, 16, 0, 0, 0)),
        ("1850-01-16 12:30", (1850, 1, 16, 12, 30, 0)),
        ("1850-01-16T12:30:15.75Z", (1850, 1, 16, 12, 30, 15)),
        (" 1850-01-16T12:00:00+00:00 ", (1850, 1, 16, 12, 0, 0)),
    ],
)
def test_time_point_reads_iso_8601_as_written(text, point):
    assert time_point(text) == point


@pytest.mark.parametrize(
    "text",
    [
        "",
        "185001",
        "10001-01-01T00:00:00",  # five-digit years have no DRS spelling
        "-0005-01-01T00:00:00",
        "1850-13-01",
        "1850-01-16T24:00:00",
        "1850-01-16T12:00:00+05:00",  # a time zone CMIP times never have
        "days since 1850-01-01",
    ],
)
def test_time_point_refuses_what_is_not_a_four_digit_year_iso_date(text):
    assert time_point(text) is None


@pytest.mark.parametrize(
    ("digits", "expected"),
    [
        (4, "1850-2005"),
        (6, "185001-200512"),
        (8, "18500116-20051216"),
        (10, "1850011612-2005121612"),
        (12, "185001161230-200512161200"),
        (14, "18500116123045-20051216120000"),
    ],
)
def test_every_precision_cuts_the_time(digits, expected):
    assert drs_time_range("1850-01-16T12:30:45", "2005-12-16T12:00:00", digits) == expected


def test_monthly_climatology_ends_with_the_month_before_its_last_bound():
    assert drs_time_range("1986-01-01", "2006-01-01T00:00:00", 6, True) == "198601-200512-clim"
    assert drs_time_range("2000-01-01", "2000-03-01T00:59:59", 6, True) == "200001-200002-clim"
    # a bound inside the month (or a coordinate value) is that month
    assert drs_time_range("2000-01-01", "2000-03-16T00:00:00", 6, True) == "200001-200003-clim"
    # an hourly climatology keeps its bounds as they are (CMOR 3)
    assert drs_time_range("2000-01-01", "2000-01-01T00:50", 12, True) == (
        "200001010000-200001010050-clim"
    )


def test_unreadable_coverage_gives_none():
    assert drs_time_range("1850-01-16", "soon", 6) is None
    assert drs_time_range("0000-01-01", "0000-01-01", 6, True) is None  # no month before year 0
