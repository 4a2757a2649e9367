"""Engine, sessions and the session dependency.

SQLite gets WAL (readers never wait for the publisher), a busy timeout (concurrent publishers
queue instead of failing) and foreign keys. The pysqlite driver's own transaction handling is
switched off so that SAVEPOINTs work (tests roll every test back) and so that a transaction
begins exactly where SQLAlchemy says it does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

#: SQLite page size of new catalogs (existing ones keep theirs)
PAGE_SIZE = 16384


def make_engine(url: str, *, echo: bool = False) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created when missing."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, parsed.database, echo)
    if parsed.drivername == "postgresql":
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return create_engine(url, echo=echo, pool_pre_ping=True)


def _sqlite_engine(url: str, database: str | None, echo: bool) -> Engine:
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    # FastAPI runs sync endpoints in a thread pool: a pooled connection moves between threads
    engine = create_engine(url, echo=echo, connect_args={"check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        # a new database only (the size is fixed by the first write, WAL mode included): a
        # million-file bulk publish dirties fewer pages (bench/catalog.py: ~15% faster)
        cursor.execute(f"PRAGMA page_size={PAGE_SIZE}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; safe with WAL
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN")

    return engine


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=False)


def get_db(request: Request) -> Iterator[Session]:
    """One session per request, from the sessionmaker the app factory stored on ``app.state``."""
    factory: sessionmaker[Session] = request.app.state.sessionmaker
    with factory() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_db)]
