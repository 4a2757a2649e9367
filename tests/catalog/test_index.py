"""The in-memory facet index follows the database: publish, replace, retract, other writers.

These tests commit for real (``fresh_db_url``) and give the app its own engine, as a deployed
server has: the index reads the database through its own snapshots, never through the
request's session, so only the change feed can tell it what happened.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session
from support import run_cli

from ndnsci_catalog import facetindex
from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.facetindex import FacetIndex, Stale, engine_source
from ndnsci_catalog.ingest import publish, retract
from ndnsci_catalog.main import create_app
from ndnsci_catalog.query import Search, SearchParams
from ndnsci_catalog.records import parse_record
from ndnsci_catalog.tokens import create_token

from . import consistency
from .conftest import Client, ndjson
from .corpus import all_records, cmip5_records, expected

RECORDS = all_records()


@pytest.fixture
def engine(fresh_db_url: str) -> Iterator[Engine]:
    engine = make_engine(fresh_db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def server(fresh_db_url: str, engine: Engine) -> Iterator[Client]:
    """A catalog app with its own engine (its index reads its own snapshots)."""
    client = Client(create_app(Settings(db=fresh_db_url), engine=make_engine(fresh_db_url)))
    yield client
    client.close()


@pytest.fixture
def writer(engine: Engine) -> Any:
    """``writer(records)``: publish on another connection, committed (another server's write)."""

    def _write(records: list[dict[str, Any]]) -> None:
        with make_sessionmaker(engine)() as session:
            publish(session, [parse_record(r) for r in records])
            session.commit()

    return _write


@pytest.fixture
def headers(engine: Engine) -> dict[str, str]:
    with Session(engine) as session:
        token = create_token(session, "index-tests")
        session.commit()
    return {"Authorization": f"Bearer {token}"}


def found(server: Client, **params: Any) -> tuple[int, set[str], dict[str, Any]]:
    response = server.get("/search", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    return body["total"], {r["name"] for r in body["results"]}, body["facets"]


def test_publish_through_the_api_is_searchable_at_once(server, headers, engine):
    assert found(server, model="CCSM4")[0] == 0  # the index loads the empty catalog
    response = server.post("/publish", content=ndjson(RECORDS), headers=headers)
    assert response.status_code == 200
    total, names, facets = found(server, model="CCSM4")
    assert names == expected(RECORDS, model="CCSM4") and total == len(names)
    assert facets["model"]["CCSM4"] == total
    with Session(engine) as session:
        assert consistency.check(session) == len(RECORDS)


def test_a_republished_version_moves_its_counts(server, writer):
    writer(RECORDS)
    record = copy.deepcopy(cmip5_records()[0])
    old_model = record["facets"]["model"]
    before = found(server, model=old_model)[0]
    record["facets"]["model"] = "BrandNewModel"
    record["version"] = "2"
    writer([record])
    assert found(server, model=old_model)[0] == before - 1
    total, names, facets = found(server, model="BrandNewModel")
    assert (total, names) == (1, {record["name"]})
    assert facets["model"]["BrandNewModel"] == 1
    assert facets["model"].get(old_model, 0) == before - 1
    # the name order is unchanged: the replaced record keeps its place
    everything = server.get("/search", params={"limit": 1000}).json()["results"]
    assert [r["name"] for r in everything] == sorted(r["name"] for r in RECORDS)


def test_a_retracted_file_leaves_results_counts_and_prefixes(server, writer, engine):
    writer(RECORDS)
    gone = cmip5_records()[3]
    model = gone["facets"]["model"]
    before = found(server, model=model)
    with make_sessionmaker(engine)() as session:
        assert retract(session, gone["name"]) is not None
        session.commit()
    after = found(server, model=model)
    assert after[0] == before[0] - 1 and gone["name"] not in after[1]
    assert after[2]["model"].get(model, 0) == before[0] - 1
    assert gone["name"] not in found(server, prefix=gone["name"].rsplit("/", 1)[0])[1]
    assert found(server, prefix=gone["name"])[0] == 0


def test_a_reused_id_takes_its_new_name_in_order_and_prefixes(server, writer, engine):
    writer(RECORDS)
    found(server)  # load the index with the full name order
    last = max(RECORDS, key=lambda r: r["name"])  # inserted in name order: the largest id
    with make_sessionmaker(engine)() as session:
        retract(session, last["name"])
        session.commit()
    newcomer = {**cmip5_records()[0], "name": "/AAA/first/file.nc", "facets": {"model": "Zz"}}
    writer([newcomer])  # takes the freed id
    body = server.get("/search", params={"limit": 3}).json()
    assert body["results"][0]["name"] == "/AAA/first/file.nc"
    assert found(server, prefix="/AAA")[1] == {"/AAA/first/file.nc"}
    assert last["name"] not in found(server, prefix=last["name"].rsplit("/", 1)[0])[1]


@pytest.mark.parametrize("rerank_after", [0, 10_000])
def test_new_names_are_merged_or_reranked_into_the_order(server, writer, monkeypatch, rerank_after):
    monkeypatch.setattr(facetindex, "RERANK_PENDING", rerank_after)
    writer(RECORDS[:40])
    found(server)
    writer(RECORDS[40:])  # 50 names outside the name order (merged, or the order re-read)
    for sort in ("name", "-name", "size", "-time_start"):
        body = server.get("/search", params={"limit": 1000, "sort": sort}).json()
        assert body["total"] == len(RECORDS)
        if sort.endswith("name"):
            wanted = sorted((r["name"] for r in RECORDS), reverse=sort.startswith("-"))
            assert [r["name"] for r in body["results"]] == wanted
    page = server.get("/search", params={"limit": 7, "offset": 30, "sort": "-name"}).json()
    wanted = sorted((r["name"] for r in RECORDS), reverse=True)[30:37]
    assert [r["name"] for r in page["results"]] == wanted
    prefix = "/".join(cmip5_records()[0]["name"].split("/")[:4])
    assert found(server, prefix=prefix)[1] == {
        r["name"] for r in RECORDS if r["name"].startswith(prefix + "/")
    }


def test_a_large_delta_rebuilds_the_index(server, writer, monkeypatch):
    writer(RECORDS[:10])
    found(server)
    monkeypatch.setattr(facetindex, "REBUILD_CHANGES", 5)
    writer(RECORDS[10:])
    assert found(server)[0] == len(RECORDS)
    assert found(server, model="CCSM4")[1] == expected(RECORDS, model="CCSM4")


def test_another_process_publishes_and_the_server_sees_it(server, fresh_db_url, tmp_path):
    assert found(server)[0] == 0
    lines = tmp_path / "records.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    out = run_cli("publish", "--records", str(lines), "--db", fresh_db_url)
    assert out.returncode == 0, out.stderr
    total, names, _facets = found(server, experiment="historical")
    assert names == expected(RECORDS, experiment="historical") and total == len(names)


def test_a_page_read_after_the_database_moved_is_stale(engine, writer):
    """The check that sends a search back to sync: a page row newer than the index."""
    writer(RECORDS)
    index = FacetIndex(engine_source(engine))
    index.sync()
    changed = copy.deepcopy(cmip5_records()[0])
    changed["version"] = "99"
    writer([changed])  # the index has not synced
    params = SearchParams(limit=1000)
    with Session(engine) as session, index.lock.read():
        with pytest.raises(Stale):
            Search(session, params, index).results()
        rows = Search(session, params, index, strict=False).results()  # the last attempt
        assert len(rows) == len(RECORDS)  # the rows as they are now
    index.sync()
    with Session(engine) as session, index.reading():
        assert len(Search(session, params, index).results()) == len(RECORDS)


def test_a_server_answers_while_its_facet_index_loads(fresh_db_url, monkeypatch):
    """The index is loaded beside the first requests (a 10M catalog takes minutes at load 15):
    /health, files and the tree answer at once; a search meanwhile is a 503 with Retry-After
    (never an answer from a half-made index), and answers once the load is done."""
    import threading

    from fastapi.testclient import TestClient

    records = list(cmip5_records())[:5]
    engine = make_engine(fresh_db_url)
    with make_sessionmaker(engine)() as session:
        publish(session, [parse_record(r) for r in records])
        session.commit()
    engine.dispose()
    release, loading = threading.Event(), threading.Event()
    load = FacetIndex._load

    def slow(self, connection):
        loading.set()
        assert release.wait(30)
        load(self, connection)

    monkeypatch.setattr(FacetIndex, "_load", slow)
    app = create_app(Settings(db=fresh_db_url, read_wait_seconds=0.2))
    try:
        with TestClient(app) as client:  # runs the app's start-up
            assert loading.wait(10)
            assert client.get("/api/v1/health").status_code == 200
            assert client.get("/api/v1/files" + records[0]["name"]).status_code == 200
            assert client.get("/api/v1/tree", params={"path": "/"}).json()["count"] == 5
            busy = client.get("/api/v1/search")
            assert busy.status_code == 503 and "Retry-After" in busy.headers
            release.set()
            app.state.index_loading.join(30)
            found = client.get("/api/v1/search", params={"limit": 0}).json()
            assert found["total"] == 5
    finally:
        release.set()
