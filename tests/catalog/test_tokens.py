"""Publish tokens: `ndnsci catalog token create|list|revoke`, optional expiry (issue 14 C)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator

import pytest

from ndnsci.cli import main
from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.main import create_app
from ndnsci_catalog.tokens import create_token, expiry

from .conftest import Client, ndjson
from .corpus import cmip5_records


@pytest.fixture
def catalog_client(fresh_db_url: str) -> Iterator[Client]:
    engine = make_engine(fresh_db_url)
    client = Client(create_app(Settings(db=fresh_db_url), engine=engine))
    yield client
    client.close()
    engine.dispose()


def _publish(client: Client, token: str, i: int = 0) -> tuple[int, str]:
    response = client.post(
        "/publish",
        content=ndjson([cmip5_records()[i]]),
        headers={"Authorization": f"Bearer {token}"},
    )
    return response.status_code, response.json().get("detail", "")


def test_create_list_revoke(fresh_db_url, capsys, catalog_client):
    assert main(["catalog", "token", "create", "site-a", "--db", fresh_db_url]) == 0
    forever = capsys.readouterr().out.strip()
    assert main(["catalog", "token", "create", "site-b", "--expires", "90d", "--db",
                 fresh_db_url]) == 0  # fmt: skip
    captured = capsys.readouterr()
    for_a_while = captured.out.strip()
    assert "valid until" in captured.err

    assert main(["catalog", "token", "list", "--db", fresh_db_url]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert (rows[0][0], rows[0][2], rows[0][3]) == ("site-a", "never", "valid")
    assert rows[1][0] == "site-b" and rows[1][3] == "valid"
    expires = dt.datetime.fromisoformat(rows[1][2].replace("Z", "+00:00"))
    assert dt.timedelta(days=89) < expires - dt.datetime.now(dt.UTC) <= dt.timedelta(days=90)
    assert main(["catalog", "token", "list", "--json", "--db", fresh_db_url]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [t["name"] for t in listed] == ["site-a", "site-b"]
    assert all(t["expired"] is False and "hash" not in json.dumps(t) for t in listed)

    assert _publish(catalog_client, forever, 0)[0] == 200
    assert _publish(catalog_client, for_a_while, 1)[0] == 200
    assert main(["catalog", "token", "revoke", "site-a", "--db", fresh_db_url]) == 0
    assert _publish(catalog_client, forever, 2) == (401, "invalid token")
    assert _publish(catalog_client, for_a_while, 2)[0] == 200
    assert main(["catalog", "token", "revoke", "site-a", "--db", fresh_db_url]) == 1
    assert "no token named 'site-a'" in capsys.readouterr().err


def test_an_expired_token_is_refused_saying_so(fresh_db_url, capsys, catalog_client):
    engine = make_engine(fresh_db_url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, "old-site", expires_at="2020-01-01T00:00:00.000000Z")
        session.commit()
    engine.dispose()
    status, detail = _publish(catalog_client, token)
    assert status == 401 and "'old-site' expired at 2020-01-01" in detail
    assert main(["catalog", "token", "list", "--db", fresh_db_url]) == 0
    assert capsys.readouterr().out.split("\t")[3].strip() == "expired"


NOT_AN_EXPIRY = "is neither a duration such as 90d, 12h or 2w nor a date such as 2027-01-31"


@pytest.mark.parametrize(
    ("when", "why"),
    [
        ("soon", NOT_AN_EXPIRY),
        ("90x", NOT_AN_EXPIRY),
        ("2020-01-01", "is in the past"),
        ("0d", "is in the past"),  # now is not later than now
        ("2027-02-30", NOT_AN_EXPIRY),  # no such day
    ],
)
def test_an_unusable_expiry_is_a_usage_error(fresh_db_url, capsys, when, why):
    assert main(["catalog", "token", "create", "x", "--expires", when, "--db", fresh_db_url]) == 2
    assert capsys.readouterr().err == f"ndnsci catalog: expiry {when!r} {why}\n"
    assert main(["catalog", "token", "list", "--db", fresh_db_url]) == 0
    assert capsys.readouterr().out == ""


def test_expiry_accepts_durations_and_dates():
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert expiry("12h", start) == "2026-01-01T12:00:00.000000Z"
    assert expiry("2w", start) == "2026-01-15T00:00:00.000000Z"
    assert expiry("2027-01-31", start) == "2027-01-31T00:00:00.000000Z"
