"""`ndnsci publish` and `ndnsci catalog` against a real database of each backend.

The searches after publishing tests/data/netcdf/cmip5 expect the numbers a person gets by counting
the directory tree (``find -path '*/tasmax/*' -name '*.nc' | wc -l`` and so on). These tests use
the real translators and the netCDF extractor.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session
from support import CLI, child_processes, wait_for

from ndnsci.base.processes import free_port
from ndnsci.cli import main
from ndnsci.site.publishing import RECORDS_BATCH
from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine
from ndnsci_catalog.main import create_app
from ndnsci_translators import translate

from . import consistency
from .conftest import Client
from .corpus import CORPORA

TREE = Path(__file__).parents[1] / "data" / "netcdf" / "cmip5"

# counted by hand: find tests/data/netcdf/cmip5 -path '<pattern>' -name '*.nc' | wc -l
HAND_COUNTS = [
    ({"model": "MPI-ESM-LR"}, 3),
    ({"variable": "tasmax"}, 10),
    ({"variable": "hfls"}, 10),
    ({"variable": "co3"}, 4),
    ({"experiment": "esmHistorical", "variable": "fgco2"}, 7),
    ({"institute": "NASA-GISS"}, 4),
    ({"experiment": "rcp85", "institute!": "NASA-GISS"}, 8),
    ({"institute": "IPSL", "experiment": "historical"}, 2),
    ({"model": ["CNRM-CM5", "FIO-ESM"]}, 5),
    ({"q": "latent heat"}, 10),  # hfls long_name: surface upward latent heat flux
]


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def catalog_client(fresh_db_url: str) -> Iterator[Client]:
    engine = make_engine(fresh_db_url)
    client = Client(create_app(Settings(db=fresh_db_url), engine=engine))
    yield client
    client.close()
    engine.dispose()


@pytest.fixture
def check_db(fresh_db_url: str) -> Iterator[Any]:
    engine = make_engine(fresh_db_url)

    def check() -> int:
        with Session(engine) as session:
            return consistency.check(session)

    yield check
    engine.dispose()


def test_publish_the_cmip5_tree_then_search_finds_what_a_person_counts(
    fresh_db_url, state_home, catalog_client, check_db, capsys
):
    code = main(["publish", str(TREE), "--db", fresh_db_url, "--jobs", "2"])
    err = capsys.readouterr().err
    assert code == 0, err  # files/odd_file.nc too: named from its contents
    assert "QUARANTINE" not in err
    assert "33 published" in err
    assert check_db() == 33
    for params, count in HAND_COUNTS:
        body = catalog_client.get("/search", params={**params, "limit": 100}).json()
        assert body["total"] == len(body["results"]) == count, params
    tasmax = catalog_client.get("/search", params={"variable": "tasmax", "limit": 100}).json()
    on_disk = sorted(p.name for p in TREE.rglob("*.nc") if p.parent.name == "tasmax")
    assert sorted(r["filename"] for r in tasmax["results"]) == on_disk


def test_a_corrected_file_keeps_its_original_name_and_path(
    fresh_db_url, state_home, catalog_client
):
    """BNU-ESM's files sit in a 'cfMon' table directory; the file name says Omon, which wins.
    The third, files/odd_file.nc, is named from its contents (its original name is kept)."""
    bnu = TREE / "output1" / "BNU"
    assert main(["publish", str(bnu), "--db", fresh_db_url, "--jobs", "1"]) == 0
    body = catalog_client.get("/search", params={"model": "BNU-ESM"}).json()
    on_disk = sorted(bnu.rglob("*.nc"), key=lambda p: p.name)
    assert [p.name for p in on_disk] == [
        "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc",
        "fgco2_Omon_BNU-ESM_esmHistorical_r1i1p1_185001-200512.nc",
        "odd_file.nc",
    ]
    by_original = {r["original"]: r for r in body["results"]}
    assert sorted(by_original) == [p.name for p in on_disk]
    for path in on_disk:
        result = by_original[path.name]
        assert "/Omon/" in result["name"]
        record = catalog_client.get("/files" + result["name"]).json()
        assert record["original_path"] == str(path.relative_to(bnu))  # below the published DIR
        assert "/cfMon/" in record["original_path"]
        assert "dir-file-mismatch" in [c["rule"] for c in record["corrections"]]
    # the original directories are searchable text: the files filed under cfMon
    found = catalog_client.get("/search", params={"q": "cfMon"}).json()
    assert sorted(r["name"] for r in found["results"]) == sorted(r["name"] for r in body["results"])


def test_records_keep_the_original_name_of_their_input(fresh_db_url, monkeypatch, catalog_client):
    """`ndnsci translate --json | ndnsci publish --records -`: `input` is the original name."""
    given = "novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc"
    translation = translate(f"/archive/old/{given}")
    assert translation.corrections[0].rule == "clim-suffix"
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(translation.to_dict()) + "\n"))
    assert main(["publish", "--records", "-", "--db", fresh_db_url]) == 0
    (result,) = catalog_client.get("/search", params={"q": "novar1"}).json()["results"]
    assert result["filename"] == given.replace("_clim", "-clim") != given
    assert result["original"] == given
    record = catalog_client.get("/files" + result["name"]).json()
    assert record["original"] == given and record["original_path"] is None
    assert record["corrections"][0]["rule"] == "clim-suffix"


def test_published_records_carry_checksum_metadata_and_time(
    fresh_db_url, state_home, catalog_client
):
    path = next(TREE.rglob("co3_Oyr_MPI-ESM-LR_*.nc"))
    assert main(["publish", str(path.parent), "--db", fresh_db_url, "--jobs", "1"]) == 0
    (result,) = catalog_client.get("/search", params={"model": "MPI-ESM-LR"}).json()["results"]
    record = catalog_client.get("/files" + result["name"]).json()
    assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record["size"] == path.stat().st_size
    assert record["metadata"]["global_attributes"]["model_id"] == "MPI-ESM-LR"
    assert "path" not in record["metadata"]  # no provider paths in a public catalog
    assert record["time_start"] and record["time_start"] < record["time_end"]


def test_rerun_skips_unchanged_files_and_republishes_touched_ones(
    fresh_db_url, state_home, capsys, tmp_path
):
    source = next(TREE.rglob("hfls_Amon_CanCM4_*.nc"))
    copy = tmp_path / "cmip5" / source.relative_to(TREE)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(source.read_bytes())
    root = str(tmp_path / "cmip5")
    assert main(["publish", root, "--db", fresh_db_url, "--jobs", "1"]) == 0
    assert "1 published, 0 unchanged" in capsys.readouterr().err
    assert main(["publish", root, "--db", fresh_db_url, "--jobs", "1"]) == 0
    assert "0 published, 1 unchanged" in capsys.readouterr().err
    os.utime(copy, (time.time() + 10, time.time() + 10))
    assert main(["publish", root, "--db", fresh_db_url, "--jobs", "1"]) == 0
    assert "1 published, 0 unchanged" in capsys.readouterr().err


def test_unreadable_files_are_quarantined_and_reported(fresh_db_url, state_home, tmp_path):
    bad_dir = tmp_path / "output1/MOHC/HadGEM2-ES/historical/mon/atmos/Amon/r1i1p1/v1/tas"
    bad_dir.mkdir(parents=True)
    (bad_dir / "tas_Amon_HadGEM2-ES_historical_r1i1p1_185001-200512.nc").write_bytes(b"junk")
    (bad_dir / "README").write_text("not data")
    report = tmp_path / "quarantine.jsonl"
    code = main(["publish", str(tmp_path / "output1"), "--db", fresh_db_url,
                 "--quarantine", str(report), "--jobs", "1"])  # fmt: skip
    assert code == 1
    entries = [json.loads(line) for line in report.read_text().splitlines()]
    assert {Path(e["source"]).name for e in entries} == {
        "tas_Amon_HadGEM2-ES_historical_r1i1p1_185001-200512.nc", "README",
    }  # fmt: skip
    assert all(e["reason"] for e in entries)


def _translations(limit: int) -> list[str]:
    lines = (CORPORA / "cmip5_paths.tsv").read_text().splitlines()[1 : limit + 1]
    return [json.dumps(translate(line.split("\t")[0]).to_dict()) for line in lines]


def test_publish_records_from_translate_json(fresh_db_url, monkeypatch, capsys, check_db):
    lines = _translations(300)
    named = {json.loads(line)["name"] for line in lines if json.loads(line)["ok"]}
    failed = sum(1 for line in lines if not json.loads(line)["ok"])
    body = ("\n".join(lines) + "\nnot json\n").encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))  # read as bytes
    code = main(["publish", "--records", "-", "--db", fresh_db_url])
    err = capsys.readouterr().err
    assert code == 1
    assert f"{failed + 1} quarantined" in err and "line 301" in err
    assert check_db() == len(named)


def test_a_killed_bulk_load_keeps_whole_batches(fresh_db_url, tmp_path, check_db):
    template = json.loads(_translations(1)[0])
    records = tmp_path / "records.jsonl"
    with records.open("w") as f:
        for i in range(150_000):
            f.write(json.dumps({**template, "name": f"/CMIP5/bulk/{i // 100}/{i}.nc"}) + "\n")
    process = subprocess.Popen(
        [*CLI, "publish", "--records", str(records), "--db", fresh_db_url],
        stderr=subprocess.DEVNULL,
    )
    engine = make_engine(fresh_db_url)

    def first_batch_or_exit() -> object:
        with engine.connect() as conn:
            files = conn.exec_driver_sql("SELECT files FROM catalog_state").scalar()
        return files or process.poll() is not None

    try:  # kill after the first batch
        wait_for(first_batch_or_exit, 120, "the first batch published", every=0.02)
        workers = child_processes(process.pid)  # preparing the next batches (catalog/loader.py)
    finally:
        engine.dispose()
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert workers or not Path("/proc/self/task").exists()
    published = check_db()
    assert published % RECORDS_BATCH == 0  # whole batches only
    assert 0 < published < 150_000, "the load finished before the kill; make the file bigger"
    wait_for(  # the workers notice and leave
        lambda: not any(_running(pid) for pid in workers),
        30,
        "the preparing processes to leave after their publisher",
        every=0.05,
        detail=lambda: f": {[pid for pid in workers if _running(pid)]} still running",
    )


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan is reaped by whoever adopted it, maybe never)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_token_create_prints_a_working_token(fresh_db_url, capsys, catalog_client):
    assert main(["catalog", "token", "create", "site-a", "--db", fresh_db_url]) == 0
    token = capsys.readouterr().out.strip()
    record = json.loads(_translations(1)[0])
    response = catalog_client.post(
        "/publish",
        content=json.dumps(record).encode(),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 200 and response.json()["inserted"] == 1
    assert main(["catalog", "token", "create", "site-a", "--db", fresh_db_url]) == 1


def test_migrate_is_idempotent(fresh_db_url):
    assert main(["catalog", "migrate", "--db", fresh_db_url]) == 0
    assert main(["catalog", "migrate", "--db", fresh_db_url]) == 0


def test_publish_usage_errors(capsys):
    assert main(["publish"]) == 2
    assert main(["publish", "x", "--records", "-"]) == 2
    assert main(["publish", "x", "--catalog", "http://h", "--db", "sqlite://"]) == 2


def test_records_published_through_a_catalog_server(fresh_db_url, capsys, tmp_path):
    """`--catalog URL --token T`: the lines go over HTTP, bad ones are quarantined."""
    assert main(["catalog", "token", "create", "site-b", "--db", fresh_db_url]) == 0
    token = capsys.readouterr().out.strip()
    given = "novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc"
    lines = tmp_path / "records.jsonl"
    lines.write_text(
        json.dumps(translate(f"/archive/old/{given}").to_dict())
        + "\nnot json\n"
        + _translations(1)[0]
    )
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "catalog", "serve", "--db", fresh_db_url, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: httpx.get(url + "/api/v1/health", timeout=1).status_code == 200,
            60,
            "the catalog server's health",
            ignoring=httpx.TransportError,
        )
        code = main(["publish", "--records", str(lines), "--catalog", url, "--token", token])
        err = capsys.readouterr().err
        assert code == 1 and "line 2" in err and "2 published" in err
        found = httpx.get(url + "/api/v1/search", params={"q": "novar1"}).json()["results"]
        assert [r["original"] for r in found] == [given]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_serve_without_migrating_refuses_an_older_schema(fresh_db_url, capsys):
    """`serve --no-migrate` on a catalog of an earlier version (here: before the contentless
    free text) says what to do instead of failing at the first replace or retract."""
    from alembic import command

    from ndnsci.cli import main
    from ndnsci_catalog.migrate import alembic_config, schema_behind

    assert schema_behind(fresh_db_url) is None
    command.downgrade(alembic_config(fresh_db_url), "2026_11_23_token_expiry")
    assert schema_behind(fresh_db_url) == (
        "2026_11_23_token_expiry",
        "2026_12_02_transfer_jobs",
    )
    assert main(["catalog", "serve", "--db", fresh_db_url, "--no-migrate"]) == 2
    err = capsys.readouterr().err
    assert "has schema 2026_11_23_token_expiry" in err
    assert "needs 2026_12_02_transfer_jobs" in err
    assert "run `ndnsci catalog migrate --db URL` first" in err
    assert main(["catalog", "migrate", "--db", fresh_db_url]) == 0
    assert schema_behind(fresh_db_url) is None


def test_serve_on_a_sqlite_file_in_a_folder_that_does_not_exist_is_an_error(tmp_path):
    missing = tmp_path / "does" / "not" / "exist"
    out = subprocess.run(
        [*CLI, "catalog", "serve", "--db", f"sqlite:///{missing}/c.db", "--port", str(free_port())],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == f"ndnsci catalog serve: {missing}: no such directory (for --db)\n"
    assert not (tmp_path / "does").exists()
