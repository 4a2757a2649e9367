"""One describe step: `translate --metadata`, `scan --metadata` and `publish` name every file of
tests/data alike (ndnsci/sdk/describe.py), and refuse the same files with the same codes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ndnsci.cli import main

DATA = Path(__file__).parents[1] / "data"
NONDRS = DATA / "netcdf" / "edge" / "esmvalcore_tas_nondrs_name.nc"
ODD_FILE = next((DATA / "netcdf").rglob("odd_file.nc"))


def test_translate_scan_and_publish_give_every_file_the_same_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    main(["translate", "--json", "--metadata", str(DATA)])
    translated = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    names = {r["input"]: r["name"] for r in translated if r["ok"]}
    refused = {r["input"]: r["error"]["code"] for r in translated if not r["ok"]}
    assert len(translated) == sum(1 for p in DATA.rglob("*") if p.is_file())
    # the examples: named from their contents by every command
    assert names[str(NONDRS)].endswith("/tas_Amon_CanESM2_historical_r1i1p1_185001-185002.nc")
    assert names[str(ODD_FILE)].endswith("/fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-145002.nc")
    assert any(code == "truncated" for code in refused.values())  # a damaged file, refused

    main(["scan", "--metadata", "--json", str(DATA)])
    summary = json.loads(capsys.readouterr().out)
    assert summary["named"] == len(names)
    assert {f["input"]: f["code"] for f in summary["failures"]} == refused
    assert summary["collisions"] == []

    db = tmp_path / "catalog.db"
    report = tmp_path / "quarantine.jsonl"
    code = main(["publish", str(DATA), "--db", f"sqlite:///{db}", "--jobs", "2",
                 "--no-checksum", "--quarantine", str(report)])  # fmt: skip
    assert code == 1
    with sqlite3.connect(db) as conn:
        published = dict(conn.execute("SELECT original_path, name FROM files"))
    assert {str(DATA / path): name for path, name in published.items()} == names
    quarantined = [json.loads(line) for line in report.read_text().splitlines()]
    assert {q["source"]: q["code"] for q in quarantined} == refused


def test_scan_of_a_path_that_does_not_exist_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "does" / "not" / "exist"
    assert main(["scan", str(DATA / "netcdf"), str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"ndnsci scan: {missing}: no such file or directory\n"
