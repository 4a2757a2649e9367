"""Publish records built from real names in tests/data/corpora, without the translators.

The CMIP5 rows come from the NCAR GLADE catalog listing, whose ``gt_*`` columns are the true
facets; the CMIP6 and CMS ones are parsed from their DRS paths and LFNs. Expected search answers
are counted from these records by plain Python, independently of the catalog.
"""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path
from typing import Any

CORPORA = Path(__file__).parents[1] / "data" / "corpora"
CMIP5_KEYS = [
    "activity", "product", "institute", "model", "experiment", "frequency", "realm", "table",
    "ensemble", "version", "variable", "time_range", "geo",
]  # fmt: skip
CMIP6_KEYS = [
    "mip_era", "activity_id", "institution_id", "source_id", "experiment_id", "member_id",
    "table_id", "variable_id", "grid_label", "version", "time_range",
]  # fmt: skip


def _rows(file: str) -> list[dict[str, str]]:
    with open(CORPORA / file, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@functools.cache
def cmip5_records(n: int = 60) -> tuple[dict[str, Any], ...]:
    rows = [r for r in _rows("cmip5_paths.tsv") if r["gt_model"]]
    step = max(1, len(rows) // n)
    records = []
    for row in rows[::step][:n]:
        filename = row["path"].rsplit("/", 1)[1]
        table = filename.split("_")[1]
        facets: dict[str, str | None] = {k: row.get(f"gt_{k}") or None for k in CMIP5_KEYS}
        facets.update(activity="CMIP5", table=table, time_range=row["gt_time"] or None, geo=None)
        parts = [facets[k] for k in CMIP5_KEYS[1:11]]
        records.append(
            {
                "name": "/CMIP5/" + "/".join(str(p) for p in parts) + "/" + filename,
                "scheme": "cmip5",
                "filename": filename,
                "facets": facets,
                "corrections": [],
            }
        )
    return tuple(records)


@functools.cache
def cmip6_records(n: int = 20) -> tuple[dict[str, Any], ...]:
    pattern = re.compile(r"CMIP6/" + "/".join(["([^/]+)"] * 9) + r"/([^/]+\.nc)$")
    records = []
    for row in _rows("cmip6_paths.tsv"):
        match = pattern.search(row["path"])
        if not match or not match[9].startswith("v"):
            continue
        values = list(match.groups())
        facets = dict(zip(CMIP6_KEYS[1:10], values[:9], strict=True))
        facets = {"mip_era": "CMIP6", **facets, "time_range": None}
        name = "/CMIP6/" + "/".join(values)
        if any(r["name"] == name for r in records):
            continue
        records.append({"name": name, "scheme": "cmip6", "filename": values[9], "facets": facets})
        if len(records) == n:
            break
    return tuple(records)


@functools.cache
def cms_records(n: int = 10) -> tuple[dict[str, Any], ...]:
    records = []
    for row in _rows("cms_lfns.tsv"):
        parts = row["lfn"].split("/")
        if len(parts) != 9 or parts[2] not in ("mc", "data"):
            continue
        _, _, area, era, dataset, tier, processing, counter, filename = parts
        facets = {
            "area": area, "era": era, "primary_dataset": dataset, "tier": tier,
            "processing": processing, "counter": counter, "filename": filename,
        }  # fmt: skip
        records.append(
            {"name": "/CMS" + row["lfn"], "scheme": "cms", "filename": filename, "facets": facets}
        )
        if len(records) == n:
            break
    return tuple(records)


def all_records() -> list[dict[str, Any]]:
    return [*cmip5_records(), *cmip6_records(), *cms_records()]


def expected(records: list[dict[str, Any]], **filters: str | list[str]) -> set[str]:
    """Names whose facets match every filter (a list is OR), counted by hand."""
    wanted = {k: v if isinstance(v, list) else [v] for k, v in filters.items()}
    return {
        r["name"]
        for r in records
        if all(r["facets"].get(k) in values for k, values in wanted.items())
    }


@functools.cache
def many_records(n: int, seed: int = 0) -> tuple[dict[str, Any], ...]:
    """``n`` distinct CMIP5 records for load tests: real GLADE rows (their facets keep their
    joint distribution) with ensemble, version and time range varied."""
    import random

    rng = random.Random(seed)
    rows = [r for r in _rows("cmip5_paths.tsv") if r["gt_model"]]
    records: dict[str, dict[str, Any]] = {}
    while len(records) < n:
        row = rng.choice(rows)
        filename = row["path"].rsplit("/", 1)[1]
        facets: dict[str, str | None] = {k: row.get(f"gt_{k}") or "x" for k in CMIP5_KEYS}
        start = rng.randint(1850, 2290)
        facets.update(
            activity="CMIP5",
            table=filename.split("_")[1],
            ensemble=f"r{rng.randint(1, 12)}i1p{rng.randint(1, 3)}",
            version=f"v{rng.randint(2010, 2016)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}",
            time_range=f"{start}01-{start + rng.randint(0, 20)}12",
            geo=None,
        )
        filename = "_".join(
            str(facets[k])
            for k in ("variable", "table", "model", "experiment", "ensemble", "time_range")
        )
        name = "/CMIP5/" + "/".join(str(facets[k]) for k in CMIP5_KEYS[1:11]) + f"/{filename}.nc"
        records[name] = {
            "name": name,
            "scheme": "cmip5",
            "filename": filename + ".nc",
            "facets": facets,
            "size": rng.randint(10**6, 10**10),
        }
    return tuple(records.values())
