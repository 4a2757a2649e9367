"""The catalog's side of the federation, on both backends: origin site and ``site`` facet,
trust list, conflicts never merged, outgoing changes, applying another site's batch."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ndnsci_catalog import sites
from ndnsci_catalog.errors import ConflictError
from ndnsci_catalog.ingest import publish, retract
from ndnsci_catalog.models import Change, File
from ndnsci_catalog.records import parse_record

from .conftest import Client

HERE = "1" * 64
THERE = "2" * 64


def record(i: int, model: str = "M", **extra: Any) -> dict[str, Any]:
    name = f"/CMIP5/output1/I/{model}/historical/mon/atmos/Amon/r1i1p1/v1/tas/tas_{i}.nc"
    return {"name": name, "scheme": "cmip5", "size": i, "facets": {"model": model}, **extra}


@pytest.fixture
def here(session: Session) -> sites.SiteInfo:
    local = sites.init_local(session, "here", "/here", HERE)
    sites.trust(session, "there", "/there", THERE)
    session.commit()
    return local


def apply(session: Session, changes: list[dict[str, Any]], number: int = 1) -> sites.ApplyResult:
    result = sites.apply_batch(session, "there", 5, number, changes)
    session.commit()
    return result


def published(i: int, model: str = "T") -> dict[str, Any]:
    r = record(i, model)
    return {"op": "publish", "name": r["name"], "record": r}


def test_records_carry_their_site_and_search_filters_and_counts_by_it(
    here: sites.SiteInfo, session: Session, client: Client, publish: Any
) -> None:
    publish([record(i) for i in range(3)])
    apply(session, [published(i) for i in range(5)])
    body = client.get("/search", params={"site": "there", "limit": 10}).json()
    assert body["total"] == 5
    assert {r["site"] for r in body["results"]} == {"there"}
    counts = client.get("/search", params={"facets": "site"}).json()["facets"]
    assert counts["site"] == {"here": 3, "there": 5}
    assert client.get("/search", params={"site!": "there"}).json()["total"] == 3
    one = client.get(f"/files{record(1)['name']}").json()
    assert one["site"] == "here"
    assert sites.get_site(session, "there").applied == 1  # type: ignore[union-attr]


def test_a_catalog_without_a_site_name_filters_by_site_too(client: Client, publish: Any) -> None:
    publish([record(1)])
    body = client.get("/search", params={"site": "anything"}).json()
    assert body["total"] == 0  # a valid facet, no file has it


def test_a_record_may_not_set_the_site_facet(client: Client, token: str) -> None:
    bad = record(1, facets={"site": "elsewhere"})
    response = client.post("/publish", content=(json.dumps(bad) + "\n").encode(),
                           headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert response.status_code == 422
    assert "set by the catalog" in response.json()["detail"]


def test_a_name_another_site_holds_is_a_conflict_never_merged(
    here: sites.SiteInfo, session: Session, client: Client, publish: Any
) -> None:
    apply(session, [published(1)])
    mine = {**record(1, "T"), "size": 999}
    answer = publish([mine, record(2)])
    assert answer["conflicts"] == 1
    assert answer["conflicting"] == [{"name": mine["name"], "held_by": "there"}]
    assert answer["inserted"] == 1
    kept = client.get(f"/files{mine['name']}").json()
    assert (kept["site"], kept["size"]) == ("there", 1)
    listed = client.get("/conflicts").json()
    assert listed["total"] == 1
    assert listed["conflicts"][0] | {"at": None} == {
        "name": mine["name"], "held_by": "there", "claimed_by": "here", "op": "publish",
        "at": None,
    }  # fmt: skip
    # and the other way: their claim on our name
    ours = record(2)
    result = apply(session, [{"op": "publish", "name": ours["name"], "record": ours}], 2)
    assert result.conflicts == [ours["name"]]
    assert client.get(f"/files{ours['name']}").json()["site"] == "here"


def test_a_sites_new_file_under_its_own_name_is_followed_not_a_collision(
    here: sites.SiteInfo, session: Session, client: Client
) -> None:
    """Another file under a name the site holds: the site decided it (its own collision check,
    ``--replace``), so the change is applied as it is, or the two catalogs would differ."""
    apply(session, [published(1)])
    other = {**record(1, "T"), "size": 7}  # nothing in common with the first: another file
    result = apply(session, [{"op": "publish", "name": other["name"], "record": other}], 2)
    assert (result.replaced, result.conflicts) == (1, [])
    assert client.get(f"/files{other['name']}").json()["size"] == 7


def test_retracting_another_sites_name_is_refused(
    here: sites.SiteInfo, session: Session, client: Client, token: str
) -> None:
    apply(session, [published(1)])
    name = record(1, "T")["name"]
    response = client.delete(f"/files{name}", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 409
    assert response.json()["held_by"] == "there"
    with pytest.raises(ConflictError):
        retract(session, name)
    assert client.get(f"/files{name}").status_code == 200


def test_a_batch_publishes_replaces_and_retracts_in_order(
    here: sites.SiteInfo, session: Session, client: Client
) -> None:
    apply(session, [published(i) for i in range(4)])
    changed = record(1, "T")
    changed["size"] = 77
    result = apply(session, [
        {"op": "retract", "name": record(0, "T")["name"]},
        {"op": "publish", "name": changed["name"], "record": changed},
        {"op": "publish", "name": "/bad", "record": {"name": "/bad"}},  # malformed: refused
        {"op": "retract", "name": record(9, "T")["name"]},  # unknown: nothing to do
    ], 2)  # fmt: skip
    assert (result.retracted, result.replaced, len(result.refused)) == (1, 1, 1)
    assert client.get("/search", params={"site": "there"}).json()["total"] == 3
    assert client.get(f"/files{changed['name']}").json()["size"] == 77


def test_a_retraction_of_a_name_held_here_is_a_conflict(
    here: sites.SiteInfo, session: Session, client: Client, publish: Any
) -> None:
    publish([record(1)])
    result = apply(session, [{"op": "retract", "name": record(1)["name"]}])
    assert result.conflicts == [record(1)["name"]]
    assert client.get("/conflicts").json()["conflicts"][0]["op"] == "retract"
    assert client.get(f"/files{record(1)['name']}").status_code == 200


def test_outgoing_changes_are_ours_once_per_name_in_their_last_state(
    here: sites.SiteInfo, session: Session
) -> None:
    publish(session, [parse_record(record(i)) for i in range(3)])
    apply(session, [published(7)])  # theirs: never in our batches
    # a new record of file 1 (replace: nothing says it is the same file, docs/catalog.md)
    publish(session, [parse_record({**record(1), "size": 5})], replace=True)
    retract(session, record(2)["name"])
    session.commit()
    outgoing, scanned = sites.next_changes(session)
    assert outgoing is not None
    by_name = {c["name"]: c for c in outgoing.changes}
    assert len(outgoing.changes) == len(by_name) == 3
    assert by_name[record(1)["name"]]["record"]["size"] == 5
    assert by_name[record(2)["name"]] == {"op": "retract", "name": record(2)["name"]}
    assert record(7, "T")["name"] not in by_name
    assert scanned == session.scalar(select(func.max(Change.seq)))
    # parse_record reads a sent record back to the same row
    sent = parse_record(by_name[record(0)["name"]]["record"])
    assert sent == parse_record(record(0))
    sites.store_batch(session, 1, outgoing, b"sealed", scanned)
    session.commit()
    assert sites.next_changes(session) == (None, scanned)
    assert sites.batch_envelope(session, 1) == b"sealed"
    assert sites.local_site(session).applied == 1  # type: ignore[union-attr]


def test_records_from_before_the_site_had_a_name_become_its_own(
    session: Session, client: Client, publish: Any
) -> None:
    publish([record(i) for i in range(3)])
    sites.init_local(session, "here", "/here", HERE)
    assert sites.stamp_unnamed(session) == 3
    session.commit()
    assert sites.stamp_unnamed(session) == 0
    assert session.scalar(select(func.count()).where(File.site == "here")) == 3
    outgoing, _ = sites.next_changes(session)
    assert outgoing is not None and len(outgoing.changes) == 3


@pytest.mark.parametrize(
    ("name", "prefix", "key", "message"),
    [
        ("Bad Name", "/x", HERE, "site name"),
        ("ok", "", HERE, "prefix"),
        ("ok", "/x", "abc", "raw Ed25519 public key"),
        ("there", "/y", THERE, "has the name or the prefix"),
        ("other", "/there", THERE, "has the name or the prefix"),
        ("here", "/here", HERE, "own site"),
    ],
)
def test_a_bad_or_clashing_trust_entry_is_refused(
    here: sites.SiteInfo, session: Session, name: str, prefix: str, key: str, message: str
) -> None:
    with pytest.raises(sites.SiteError, match=message):
        sites.trust(session, name, prefix, key)


def test_a_site_keeps_its_name(here: sites.SiteInfo, session: Session) -> None:
    assert sites.init_local(session, "here", "/here", HERE) == here  # idempotent
    with pytest.raises(sites.SiteError, match="already"):
        sites.init_local(session, "elsewhere", "/elsewhere", HERE)


def test_the_sites_and_their_batches_over_http(
    here: sites.SiteInfo, session: Session, client: Client
) -> None:
    body = client.get("/sites").json()
    assert body["local"]["name"] == "here"
    assert [s["name"] for s in body["trusted"]] == ["there"]
    outgoing = sites.Outgoing(first_seq=1, last_seq=1, changes=[])
    sites.store_batch(session, 1, outgoing, b"\x00signed", 1)
    session.commit()
    got = client.get("/sites/here/batches/1")
    assert got.status_code == 200
    assert got.content == b"\x00signed"
    assert got.headers["content-type"] == "application/octet-stream"
    assert client.get("/sites/here/batches/2").status_code == 404
    assert client.get("/sites/there/batches/1").status_code == 404  # only our own
    assert client.get("/sites/here/batches/0").status_code == 422
