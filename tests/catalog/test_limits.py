"""What one request may carry and cost (issue 14 A and C): limits stated by GET /limits, 413
beyond them, records refused with their reason, a busy server answering 503 + Retry-After."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ndnsci_catalog.records import FIELD_LIMITS, MAX_METADATA_DEPTH, MAX_RECORD

from . import consistency
from .conftest import ndjson
from .corpus import cmip5_records

RECORD = cmip5_records()[0]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- limits, bodies -------------------------------------------------------------------------


def test_the_limits_are_stated(client_with):
    c = client_with(max_publish_bytes=12_345, max_body_bytes=678, max_manifest_names=9)
    assert c.get("/limits").json() == {
        "max_publish_records": 1000,
        "max_publish_bytes": 12_345,
        "max_body_bytes": 678,
        "max_manifest_names": 9,
        **FIELD_LIMITS,
    }


def test_a_publish_body_over_the_limit_is_413_and_publishes_nothing(client_with, token, session):
    c = client_with(max_publish_bytes=10_000)
    body = ndjson(list(cmip5_records()))
    assert len(body) > 10_000
    response = c.post("/publish", content=body, headers=auth(token))
    assert response.status_code == 413
    assert response.json()["limit"] == 10_000 and "10000 bytes" in response.json()["detail"]
    assert consistency.check(session) == 0


def test_a_body_without_a_length_is_cut_at_the_limit(client_with, token, session):
    c = client_with(max_publish_bytes=10_000)

    async def chunks() -> Any:  # sent chunked: no Content-Length to refuse it by
        for _ in range(100):
            yield b" " * 1000

    response = c.post("/publish", content=chunks(), headers=auth(token))
    assert response.status_code == 413 and response.json()["limit"] == 10_000
    assert consistency.check(session) == 0


def test_a_manifest_body_over_the_limit_is_413(client_with):
    c = client_with(max_body_bytes=1000)
    response = c.post("/manifests", json={"names": ["/CMIP5/x/y.nc"] * 100})
    assert response.status_code == 413 and response.json()["limit"] == 1000


def test_more_names_than_a_manifest_takes_is_a_422_naming_the_limit(client_with):
    c = client_with(max_manifest_names=3)
    assert c.post("/manifests", json={"names": ["/CMIP5/x/y.nc"] * 3}).status_code == 200
    response = c.post("/manifests", json={"names": ["/CMIP5/x/y.nc"] * 4})
    assert response.status_code == 422 and "at most 3" in response.json()["detail"]


def test_a_long_invalid_value_is_not_quoted_back(client):
    response = client.post("/manifests", json={"names": "x" * 3_000_000})
    assert response.status_code == 422
    assert len(response.content) < 2000, "the 3 MB input came back in the error"


def test_deeply_nested_json_is_a_422_not_a_500(client, token, session):
    nested = b"[" * 100_000 + b"]" * 100_000
    response = client.post("/publish", content=nested, headers=auth(token))
    assert response.status_code == 422
    assert response.json()["line"] == 1 and "nested too deeply" in response.json()["detail"]
    assert consistency.check(session) == 0
    manifest = client.post(
        "/manifests", content=nested, headers={"Content-Type": "application/json"}
    )
    # as docs/catalog.md says ("JSON nested too deeply is a 422"), as the publish answers
    assert manifest.status_code == 422
    assert manifest.json()["detail"] == "body: JSON nested too deeply"


# --- records: each field bounded, nothing stored silently ----------------------------------


def _correction(message: str = "m", rule: str = "clim-suffix") -> dict[str, str]:
    return {"rule": rule, "message": message}


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("corrections", [_correction("x" * 10_000_000)], f"larger than {MAX_RECORD} bytes"),
        ("corrections", [_correction()] * 65, "at most 64"),
        ("corrections", [_correction("x" * 1025)], "at most 1024 characters"),
        ("corrections", [_correction(rule="no spaces allowed")], "an identifier"),
        ("facets", {f"k{i}": "v" for i in range(65)}, "at most 64"),
        ("time_start", "abcd", "'time_start'"),
        ("time_end", "2000-13", "month 13 is not between 01 and 12"),
        ("time_start", "1850-01-16T25:00", "hour 25"),
        ("start", "1850 and then some", "'start'"),
    ],
)
def test_a_record_beyond_a_field_limit_is_refused_with_its_reason(
    client, token, session, field, value, why
):
    response = client.post("/publish", content=ndjson([{**RECORD, field: value}]),
                           headers=auth(token))  # fmt: skip
    assert response.status_code == 422, response.text[:300]
    assert response.json()["line"] == 1 and why in response.json()["detail"]
    assert consistency.check(session) == 0


def _nested(levels: int) -> dict[str, Any]:
    """Metadata of ``levels`` objects and arrays, one in the other."""
    value: Any = {"leaf": 1}
    for level in range(levels - 1):
        value = {"k": value} if (levels - level) % 2 == 0 else [value]
    return dict(value)


@pytest.mark.parametrize("levels", [MAX_METADATA_DEPTH + 1, 300, 800])
def test_metadata_nested_deeper_than_served_is_refused_at_publish(client, token, session, levels):
    response = client.post("/publish", content=ndjson([{**RECORD, "metadata": _nested(levels)}]),
                           headers=auth(token))  # fmt: skip
    assert response.status_code == 422, response.text[:300]
    assert response.json()["line"] == 1
    assert f"more than {MAX_METADATA_DEPTH} levels" in response.json()["detail"]
    assert consistency.check(session) == 0
    assert client.get("/files" + RECORD["name"]).status_code == 404


def test_metadata_at_the_depth_limit_is_stored_and_served(client, publish):
    publish([{**RECORD, "metadata": _nested(MAX_METADATA_DEPTH)}])
    response = client.get("/files" + RECORD["name"])
    assert response.status_code == 200, response.text[:300]
    assert response.json()["metadata"] == _nested(MAX_METADATA_DEPTH)


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("1850", "1850-01-01T00:00:00"),
        ("2005-02-30", "2005-02-30T00:00:00"),  # a 360-day calendar's date
        ("2005-12-31T12:30:00Z", "2005-12-31T12:30:00"),
        ("2005-12-31 12:30:00.5", "2005-12-31T12:30:00"),
    ],
)
def test_a_valid_time_is_stored_normalised(client, publish, value, stored):
    publish([{**RECORD, "time_start": value}])
    assert client.get("/files" + RECORD["name"]).json()["time_start"] == stored


def test_an_empty_publish_answers_the_catalogs_last_seq(client, publish, token):
    first = publish(list(cmip5_records()[:3]))
    assert first["last_seq"] == 3
    response = client.post("/publish", content=b"", headers=auth(token))
    assert response.status_code == 200
    assert response.json() == {
        "inserted": 0, "replaced": 0, "unchanged": 0, "conflicts": 0, "conflicting": [],
        "last_seq": 3, "collisions": [],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"start": "2000-13"}, "month 13 is not between 01 and 12"),
        ({"end": "1999-02-32"}, "day 32 is not between 01 and 31"),
        ({"start": "1850abc"}, "is not a date such as"),
        ({"end": "2000-01-01T24:60"}, "minute 60 is not between 00 and 59"),
    ],
)
def test_an_invalid_time_bound_is_a_422_saying_why(client, params, why):
    response = client.get("/search", params=params)
    assert response.status_code == 422 and why in response.json()["detail"]


# --- a busy server: 503 + Retry-After, never a hang ---------------------------------------


def test_a_full_lane_is_a_503_with_retry_after_and_health_still_answers(client_with):
    c = client_with(max_reads=1, max_waiting=0)
    lanes = c.app.state.admission
    c.loop.run_until_complete(lanes.reads.enter())  # another request holds the only turn
    busy = c.get("/search")
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert "busy" in busy.json()["detail"]
    health = c.get("/health")
    assert health.status_code == 200
    assert health.json()["load"]["reads"] == {"turns": 1, "running": 1, "waiting": 0,
                                              "refused": 1}  # fmt: skip
    lanes.reads.leave()
    assert c.get("/search").status_code == 200


def test_waiting_for_a_turn_ends_in_a_503_not_a_hang(client_with):
    c = client_with(max_reads=1, max_waiting=10, read_wait_seconds=0.3)
    c.loop.run_until_complete(c.app.state.admission.reads.enter())
    started = time.monotonic()
    response = c.get("/search")
    waited = time.monotonic() - started
    assert response.status_code == 503 and "within 0.3 s" in response.json()["detail"]
    assert 0.3 <= waited < 5


def test_publishing_has_its_own_lane(client_with, token, session):
    c = client_with(max_reads=1, max_waiting=0)
    c.loop.run_until_complete(c.app.state.admission.reads.enter())
    response = c.post("/publish", content=ndjson([RECORD]), headers=auth(token))
    assert response.status_code == 200 and response.json()["inserted"] == 1


def test_a_facet_index_sync_that_takes_too_long_is_a_503(client_with, publish):
    publish(list(cmip5_records()[:5]))
    c = client_with(read_wait_seconds=0.2)
    index = c.app.state.index
    with index._sync_lock:  # another request is syncing the index, for long
        busy = c.get("/search")
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert "facet index" in busy.json()["detail"]
    assert c.get("/search").json()["total"] == 5


def test_health_names_the_instance_and_the_load(client_with):
    body = client_with(instance="a1b2").get("/health").json()
    assert body["status"] == "ok" and body["instance"] == "a1b2"
    assert set(body["load"]) == {"reads", "writes"}
