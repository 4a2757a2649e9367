"""Transfer jobs in the catalog, on both backends: the API (submit, list, status, files,
cancel, retry, events) and the agent's side of the store (claims, leases, back-off, release)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy.orm import Session

from ndnsci_catalog import transfers

from .conftest import Borrowed, Client


def record(i: int, size: int | None = 1000) -> dict[str, Any]:
    name = f"/CMIP5/output1/I/M/historical/mon/atmos/Amon/r1i1p1/v1/tas/tas_{i}.nc"
    extra = {} if size is None else {"size": size, "sha256": f"{i:064x}"}
    return {"name": name, "scheme": "cmip5", "facets": {"model": "M", "run": str(i)}, **extra}


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def submit(client: Client, token: str, **body: Any) -> Any:
    return client.post("/transfers", json={"destination": "ucla/tas", **body}, headers=auth(token))


def test_a_job_of_names_holds_each_file_with_the_catalogs_size_and_sha256(
    client: Client, publish: Any, token: str
) -> None:
    records = [record(i) for i in range(3)]
    publish(records)
    names = [r["name"] for r in records]
    answer = submit(client, token, names=[*names, names[0]])  # a repeated name once
    assert answer.status_code == 201, answer.text
    job = answer.json()
    assert (job["state"], job["files"], job["bytes"], job["bytes_done"]) == ("queued", 3, 3000, 0)
    assert job["owner"] == "tests" and job["destination"] == "ucla/tas"
    assert job["engine"] == "auto" and job["counts"]["pending"] == 3
    assert job["selection"] == {"names": [*names, names[0]]}
    files = client.get(f"/transfers/{job['id']}/files").json()["files"]
    assert [f["name"] for f in files] == names
    assert files[1]["path"] == names[1].lstrip("/")
    assert files[1]["sha256"] == f"{1:064x}" and files[1]["state"] == "pending"
    listed = client.get("/transfers").json()["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]
    assert client.get(f"/transfers/{job['id']}").json()["files"] == 3


def test_a_job_of_a_search_takes_every_matching_file(
    client: Client, publish: Any, token: str
) -> None:
    publish([record(i) for i in range(5)])
    job = submit(client, token, search="run=1&run=3&model=M").json()
    assert job["files"] == 2 and job["selection"] == {"search": "run=1&run=3&model=M"}


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"names": ["/CMIP5/nothing/here.nc"]}, 422, "1 of the 1 names cannot be transferred"),
        ({"names": ["not a name"]}, 422, "invalid NDN name"),
        ({"names": []}, 422, "no files"),
        ({"search": "run=99"}, 422, "no files"),
        ({"search": "colour=red"}, 400, "unknown facet"),
        ({"names": [], "search": "run=1"}, 422, "exactly one"),
        ({"names": ["x"], "destination": "/etc"}, 422, "relative to the site's transfer root"),
        ({"names": ["x"], "destination": "a/../../b"}, 422, "'..' are not allowed"),
        ({"names": ["x"], "destination": "  "}, 422, "give a folder"),
        ({"names": ["x"], "destination": "a\x00b"}, 422, "NUL"),
        ({"names": ["x"], "engine": "warp"}, 422, "engine 'warp'"),
    ],
)
def test_a_job_that_cannot_run_is_refused_whole_with_its_reason(
    client: Client, publish: Any, token: str, body: dict[str, Any], status: int, said: str
) -> None:
    publish([record(1)])
    answer = submit(client, token, **body)
    assert answer.status_code == status, answer.text
    assert said in answer.json()["detail"]
    assert client.get("/transfers").json()["jobs"] == []


def test_unknown_names_are_listed_and_nothing_is_submitted(
    client: Client, publish: Any, token: str
) -> None:
    publish([record(1)])
    answer = submit(client, token, names=[record(1)["name"], "/CMIP5/a.nc", "/CMIP5/b.nc"])
    assert answer.status_code == 422
    assert answer.json()["names"] == ["/CMIP5/a.nc", "/CMIP5/b.nc"]
    assert "2 of the 3 names" in answer.json()["detail"]


def test_submitting_cancelling_and_retrying_need_a_token(client: Client, publish: Any) -> None:
    publish([record(1)])
    assert client.post("/transfers", json={"names": [], "destination": "x"}).status_code == 401
    assert client.delete("/transfers/1").status_code == 401
    assert client.post("/transfers/1/retry").status_code == 401
    assert client.get("/transfers/1").status_code == 404
    assert client.get("/transfers/0").status_code == 422
    assert client.get("/transfers/1/files").status_code == 404


def test_a_bad_file_state_filter_is_a_422(client: Client, publish: Any, token: str) -> None:
    publish([record(1)])
    job = submit(client, token, names=[record(1)["name"]]).json()
    answer = client.get(f"/transfers/{job['id']}/files", params={"state": "lost"})
    assert answer.status_code == 422 and "pending, running" in answer.json()["detail"]


def _job(session: Session, n: int, sizes: int | None = 100) -> int:
    files = [transfers.Wanted(f"/a/f{i}", f"a/f{i}", sizes, None) for i in range(n)]
    job_id = transfers.submit(
        session, owner="t", destination="d", engine="python", selection={}, files=files, now=0.0
    )
    session.commit()
    return job_id


def test_claims_go_in_order_and_a_file_is_claimed_once(session: Session) -> None:
    job_id = _job(session, 3)
    first = transfers.claim(session, "a", now=10.0)
    second = transfers.claim(session, "b", now=10.0)
    assert first is not None and second is not None
    assert (first.name, second.name, first.attempt) == ("/a/f0", "/a/f1", 1)
    assert (first.destination, first.path, first.engine) == ("d", "a/f0", "python")
    status = transfers.status(session, job_id, now=12.0)
    assert status.state == "running" and status.counts["running"] == 2
    assert status.started == 10.0


def test_a_lease_that_runs_out_is_claimed_again_and_the_old_agent_loses_it(
    session: Session,
) -> None:
    _job(session, 1)
    held = transfers.claim(session, "a", now=0.0, lease=30.0)
    assert held is not None
    assert transfers.claim(session, "b", now=29.0) is None  # still held
    again = transfers.claim(session, "b", now=31.0)
    assert again is not None and again.id == held.id and again.attempt == 2
    assert transfers.report(session, held.id, "a", 50, now=32.0) is False
    assert transfers.finish(session, held.id, "a", ok=True, size=100, now=33.0) == "lost"
    assert transfers.finish(session, held.id, "b", ok=True, size=100, engine="python") == "done"


def test_failed_attempts_back_off_then_fail_with_the_reason(session: Session) -> None:
    job_id = _job(session, 1)
    delays = []
    now = 0.0
    for attempt in range(1, transfers.MAX_ATTEMPTS + 1):
        claimed = transfers.claim(session, "a", now=now)
        assert claimed is not None and claimed.attempt == attempt
        state = transfers.finish(session, claimed.id, "a", ok=False, error="timeout", now=now)
        if attempt < transfers.MAX_ATTEMPTS:
            assert state == "pending"
            row = transfers.files(session, job_id)[0]
            delays.append(row["retry_at"] - now)
            assert transfers.claim(session, "a", now=now + delays[-1] - 0.1) is None
            now = row["retry_at"]
        else:
            assert state == "failed"
    assert delays == [5.0, 10.0, 20.0]
    status = transfers.status(session, job_id, now=now)
    assert status.state == "failed" and status.counts["failed"] == 1
    assert transfers.files(session, job_id, state="failed")[0]["error"] == "timeout"
    assert transfers.retry(session, job_id) == 1
    session.commit()
    assert transfers.status(session, job_id).state == "queued"
    assert transfers.claim(session, "a", now=now).attempt == 1  # type: ignore[union-attr]


def test_a_cancel_stops_waiting_files_and_running_ones_at_their_next_report(
    session: Session,
) -> None:
    job_id = _job(session, 3)
    running = transfers.claim(session, "a", now=1.0)
    assert running is not None
    transfers.finish(session, running.id, "a", ok=True, size=100, engine="python", now=2.0)
    running = transfers.claim(session, "a", now=3.0)
    assert running is not None
    transfers.cancel(session, job_id, now=4.0)
    session.commit()
    assert transfers.report(session, running.id, "a", 10, now=5.0) is False
    assert transfers.finish(session, running.id, "a", ok=False, cancelled=True) == "cancelled"
    assert transfers.claim(session, "a", now=6.0) is None
    status = transfers.status(session, job_id)
    assert status.state == "cancelled"
    assert (status.counts["done"], status.counts["cancelled"]) == (1, 2)
    assert status.engines == {"python": 1}
    assert transfers.retry(session, job_id) == 2
    session.commit()
    again = transfers.claim(session, "a", now=7.0)
    assert again is not None and again.attempt == 1


def test_an_attempt_that_fails_after_the_jobs_cancel_is_cancelled_not_backed_off(
    session: Session,
) -> None:
    """A fetch that fails (the producer said not found) after the job was cancelled: the file
    is cancelled with its reason, as the job is, and a retry takes it again; it was left
    pending with a back-off in a cancelled job."""
    job_id = _job(session, 1)
    running = transfers.claim(session, "a", now=1.0)
    assert running is not None
    transfers.cancel(session, job_id, now=2.0)
    session.commit()
    assert transfers.finish(session, running.id, "a", ok=False, error="not found", now=3.0) == (
        "cancelled"
    )
    status = transfers.status(session, job_id)
    assert status.state == "cancelled" and status.counts["cancelled"] == 1
    assert status.counts["pending"] == 0 and status.finished == 3.0
    assert transfers.files(session, job_id)[0]["error"] == "not found"
    assert transfers.retry(session, job_id) == 1
    session.commit()
    again = transfers.claim(session, "a", now=4.0)
    assert again is not None and again.attempt == 1


def test_an_agent_that_starts_takes_back_its_files_without_counting_the_attempt(
    session: Session,
) -> None:
    _job(session, 2)
    a = transfers.claim(session, "agent", now=0.0)
    assert a is not None
    assert transfers.release(session, "agent") == 1
    again = transfers.claim(session, "agent", now=1.0)
    assert again is not None and (again.id, again.attempt) == (a.id, 1)
    # an agent stopping mid-file (cancelled=True on a job not cancelled): pending, not counted
    assert transfers.finish(session, again.id, "agent", ok=False, cancelled=True) == "pending"
    assert transfers.claim(session, "agent", now=2.0).attempt == 1  # type: ignore[union-attr]
    assert transfers.active(session)


def test_rate_and_eta_follow_the_bytes(session: Session) -> None:
    job_id = _job(session, 2, sizes=1000)
    claimed = transfers.claim(session, "a", now=100.0)
    assert claimed is not None
    transfers.report(session, claimed.id, "a", 500, now=110.0)
    status = transfers.status(session, job_id, now=110.0)
    assert status.bytes == 2000 and status.bytes_done == 500
    assert status.rate == pytest.approx(50.0) and status.eta == pytest.approx(30.0)
    sizeless = _job(session, 1, sizes=None)
    assert transfers.status(session, sizeless).unknown_sizes == 1


def test_the_event_stream_ends_when_the_job_does(
    client: Client, publish: Any, token: str, session: Session
) -> None:
    publish([record(1)])
    job = submit(client, token, names=[record(1)["name"]]).json()
    claimed = transfers.claim(session, "a")
    assert claimed is not None
    transfers.finish(session, claimed.id, "a", ok=True, size=1000, engine="ndn-dpdk")
    client.app.state.sessionmaker = lambda: Borrowed(session)
    answer = client.get(f"/transfers/{job['id']}/events")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = [e for e in answer.text.split("\n\n") if e.startswith("event: job")]
    data = json.loads(events[-1].split("data: ", 1)[1])
    assert data["state"] == "done" and data["engines"] == {"ndn-dpdk": 1}
    assert client.get("/transfers/99/events").status_code == 404


def test_a_database_locked_beyond_its_timeout_is_a_503_to_retry(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy.exc import OperationalError

    def locked(*_args: Any, **_kwargs: Any) -> Any:
        raise OperationalError("UPDATE transfer_files ...", {}, Exception("database is locked"))

    monkeypatch.setattr(transfers, "jobs", locked)
    answer = client.get("/transfers")
    assert answer.status_code == 503 and answer.headers["Retry-After"] == "1"
    assert "database is locked" in answer.json()["detail"]


def test_a_finished_file_is_a_replica_of_this_site_in_the_files_record(
    client: Client, publish: Any, token: str, session: Session
) -> None:
    from ndnsci_catalog import sites

    sites.init_local(session, "ucla", "/ucla", "1" * 64)
    session.commit()
    publish([record(1), record(2)])
    job = submit(client, token, names=[record(1)["name"], record(2)["name"]]).json()
    claimed = transfers.claim(session, "a", now=5.0)
    assert claimed is not None
    transfers.finish(session, claimed.id, "a", ok=True, size=1000, engine="python", now=6.0)
    failing = transfers.claim(session, "a", now=7.0)
    assert failing is not None
    transfers.finish(session, failing.id, "a", ok=False, error="timeout", now=8.0)
    got = client.get(f"/files{record(1)['name']}").json()
    assert got["replicas"] == [
        {
            "site": "ucla",
            "path": "ucla/tas/" + record(1)["name"].lstrip("/"),
            "size": 1000,
            "sha256": f"{1:064x}",
            "created": 6.0,
        }
    ]
    assert client.get(f"/files{record(2)['name']}").json()["replicas"] == []  # not finished
    assert job["id"] == claimed.job_id
