"""Catalog fixtures: every test runs on SQLite and on a real PostgreSQL.

Migrations run once per backend per session; each test runs in a transaction that is rolled
back (publishing code commits to a SAVEPOINT), and the app is driven in-process through
``httpx.ASGITransport``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import get_db, make_engine
from ndnsci_catalog.facetindex import FacetIndex
from ndnsci_catalog.main import create_app
from ndnsci_catalog.migrate import upgrade
from ndnsci_catalog.tokens import create_token

from .pgserver import PostgresNotInstalled, PostgresServer

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer()
    except PostgresNotInstalled as exc:
        pytest.fail(str(exc), pytrace=False)
    server.start()
    yield server
    server.stop()


_databases = itertools.count()


@pytest.fixture
def fresh_db_url(request: pytest.FixtureRequest, backend: str, tmp_path: Any) -> str:
    """An empty, migrated database of the current backend that a test may commit to."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'catalog.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres")
        url = server.create_database(f"fresh{next(_databases)}")
    upgrade(url)
    return url


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def engine(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('sqlite') / 'catalog.db'}"
    else:
        url = request.getfixturevalue("postgres").url("ndnsci")
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    connection = engine.connect()
    transaction = connection.begin()
    session = Session(bind=connection, join_transaction_mode="create_savepoint")
    yield session
    session.close()
    transaction.rollback()
    connection.close()


class Client:
    """A synchronous face on ``httpx.AsyncClient(transport=ASGITransport(app))``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://catalog/api/v1"
        )

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.loop.run_until_complete(self.http.request(method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)

    def close(self) -> None:
        self.loop.run_until_complete(self.http.aclose())
        self.loop.close()


class Borrowed:
    """The test's session as a context manager that does not close it (for code that opens
    sessions of its own from ``app.state.sessionmaker``)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __enter__(self) -> Session:
        return self.session

    def __exit__(self, *exc: object) -> None:
        pass


def make_app(engine: Engine, session: Session, **settings: Any) -> Any:
    """The app on the test's session (``settings`` override the defaults)."""
    settings = {"max_publish_records": 1000, **settings}
    app = create_app(Settings(db=str(engine.url), **settings), engine=engine)
    app.dependency_overrides[get_db] = lambda: session
    # the test's data is uncommitted: the facet index must read it through the same connection
    app.state.index = FacetIndex(lambda: contextlib.nullcontext(session.connection()))
    return app


@pytest.fixture
def app(engine: Engine, session: Session) -> Any:
    return make_app(engine, session)


@pytest.fixture
def client(app: Any) -> Iterator[Client]:
    c = Client(app)
    yield c
    c.close()


@pytest.fixture
def client_with(engine: Engine, session: Session) -> Iterator[Any]:
    """``client_with(**settings)``: a :class:`Client` of an app with those settings."""
    made: list[Client] = []

    def make(**settings: Any) -> Client:
        made.append(Client(make_app(engine, session, **settings)))
        return made[-1]

    yield make
    for c in made:
        c.close()


@pytest.fixture
def token(session: Session) -> str:
    value = create_token(session, "tests")
    session.commit()
    return value


def ndjson(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


@pytest.fixture
def publish(client: Client, token: str) -> Any:
    """``publish(records)`` -> the JSON answer of POST /publish (asserting success)."""

    def _publish(records: list[dict[str, Any]], replace: bool = False) -> dict[str, Any]:
        response = client.post(
            "/publish",
            content=ndjson(records),
            headers={"Authorization": f"Bearer {token}"},
            params={"replace": "true"} if replace else {},
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    return _publish
