"""POST /publish, DELETE /files, GET /changes: idempotence, history, tokens, bad bodies."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from sqlalchemy import text

from ndnsci_catalog import bulk, fulltext
from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.main import create_app
from ndnsci_catalog.tokens import create_token

from . import consistency
from .conftest import Client, ndjson
from .corpus import cmip5_records

RECORD = cmip5_records()[0]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_republishing_the_same_records_changes_nothing(client, publish, session):
    first = publish(list(cmip5_records()))
    again = publish(list(cmip5_records()))
    assert first["inserted"] == len(cmip5_records())
    assert again == {"inserted": 0, "replaced": 0, "unchanged": len(cmip5_records()),
                     "last_seq": first["last_seq"], "collisions": [], "conflicts": 0,
                     "conflicting": []}  # fmt: skip
    assert consistency.check(session) == len(cmip5_records())


def test_a_new_version_replaces_and_keeps_history(client, publish, session):
    publish([{**RECORD, "version": "1", "size": 10}])
    changed = copy.deepcopy(RECORD)
    changed["facets"]["experiment"] = "rcp85"
    assert publish([{**changed, "version": "2", "size": 20}])["replaced"] == 1
    record = client.get("/files" + RECORD["name"]).json()
    assert record["version"] == "2" and record["size"] == 20
    assert [h["version"] for h in record["history"]] == ["1"]
    assert record["history"][0]["size"] == 10
    # the old facet value no longer counts, the new one does
    counts = client.get("/search", params={"facets": "experiment"}).json()["facets"]["experiment"]
    assert counts == {"rcp85": 1}
    assert consistency.check(session) == 1


def test_replaced_and_retracted_records_leave_the_free_text(client, publish, token, session):
    """The SQLite free-text table keeps no copy of the documents: a replaced or retracted
    file's document is made again from its row to remove it; none of its words may stay."""
    metadata = {"title": "quokka run", "variables": {"tas": {"long_name": "Numbat"}}}
    first = {**RECORD, "name": RECORD["name"].replace("/tas_", "/Quoll%20tas_"),
             "version": "1", "original_path": "old/dir/x.nc", "metadata": metadata}  # fmt: skip
    first["facets"] = {**RECORD["facets"], "geo": "Tasmania"}
    publish([first])

    def found(word: str) -> list[str]:
        answer = client.get("/search", params={"q": word}).json()
        return [r["name"] for r in answer["results"]]

    assert found("quokka") == found("numbat") == found("quoll") == [first["name"]]
    assert found("tasmania") == [first["name"]]
    changed = copy.deepcopy(first)
    changed["metadata"]["title"] = "wombat run"
    changed["facets"]["geo"] = "rcp85"
    assert publish([{**changed, "version": "2"}])["replaced"] == 1
    assert found("quokka") == [] and found("tasmania") == []
    assert found("wombat") == found("rcp85") == found("numbat") == [first["name"]]
    assert client.delete("/files" + first["name"], headers=auth(token)).status_code == 200
    dialect = session.connection().dialect.name
    for word in ("wombat", "rcp85", "numbat", "quoll", "old", "dir", "tas"):
        # not only hidden by the index (a retracted id is not alive): gone from the table
        sql, param = fulltext.matching_sql(dialect, word)
        assert session.connection().exec_driver_sql(sql, (param,)).all() == [], word
    publish([RECORD])  # the id of the retracted file is taken again
    assert found("wombat") == found("old") == [] and found("tas") == [RECORD["name"]]
    assert consistency.check(session) == 1


def test_the_free_text_ids_as_one_string_are_the_rows_ids(publish, session):
    """The search reads a word's ids as one string (``matching_list_sql``): the same ids as the
    plain SELECT of ``matching_sql``, on both backends; NULL when nothing matches."""
    records = list(cmip5_records())
    publish(records)
    connection = session.connection()
    dialect = connection.dialect.name
    for word in ("tas", "cmip5", "historical", "tas*", '"MPI-ESM-LR"', "tas pr", "nomatchword"):
        sql, param = fulltext.matching_sql(dialect, word)
        rows = sorted(r[0] for r in connection.exec_driver_sql(sql, (param,)).all())
        sql, param = fulltext.matching_list_sql(dialect, word)
        (joined,) = connection.exec_driver_sql(sql, (param,)).one()
        listed = sorted(int(x) for x in joined.split(" ")) if joined is not None else []
        assert listed == rows, word
    sql, param = fulltext.matching_list_sql(dialect, "tas")
    assert connection.exec_driver_sql(sql, (param,)).one()[0].count(" ") > 0


