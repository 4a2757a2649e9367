"""``ndnsci search`` against the real catalog (tests/conftest.py: stack)."""

from __future__ import annotations

import csv
import io
import json
import subprocess

from support import run_cli

from ndnsci.base.processes import free_port


def ndnsci(*args: str, catalog: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={"NDNSCI_CATALOG": catalog} if catalog else None)


def test_facets_select_files(stack):
    out = ndnsci("search", "model=HadCM3", "variable=tas,pr", "experiment!=rcp45")
    names = out.stdout.split()
    assert out.returncode == 0 and len(names) == 4
    assert all("/HadCM3/historical/" in n for n in names)
    assert "4 of 4 files match" in out.stderr


def test_json_lines_are_a_manifest(stack):
    out = ndnsci("search", "scheme=cms", "--json", "--catalog", stack.catalog_url)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 5 and all(r["path"] == r["name"][1:] and r["sha256"] for r in rows)


def test_csv_has_a_column_per_facet(stack):
    out = ndnsci("search", "--q", "MIROC5", "--csv", "--limit", "2")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 2 and rows[0]["model"] == "MIROC5" and "experiment" in rows[0]


def test_facet_counts(stack):
    out = ndnsci("search", "variable=tos", "--facets")
    assert out.returncode == 0 and "model: CanESM2 (3), HadCM3 (3)" in out.stdout


def test_no_match_unknown_facet_and_catalog_down(stack):
    none = ndnsci("search", "model=NoSuchModel")
    assert none.returncode == 1 and none.stdout == ""
    bad = ndnsci("search", "modle=HadCM3")
    assert bad.returncode == 2 and "unknown facet" in bad.stderr and "model" in bad.stderr
    down = ndnsci("search", "model=HadCM3", catalog=f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 2 and "no catalog answers" in down.stderr
    assert "Traceback" not in down.stderr
    junk = ndnsci("search", "justaword")
    assert junk.returncode == 2 and "not facet=value" in junk.stderr
