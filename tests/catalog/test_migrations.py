"""The migrations convert a populated catalog of the initial schema, both ways: facet index,
original file names (filled from the canonical ones), tree nodes without their path."""

from __future__ import annotations

import json
from typing import Any

from alembic import command
from sqlalchemy import text

from ndnsci_catalog import fulltext
from ndnsci_catalog.bulk import HEAD, unpack_ids
from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.ingest import publish
from ndnsci_catalog.main import create_app
from ndnsci_catalog.migrate import alembic_config
from ndnsci_catalog.records import parse_record

from .conftest import Client
from .corpus import cmip5_records

INITIAL = "2026_11_22_initial"
NAME = "/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/v1/tas/tas_x_185001-200512.nc"


def _old_catalog(url: str) -> None:
    """One file, its facets and tree nodes, written as the initial schema's code wrote them."""
    command.upgrade(alembic_config(url), INITIAL)
    engine = make_engine(url)
    facets = {"model": "HadCM3", "variable": "tas"}
    with engine.begin() as conn:
        for value_id, (key, value) in enumerate(facets.items(), start=1):
            conn.execute(
                text("INSERT INTO facet_values (id, key, value, count) VALUES (:i, :k, :v, 1)"),
                {"i": value_id, "k": key, "v": value},
            )
            conn.execute(text("INSERT INTO facet_keys (key) VALUES (:k)"), {"k": key})
            conn.execute(text("INSERT INTO file_facets VALUES (:v, 7)"), {"v": value_id})
        conn.execute(
            text(
                "INSERT INTO files (id, name, scheme, filename, size, time_start, time_end, "
                "facets, facet_ids, corrections, fingerprint, seq, published_at) VALUES "
                "(7, :n, 'cmip5', 'tas_x_185001-200512.nc', 42, '1850-01-01T00:00:00', "
                "'2005-12-31T23:59:59', :f, '1,2', '[]', 'x', 1, 'now')"
            ),
            {"n": NAME, "f": json.dumps(facets)},
        )
        parts = NAME.split("/")
        for end in range(2, len(parts)):
            path = "/".join(parts[:end])
            conn.execute(
                text("INSERT INTO tree_nodes VALUES (:p, :u, :c, 1, :l)"),
                {"p": path, "u": path.rpartition("/")[0], "c": parts[end - 1],
                 "l": int(end == len(parts) - 1)},
            )  # fmt: skip
        conn.execute(
            text("INSERT INTO changes VALUES (1, 'publish', :n, NULL, 'now')"), {"n": NAME}
        )
        conn.execute(text("UPDATE catalog_state SET last_seq = 1, files = 1, bytes = 42"))
    engine.dispose()


def _one(url: str, sql: str) -> Any:
    engine = make_engine(url)
    with engine.connect() as conn:
        row = conn.execute(text(sql)).one()
    engine.dispose()
    return row


def test_upgrade_packs_the_old_rows_and_the_catalog_answers(fresh_db_url: str) -> None:
    command.downgrade(alembic_config(fresh_db_url), "base")
    _old_catalog(fresh_db_url)
    command.upgrade(alembic_config(fresh_db_url), "head")
    (packed,) = _one(fresh_db_url, "SELECT packed FROM files")
    assert HEAD.unpack(bytes(packed)[: HEAD.size]) == (7, 1, 42, 18500101000000, 20051231235959)
    assert unpack_ids(packed) == [1, 2]
    assert _one(fresh_db_url, "SELECT file_id FROM changes") == (7,)
    # published before originals were kept: the canonical name is the best known
    assert _one(fresh_db_url, "SELECT original, original_path FROM files") == (
        "tas_x_185001-200512.nc", None,
    )  # fmt: skip
    assert _one(fresh_db_url, "SELECT count(*) FROM tree_nodes") == (len(NAME.split("/")) - 2,)
    engine = make_engine(fresh_db_url)
    client = Client(create_app(Settings(db=fresh_db_url), engine=engine))
    body = client.get("/search", params={"model": "HadCM3", "start": "2000"}).json()
    assert [r["name"] for r in body["results"]] == [NAME]
    assert body["facets"]["variable"] == {"tas": 1}
    assert body["results"][0]["original"] == "tas_x_185001-200512.nc"
    children = client.get("/autocomplete", params={"prefix": "/CMIP5/output1/MO"}).json()
    assert children["completions"][0]["name"] == "/CMIP5/output1/MOHC"
    tree = client.get("/tree", params={"path": "/CMIP5/output1"}).json()
    assert tree["children"] == [
        {"component": "MOHC", "name": "/CMIP5/output1/MOHC", "count": 1, "leaf": False}
    ]
    assert client.get("/stats").json()["roots"] == {"/CMIP5": 1}
    client.close()
    engine.dispose()


def test_downgrade_restores_the_initial_schema(fresh_db_url: str) -> None:
    command.downgrade(alembic_config(fresh_db_url), "base")
    _old_catalog(fresh_db_url)
    command.upgrade(alembic_config(fresh_db_url), "head")
    command.downgrade(alembic_config(fresh_db_url), "2026_11_22_original_name")
    assert _one(fresh_db_url, "SELECT path FROM tree_nodes WHERE parent = ''") == ("/CMIP5",)
    command.downgrade(alembic_config(fresh_db_url), "2026_11_22_facet_index")
    assert "original" not in _one(fresh_db_url, "SELECT * FROM files")._fields
    command.downgrade(alembic_config(fresh_db_url), INITIAL)
    assert _one(fresh_db_url, "SELECT facet_ids FROM files") == ("1,2",)
    assert _one(fresh_db_url, "SELECT count(*) FROM file_facets") == (2,)
    assert _one(fresh_db_url, "SELECT count FROM facet_values WHERE id = 1") == (1,)
    assert _one(fresh_db_url, "SELECT files FROM tree_nodes WHERE path = '/CMIP5'") == (1,)
    command.upgrade(alembic_config(fresh_db_url), "head")