def test_retract_removes_and_feeds_the_change(client, publish, token, session):
    publish(list(cmip5_records()[:3]))
    name = cmip5_records()[1]["name"]
    response = client.delete("/files" + name, headers=auth(token))
    assert response.status_code == 200 and response.json()["name"] == name
    assert client.get("/files" + name).status_code == 404
    assert client.delete("/files" + name, headers=auth(token)).status_code == 404
    feed = client.get("/changes", params={"since": 0}).json()
    assert [(c["op"], c["name"]) for c in feed["changes"]][-1] == ("retract", name)
    assert [c["seq"] for c in feed["changes"]] == list(range(1, 5))
    assert feed["last_seq"] == feed["next"] == 4
    assert client.get("/changes", params={"since": 4}).json()["changes"] == []
    assert consistency.check(session) == 2


def test_changes_page_in_order(client, publish):
    publish(list(cmip5_records()[:10]))
    page = client.get("/changes", params={"since": 3, "limit": 4}).json()
    assert [c["seq"] for c in page["changes"]] == [4, 5, 6, 7] and page["next"] == 7


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic dXNlcjpwYXNz"},
     {"Authorization": "Bearer ndnsci_" + "x" * 43}, {"Authorization": "Bearer " + "y" * 5000}],
)  # fmt: skip
def test_publish_and_retract_need_a_valid_token(client, headers, session):
    response = client.post("/publish", content=ndjson([RECORD]), headers=headers)
    assert response.status_code == 401
    assert "WWW-Authenticate" in response.headers
    assert client.delete("/files" + RECORD["name"], headers=headers).status_code == 401
    assert consistency.check(session) == 0


