"""Engine, sessions and the session dependency.

SQLite gets WAL (readers never wait for the publisher), a busy timeout (concurrent publishers
queue instead of failing) and foreign keys. The pysqlite driver's own transaction handling is
switched off so that SAVEPOINTs work (tests roll every test back) and so that a transaction
begins exactly where SQLAlchemy says it does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

#: SQLite page size of new catalogs (existing ones keep theirs)
PAGE_SIZE = 16384


#: the longest a request waits for a pooled connection (the server sizes its pool so that it
#: never has to: see ndnsci_catalog.admission); a wait that long is answered with a 503
POOL_TIMEOUT = 10.0


def make_engine(
    url: str,
    *,
    echo: bool = False,
    pool_size: int | None = None,
    pool_timeout: float = POOL_TIMEOUT,
) -> Engine:
    """An engine for ``url``; a SQLite file's directory is created when missing.

    ``pool_size``: exactly that many pooled connections (no overflow), else the driver's
    default; a request waits ``pool_timeout`` seconds at most for one.
    """
    parsed = make_url(url)
    pool: dict[str, Any] = {}
    if pool_size is not None and parsed.database not in (None, "", ":memory:"):
        pool = {"pool_size": pool_size, "max_overflow": 0, "pool_timeout": pool_timeout}
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, parsed.database, echo, pool)
    if parsed.drivername == "postgresql":
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return create_engine(url, echo=echo, pool_pre_ping=True, **pool)


def _sqlite_engine(url: str, database: str | None, echo: bool, pool: dict[str, Any]) -> Engine:
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    # FastAPI runs sync endpoints in a thread pool: a pooled connection moves between threads
    engine = create_engine(url, echo=echo, connect_args={"check_same_thread": False}, **pool)

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


def engine_url(engine: Engine) -> str:
    """The URL to open another engine on the same database (password included)."""
    return engine.url.render_as_string(hide_password=False)


class Probe:
    """Is the database answering? A thread of its own asks it every ``every`` seconds on a
    connection of its own, so ``GET /health`` answers from the last ask at once: never behind
    the requests' pool or worker threads, whatever the load."""

    def __init__(self, url: str, every: float = 1.0) -> None:
        self.engine = make_engine(url, pool_size=1)
        self.every = every
        self._answered_at: float | None = None  # monotonic time of the last good answer
        self._problem = "the database has not been asked yet"
        self._asked = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def asked(self) -> bool:
        """Has the database been asked once (answered or not)?"""
        return self._asked.is_set()

    def problem(self, stale_after: float) -> str | None:
        """None when the database answered within the last ``stale_after`` seconds, else why
        not (see :meth:`start`)."""
        answered = self._answered_at
        if answered is not None and time.monotonic() - answered <= stale_after:
            return None
        if answered is None:
            return self._problem
        return f"the database has not answered for {time.monotonic() - answered:.1f} s"

    def start(self) -> None:
        """Start asking (again after :meth:`close`: no)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ndnsci-health", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with self.engine.connect() as connection:
                    connection.exec_driver_sql("SELECT 1")
                self._answered_at = time.monotonic()
            except Exception as exc:  # an unreachable or broken database: say so, keep asking
                self._problem = f"the database failed: {type(exc).__name__}: {exc}"
            self._asked.set()
            self._stop.wait(self.every)

    def close(self) -> None:
        self._stop.set()
        self.engine.dispose()


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=False)


def get_db(request: Request) -> Iterator[Session]:
    """One session per request, from the sessionmaker the app factory stored on ``app.state``."""
    factory: sessionmaker[Session] = request.app.state.sessionmaker
    with factory() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_db)]