BEFORE_CONTENTLESS = "2026_11_23_token_expiry"


def _matches(url: str, word: str) -> list[int]:
    engine = make_engine(url)
    with engine.connect() as conn:
        sql, param = fulltext.matching_sql(conn.dialect.name, word)
        ids = sorted(i for (i,) in conn.exec_driver_sql(sql, (param,)))
    engine.dispose()
    return ids


def _publish(url: str, records: list[dict[str, Any]]) -> None:
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        publish(session, [parse_record(r) for r in records])
        session.commit()
    engine.dispose()


def test_the_free_text_of_a_catalog_made_before_it_was_contentless(fresh_db_url: str) -> None:
    """A catalog whose FTS5 table kept the documents (main before 2026-11-27) is converted in
    place: the same ids match, replacing and retracting work on it, and the downgrade makes
    the documents again from the files."""
    records = list(cmip5_records()[:3])
    records[0] = {**records[0], "metadata": {"title": "quokka run"}}
    command.downgrade(alembic_config(fresh_db_url), BEFORE_CONTENTLESS)
    _publish(fresh_db_url, records)  # written as then: the FTS5 table with its content
    sqlite = fresh_db_url.startswith("sqlite")
    if sqlite:
        (sql,) = _one(fresh_db_url, "SELECT sql FROM sqlite_master WHERE name = 'files_fts'")
        assert "content=" not in sql
    before = {w: _matches(fresh_db_url, w) for w in ("quokka", "tas", "cmip5", "amon")}
    assert before["quokka"] == [1] and len(before["cmip5"]) == 3
    command.upgrade(alembic_config(fresh_db_url), "head")
    if sqlite:
        (sql,) = _one(fresh_db_url, "SELECT sql FROM sqlite_master WHERE name = 'files_fts'")
        assert "content=''" in sql
        # the documents are no longer stored twice
        assert _one(fresh_db_url, "SELECT count(*) FROM sqlite_master WHERE name = "
                    "'files_fts_content'") == (0,)  # fmt: skip
    assert {w: _matches(fresh_db_url, w) for w in before} == before
    # a replaced file's old words leave the index (its document is made from its row)
    _publish(fresh_db_url, [{**records[0], "metadata": {"title": "wombat"}, "version": "2"}])
    assert _matches(fresh_db_url, "quokka") == [] and _matches(fresh_db_url, "wombat") == [1]
    command.downgrade(alembic_config(fresh_db_url), BEFORE_CONTENTLESS)
    if sqlite:
        docs = _one(fresh_db_url, "SELECT group_concat(doc, '|') FROM files_fts")[0].split("|")
        assert len(docs) == 3 and any(" wombat" in d for d in docs)
    assert _matches(fresh_db_url, "wombat") == [1] and _matches(fresh_db_url, "quokka") == []
    assert _matches(fresh_db_url, "cmip5") == before["cmip5"]
    command.upgrade(alembic_config(fresh_db_url), "head")
    assert _matches(fresh_db_url, "wombat") == [1]


def test_the_free_text_holds_a_batch_of_terms_in_memory(fresh_db_url: str) -> None:
    """2026_11_28_fulltext_hash sets FTS5's pending-terms hash of a published catalog to 32 MB
    (nothing rebuilt: the same ids match after it, and publishing and replacing work); the
    downgrade sets FTS5's default back."""
    records = list(cmip5_records()[:3])
    records[0] = {**records[0], "metadata": {"title": "quokka run"}}
    command.downgrade(alembic_config(fresh_db_url), "2026_11_27_contentless_fulltext")
    _publish(fresh_db_url, records)
    sqlite = fresh_db_url.startswith("sqlite")
    hashsize = "SELECT v FROM files_fts_config WHERE k = 'hashsize'"
    if sqlite:
        assert _one(fresh_db_url, hashsize) == (1 << 20,)  # the downgrade of the fresh one
    before = {w: _matches(fresh_db_url, w) for w in ("quokka", "tas", "cmip5", "amon")}
    assert before["quokka"] == [1] and len(before["cmip5"]) == 3
    command.upgrade(alembic_config(fresh_db_url), "head")
    if sqlite:
        assert _one(fresh_db_url, hashsize) == (32 << 20,)
    assert {w: _matches(fresh_db_url, w) for w in before} == before
    _publish(fresh_db_url, [{**records[0], "metadata": {"title": "wombat"}, "version": "2"}])
    _publish(fresh_db_url, [{**records[1], "name": records[1]["name"] + "x", "version": "9"}])
    assert _matches(fresh_db_url, "quokka") == [] and _matches(fresh_db_url, "wombat") == [1]
    assert len(_matches(fresh_db_url, "cmip5")) == 4
    command.downgrade(alembic_config(fresh_db_url), "2026_11_27_contentless_fulltext")
    if sqlite:
        assert _one(fresh_db_url, hashsize) == (1 << 20,)
    assert _matches(fresh_db_url, "wombat") == [1] and len(_matches(fresh_db_url, "cmip5")) == 4