def _bad(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    bad = copy.deepcopy(record)
    bad.update(changes)
    return bad


BAD_RECORDS = [
    ("not an object", '"just a string"'),
    ("not JSON", '{"name": '),
    ("failed translation", json.dumps({"input": "x.nc", "ok": False, "name": None,
                                       "error": {"code": "not-drs", "message": "no"}})),
    ("dot-dot component", json.dumps(_bad(RECORD, name="/CMIP5/../etc/passwd"))),
    ("escaped slash", json.dumps(_bad(RECORD, name="/CMIP5/a%2F..%2Fb/c.nc"))),
    ("escaped dot-dot", json.dumps(_bad(RECORD, name="/CMIP5/x/....."))),
    ("NUL in name", json.dumps(_bad(RECORD, name="/CMIP5/a%00b/c.nc"))),
    ("relative name", json.dumps(_bad(RECORD, name="CMIP5/a.nc"))),
    ("typed component", json.dumps(_bad(RECORD, name="/CMIP5/v=3/a.nc"))),
    ("bad scheme", json.dumps(_bad(RECORD, scheme="CMIP5; drop table"))),
    ("facet key injection", json.dumps(_bad(RECORD, facets={"model') OR 1=1 --": "x"}))),
    ("reserved facet", json.dumps(_bad(RECORD, facets={"limit": "x"}))),
    ("numeric facet", json.dumps(_bad(RECORD, facets={"model": 3}))),
    ("negative size", json.dumps(_bad(RECORD, size=-1))),
    ("bool size", json.dumps(_bad(RECORD, size=True))),
    ("bad sha256", json.dumps(_bad(RECORD, sha256="abc"))),
    ("metadata list", json.dumps(_bad(RECORD, metadata=[1, 2]))),
    ("corrections dict", json.dumps(_bad(RECORD, corrections={"rule": "x"}))),
]  # fmt: skip


@pytest.mark.parametrize(("why", "line"), BAD_RECORDS, ids=[b[0] for b in BAD_RECORDS])
def test_a_bad_line_rejects_the_request_with_its_number(client, token, session, why, line):
    good = [json.dumps(r) for r in cmip5_records()[:3]]
    body = "\n".join([good[0], good[1], "", line, good[2]]) + "\n"
    response = client.post("/publish", content=body.encode(), headers=auth(token))
    assert response.status_code == 422, response.text
    assert response.json()["line"] == 4 and response.json()["code"] == "invalid-records"
    assert response.json()["detail"].startswith("line 4: ")
    assert [r["line"] for r in response.json()["refused"]] == [4]
    assert consistency.check(session) == 0  # nothing half-written


def test_every_bad_line_is_reported_at_once(client, token, session):
    """A publisher drops them all and sends the rest once: no line-by-line re-sends."""
    lines = [json.dumps(r) for r in cmip5_records()[:8]]
    for at, (_, bad) in zip((1, 4, 7), BAD_RECORDS[:3], strict=True):
        lines[at] = bad
    response = client.post("/publish", content="\n".join(lines).encode(), headers=auth(token))
    assert response.status_code == 422
    assert [r["line"] for r in response.json()["refused"]] == [2, 5, 8]
    assert "and 2 more lines" in response.json()["detail"]
    assert consistency.check(session) == 0


def test_too_many_records_is_a_limit_refusal_not_a_bad_record(client, token, session):
    """The limits are stated by /limits; a request over them is 413 batch-too-large, with
    the limits again, and no line is blamed."""
    limits = client.get("/limits").json()
    assert limits["max_publish_records"] == 1000  # the test app's setting
    body = ndjson([{**RECORD, "name": f"/CMIP5/x/{i}.nc"} for i in range(1001)])
    response = client.post("/publish", content=body, headers=auth(token))
    assert response.status_code == 413, response.text
    answer = response.json()
    assert answer["code"] == "batch-too-large" and "line" not in answer
    assert (answer["max_records"], answer["max_bytes"]) == (1000, limits["max_publish_bytes"])
    assert consistency.check(session) == 0
    assert client.post("/publish", content=ndjson([RECORD] * 1000), headers=auth(token)).is_success


def test_a_body_over_the_byte_limit_is_refused_before_it_is_read(client_with, token, session):
    """The body limit's 413 is a publish's batch-too-large: a publisher cuts its batch."""
    c = client_with(max_publish_bytes=2000)
    body = ndjson([RECORD] * 10)
    assert len(body) > 2000
    response = c.post("/publish", content=body, headers=auth(token))
    assert response.status_code == 413
    answer = response.json()
    assert (answer["code"], answer["max_bytes"], answer["max_records"]) == (
        "batch-too-large", 2000, 1000,
    )  # fmt: skip
    assert consistency.check(session) == 0


def _files_of_one_name() -> tuple[dict[str, Any], dict[str, Any]]:
    """The real case: one file name under .../6hrLev/... and .../6hrPlev/... of an archive,
    two different files that translate to one name."""
    first = {**RECORD, "original_path": "output1/x/6hr/atmos/6hrLev/r1i1p1/ta/f.nc",
             "sha256": "a" * 64, "size": 10}  # fmt: skip
    second = {**first, "original_path": first["original_path"].replace("6hrLev", "6hrPlev"),
              "sha256": "b" * 64, "size": 20}  # fmt: skip
    return first, second


def test_a_collision_inside_one_request_keeps_the_first(client, publish, session):
    first, second = _files_of_one_name()
    answer = publish([first, second])
    assert answer["inserted"] == 1
    assert answer["collisions"] == [
        {"line": 2, "name": RECORD["name"], "published": first["original_path"],
         "given": second["original_path"], "replaced": False},
    ]  # fmt: skip
    assert client.get("/files" + RECORD["name"]).json()["size"] == 10
    assert consistency.check(session) == 1


def test_the_same_file_again_is_an_update_not_a_collision(client, publish, session):
    first, _ = _files_of_one_name()
    publish([first])
    moved = {**first, "original_path": "elsewhere/f.nc"}  # same content, another place
    grown = {**moved, "sha256": "c" * 64, "size": 30}  # same place, new content
    answer = publish([moved])
    assert (answer["replaced"], answer["collisions"]) == (1, [])
    answer = publish([grown])
    assert (answer["replaced"], answer["collisions"]) == (1, [])
    assert client.get("/files" + RECORD["name"]).json()["size"] == 30
    assert consistency.check(session) == 1


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the name lookups (``Writer.existing``) publishes make."""
    made: list[int] = []
    looked_up = bulk.Writer.existing

    def existing(self: bulk.Writer, names: list[str]) -> dict[str, dict[str, Any]]:
        made.append(len(names))
        return looked_up(self, names)

    monkeypatch.setattr(bulk.Writer, "existing", existing)
    return made


def _by_name() -> list[dict[str, Any]]:
    return sorted(cmip5_records(), key=lambda r: r["name"])


def test_new_names_are_written_without_a_lookup_on_sqlite(
    client, publish, session, lookups, backend
):
    answer = publish(_by_name()[:20])
    assert answer["inserted"] == 20
    # PostgreSQL looks the names up with one statement, always; SQLite probes a few
    assert lookups == ([] if backend == "sqlite" else [20])
    assert consistency.check(session) == 20


def test_the_change_feed_of_new_names_is_the_usual_one(client, publish, session, lookups):
    first, second = _by_name()[:12], _by_name()[12:20]
    publish(first)
    publish(second)  # on SQLite both written without a lookup: changes made from the rows
    feed = client.get("/changes", params={"since": 0}).json()["changes"]
    assert [c["seq"] for c in feed] == list(range(1, 21))
    # one publish change per name, in name order within each batch, with the row's version
    assert [c["name"] for c in feed] == [r["name"] for r in first + second]
    assert {c["op"] for c in feed} == {"publish"}
    rows = session.execute(
        text("SELECT seq, name, version, published_at, id, site FROM files ORDER BY seq")
    ).all()
    changes = session.execute(
        text("SELECT seq, name, version, at, file_id, site FROM changes ORDER BY seq")
    ).all()
    assert changes == rows
    # a later batch of both kinds (a new name and a replaced one) still feeds one change each
    newer = {**first[0], "version": "v2", "sha256": "c" * 64}
    answer = publish([newer, {**first[1], "name": first[1]["name"] + "x"}])
    assert (answer["inserted"], answer["replaced"]) == (1, 1)
    feed = client.get("/changes", params={"since": 20}).json()["changes"]
    assert [(c["seq"], c["name"]) for c in feed] == [
        (21, newer["name"]),
        (22, first[1]["name"] + "x"),
    ]
    assert consistency.check(session) == 21


@pytest.mark.parametrize("same_file", [True, False])
def test_a_published_name_the_probes_miss_gives_the_usual_answer(
    client, publish, session, lookups, backend, same_file
):
    records = _by_name()[:20]
    # probed: the 1st, 5th, 10th, 14th and 20th names of the sorted batch; the 3rd is not
    held = {**records[2], "original_path": "a/f.nc", "sha256": "a" * 64, "size": 10}
    publish([held])
    lookups.clear()
    if same_file:  # the same file again: unchanged
        records[2] = held
    else:  # another file with that name: a collision, the published one stays
        records[2] = {**held, "original_path": "b/f.nc", "sha256": "b" * 64, "size": 20}
    answer = publish(records)
    # written without a lookup, the files rows fell one short (a name published): they were
    # taken back and the batch written the usual way, with one lookup of all twenty names
    assert lookups == [20]
    assert (answer["inserted"], answer["unchanged"]) == (19, 1 if same_file else 0)
    assert len(answer["collisions"]) == (0 if same_file else 1)
    assert client.get("/files" + held["name"]).json()["size"] == 10
    # nothing written twice: files, free text, tree counts, change feed
    assert consistency.check(session) == 20
    assert session.execute(text("SELECT count(*) FROM changes")).scalar_one() == 20


def test_a_republished_batch_is_looked_up_at_once(client, publish, session, lookups):
    records = _by_name()[:20]
    publish(records)
    lookups.clear()
    assert publish(records)["unchanged"] == 20
    assert lookups == [20]  # the probes found published names: no optimistic write


def test_undecodable_body(client, token, session):
    response = client.post("/publish", content=b"\xff\xfe{}\n", headers=auth(token))
    assert response.status_code == 422 and response.json()["line"] == 1


def test_a_failing_batch_leaves_the_committed_ones_intact(
    client, publish, token, session, monkeypatch
):
    publish(list(cmip5_records()[:5]))
    from ndnsci_catalog import bulk

    def crash(*_args: Any) -> None:
        raise RuntimeError("disk on fire")

    # the last write of a batch but one: the files are written, the transaction is not done
    monkeypatch.setattr(bulk.Writer, "insert_fulltext", crash)
    monkeypatch.setattr(bulk.PostgresWriter, "insert_fulltext", crash)
    with pytest.raises(RuntimeError):
        client.post("/publish", content=ndjson(list(cmip5_records()[5:10])), headers=auth(token))
    session.rollback()
    assert consistency.check(session) == 5


CLIM = "novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011"


def test_the_original_file_name_is_kept_returned_and_searchable(client, publish, session):
    """The translator's input before corrections: its last component is the original name."""
    renamed = {
        **RECORD,
        "name": RECORD["name"].rsplit("/", 1)[0] + f"/{CLIM}-clim.nc",
        "filename": f"{CLIM}-clim.nc",
        "input": f"/archive/cmip5/output1/MOHC/HadGEM2-ES/rcp45/{CLIM}_clim.nc",
        "corrections": [{"rule": "clim-suffix", "message": "'_clim' -> '-clim'"}],
    }
    stated = {**cmip5_records()[1], "original": "Legacy Name (copy).nc",
              "original_path": "old/layout/Legacy Name (copy).nc"}  # fmt: skip
    plain = cmip5_records()[2]
    assert publish([renamed, stated, plain])["inserted"] == 3
    record = client.get("/files" + renamed["name"]).json()
    assert record["original"] == f"{CLIM}_clim.nc"
    assert record["filename"] == f"{CLIM}-clim.nc"
    assert record["original_path"] is None  # never an absolute provider path
    assert record["corrections"][0]["rule"] == "clim-suffix"
    record = client.get("/files" + stated["name"]).json()
    assert (record["original"], record["original_path"]) == (
        "Legacy Name (copy).nc", "old/layout/Legacy Name (copy).nc",
    )  # fmt: skip
    body = client.get("/search", params={"limit": 10}).json()
    originals = {r["name"]: r["original"] for r in body["results"]}
    assert originals == {
        renamed["name"]: f"{CLIM}_clim.nc",
        stated["name"]: "Legacy Name (copy).nc",
        plain["name"]: plain["filename"],  # no input: the canonical name is all that is known
    }
    # free text finds a file by its original name and original directories
    for q in ("legacy", "copy", "layout"):
        found = client.get("/search", params={"q": q}).json()["results"]
        assert [r["name"] for r in found] == [stated["name"]], q
    # the same name from another file is a collision: reported, the published file stays
    again = {**stated, "original": "other.nc", "original_path": None}
    answer = publish([again])
    assert (answer["inserted"], answer["replaced"], answer["unchanged"]) == (0, 0, 0)
    assert answer["collisions"] == [
        {"line": 1, "name": stated["name"], "published": "old/layout/Legacy Name (copy).nc",
         "given": "other.nc", "replaced": False},
    ]  # fmt: skip
    assert client.get("/files" + stated["name"]).json()["original"] == "Legacy Name (copy).nc"
    # asked to replace, it does, keeps the old one in the history and still says so
    assert publish([again], replace=True)["collisions"][0]["replaced"] is True
    record = client.get("/files" + stated["name"]).json()
    assert record["original"] == "other.nc" and len(record["history"]) == 1
    assert client.get("/search", params={"q": "legacy"}).json()["total"] == 0
    assert consistency.check(session) == 3


@pytest.mark.parametrize(
    "original_path",
    ["/home/site/archive/x.nc", "../x.nc", "a/../../x.nc", "\\\\server\\share\\x.nc", "a\x00b", ""],
)
def test_an_original_path_must_be_relative(client, token, session, original_path):
    body = ndjson([{**RECORD, "original_path": original_path}])
    response = client.post("/publish", content=body, headers=auth(token))
    assert response.status_code == 422, response.text
    assert "original_path" in response.json()["detail"]
    assert consistency.check(session) == 0


@pytest.mark.parametrize(
    ("given", "original"),
    [
        ("cmip5.output1.MOHC.HadGEM2-CC.rcp85.mon.atmos.Amon.r1i1p1.tas_x.nc|esgf.llnl.gov",
         "cmip5.output1.MOHC.HadGEM2-CC.rcp85.mon.atmos.Amon.r1i1p1.tas_x.nc"),
        ("C:\\data\\cmip5\\tas_x.nc_1", "tas_x.nc_1"),
        ("/store/mc/x/y.root", "y.root"),
        ("tas_x.nc", "tas_x.nc"),
        ("bad\x01name.nc", RECORD["filename"]),  # unusable input: the canonical name
    ],
)  # fmt: skip
def test_the_original_name_is_the_last_component_of_the_input(given, original):
    from ndnsci_catalog.records import parse_record

    assert parse_record({**RECORD, "input": given}).original == original


def test_a_server_writes_its_publishes_on_a_connection_of_its_own(fresh_db_url):
    """A server that owns its database writes every publish on one connection of its own
    (a SQLite connection's page cache is dropped when another one commits); the requests'
    pool and the searches see what it committed."""
    app = create_app(Settings(db=fresh_db_url, max_publish_records=1000))
    engine = make_engine(fresh_db_url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, "one-connection")
        session.commit()
    client = Client(app)
    try:
        assert app.state.publish_engine.pool.size() == 1
        records = list(cmip5_records()[:20])
        for part in (records[:10], records[10:]):
            response = client.post("/publish", content=ndjson(part), headers=auth(token))
            assert response.status_code == 200 and response.json()["inserted"] == 10
        assert app.state.publish_engine.pool.checkedin() == 1
        assert client.get("/search").json()["total"] == 20
    finally:
        client.close()
        app.state.publish_engine.dispose()
        app.state.engine.dispose()
        engine.dispose()
    # an in-memory database has no second engine: another one would open another database
    assert create_app(Settings(db="sqlite://")).state.publish_engine is None
