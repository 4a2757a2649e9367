"""The site's transfer agent: runs the transfer jobs of the catalog database it is given.

``ndnsci transfer agent --db URL --root DIR`` (a part of the site service). Workers, each a
thread, claim one file at a time (:func:`ndnsci_catalog.transfers.claim`), fetch it over NDN
through the job's engine (``auto``: NDN-DPDK where the native plane reaches the name, else
ndnsci's own) into ``ROOT/<destination>/<DRS path>``, verified against the SHA-256 and size
the catalog gave when the job was submitted, and report the end of each attempt. While a file
runs its worker reports the bytes received about once a second, which renews its lease and
tells it when the job was cancelled.

Everything a job needs to continue is in the database and on disk: a fetch resumes from its
``.part`` file and its journal, so an agent killed mid-file, or a machine restarted, continues
each file where its bytes stopped (an agent that starts takes back at once the files it held,
others wait for its leases to run out). A failed attempt is tried again after a back-off
(5 s, 10 s, 20 s ...); after ``MAX_ATTEMPTS`` the file is ``failed`` with its reason.

Logs one line per finished attempt (``logging``: the command line sends them to stderr).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ndnsci.errors import NdnError, NdnsciError
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.manifest import ManifestEntry
from ndnsci.sdk.progress import NoProgress
from ndnsci.sdk.transports import Cancelled
from ndnsci_catalog import transfers
from ndnsci_catalog.database import make_engine, make_sessionmaker

log = logging.getLogger("ndnsci.transfer")

#: seconds between two reports of a running file's bytes
REPORT_EVERY = 1.0
#: seconds an idle worker waits before it asks for work again
IDLE_POLL = 1.0
#: tries to record the end of an attempt while the database is busy or away
FINISH_TRIES = 5
#: tries of a database call SQLite refuses as locked, the waits between them doubling from
#: LOCKED_WAIT seconds
LOCKED_TRIES = 6
LOCKED_WAIT = 0.02

T = TypeVar("T")


def default_name() -> str:
    """An agent's name: the host and the process (what a lease names)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class AgentReport:
    """What an agent did while it ran: finished attempts by their end, bytes, engines."""

    ends: Counter[str] = field(default_factory=Counter)
    engines: Counter[str] = field(default_factory=Counter)
    bytes: int = 0
    released: int = 0

    def summary(self) -> str:
        ends = ", ".join(f"{n} {end}" for end, n in sorted(self.ends.items())) or "nothing"
        return f"transfer agent: {ends}; {self.bytes:,} bytes"


class _End(NamedTuple):
    """How an attempt ended: in place and verified (``ok``), cancelled, or with ``error``."""

    ok: bool
    size: int
    engine: str | None
    error: str | None
    cancelled: bool


class _Reporter(NoProgress):
    """A running file's bytes to the database about once a second; stops the file when the
    database says so (cancelled, or the lease lost)."""

    def __init__(self, agent: Agent, file_id: int, stop: threading.Event) -> None:
        self.agent = agent
        self.file_id = file_id
        self.stop = stop
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def update(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < REPORT_EVERY or not self.lock.acquire(blocking=False):
            return
        try:
            self.last = now
            keep = self.agent.database(
                lambda session: transfers.report(session, self.file_id, self.agent.name, done)
            )
            if not keep:
                self.stop.set()
        except Exception:  # the database away for a moment: the lease holds for a while
            log.warning("could not report the progress of a transfer", exc_info=True)
        finally:
            self.lock.release()


class Agent:
    """Runs the jobs of the catalog database at ``db`` into ``root``.

    ``transport`` overrides every job's engine (tests); ``retry_first`` is the first back-off
    after a failed attempt, in seconds.
    """

    def __init__(
        self,
        db: str | Engine,
        root: str | os.PathLike[str],
        *,
        name: str | None = None,
        parallel: int = 4,
        retry_first: float = transfers.RETRY_FIRST,
        idle_poll: float = IDLE_POLL,
        transport: str | None = None,
    ) -> None:
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.engine = make_engine(db) if isinstance(db, str) else db
        self._owned = isinstance(db, str)
        self.session: sessionmaker[Session] = make_sessionmaker(self.engine)
        self.root = Path(root)
        self.name = name or default_name()
        self.parallel = parallel
        self.retry_first = retry_first
        self.idle_poll = idle_poll
        self.transport = transport
        self.stop = threading.Event()
        self.report = AgentReport()
        self._lock = threading.Lock()
        self._running: set[threading.Event] = set()
        self._busy = 0

    def run(self, *, until_idle: bool = False) -> AgentReport:
        """Work until :meth:`close` is called (or, with ``until_idle``, until no job has a
        file waiting or running); the files held when it stops go back to ``pending``."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.report.released = self.database(lambda session: transfers.release(session, self.name))
        if self.report.released:
            log.info("continuing %d files this agent held when it stopped", self.report.released)
        workers = [
            threading.Thread(target=self._work, args=(until_idle,), name=f"ndnsci-transfer_{i}")
            for i in range(self.parallel)
        ]
        for worker in workers:
            worker.start()
        try:
            for worker in workers:
                while worker.is_alive():
                    worker.join(0.2)
        except KeyboardInterrupt:
            self.close()
            for worker in workers:
                worker.join()
        finally:
            self.database(lambda session: transfers.release(session, self.name))
            if self._owned:
                self.engine.dispose()
        return self.report

    def database(self, call: Callable[[Session], T]) -> T:
        """``call`` on a session of its own, tried again while SQLite says "database is
        locked": a transaction that read, then writes after another connection wrote, is
        refused at once whatever the busy timeout (this agent's workers claim, report and
        finish at once; the catalog writes too). Each try starts afresh (the store's calls
        read what they change again)."""
        for attempt in range(LOCKED_TRIES):
            try:
                with self.session() as session:
                    return call(session)
            except OperationalError as exc:
                if "database is locked" not in str(exc) or attempt == LOCKED_TRIES - 1:
                    raise
            self.stop.wait(LOCKED_WAIT * 2**attempt)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop: running files stop at their next progress tick and wait as ``pending``."""
        self.stop.set()
        with self._lock:
            for running in self._running:
                running.set()

    def _work(self, until_idle: bool) -> None:
        while not self.stop.is_set():
            try:
                claimed = self.database(lambda session: transfers.claim(session, self.name))
            except Exception:
                log.exception("could not ask the catalog database for work")
                claimed = None
            if claimed is None:
                if until_idle and self._idle():
                    return
                self.stop.wait(self.idle_poll)
                continue
            with self._lock:
                self._busy += 1
            try:
                self._run(claimed)
            finally:
                with self._lock:
                    self._busy -= 1

    def _idle(self) -> bool:
        with self._lock:
            if self._busy:
                return False
        return not self.database(transfers.active)

    def _run(self, claimed: transfers.Claimed) -> None:
        stop = threading.Event()
        with self._lock:
            self._running.add(stop)
            if self.stop.is_set():
                stop.set()
        started = time.monotonic()
        try:
            end = self._fetch(claimed, stop)
        finally:
            with self._lock:
                self._running.discard(stop)
        state = self._finish(claimed, end)
        ok, size, engine, error, cancelled = end
        what = "done" if ok else "cancelled" if cancelled else f"failed ({error})"
        self.report.ends[state] += 1
        if ok:
            self.report.bytes += size
            self.report.engines[engine or "unknown"] += 1
        log.info(
            "job %d: %s %s in %.1f s, attempt %d, engine %s; now %s",
            claimed.job_id, claimed.name, what, time.monotonic() - started, claimed.attempt,
            engine or "-", state,
        )  # fmt: skip

    def _finish(self, claimed: transfers.Claimed, end: _End) -> str:
        """The attempt's end in the database, tried again while it is busy; ``unreported``
        when it stays away (the lease runs out and the file is claimed again: a file in place
        is then found complete and verified, not fetched twice)."""
        for attempt in range(FINISH_TRIES):
            try:
                return self.database(
                    lambda session: transfers.finish(
                        session, claimed.id, self.name, ok=end.ok, size=end.size,
                        engine=end.engine, error=end.error, cancelled=end.cancelled,
                        retry_first=self.retry_first,
                    )
                )  # fmt: skip
            except Exception:
                log.warning("could not report the end of %s", claimed.name, exc_info=True)
                time.sleep(min(2.0**attempt, 10.0))
        return "unreported"

    def _fetch(self, claimed: transfers.Claimed, stop: threading.Event) -> _End:
        """How one attempt ended."""
        entry = ManifestEntry(claimed.name, claimed.path, claimed.size, claimed.sha256)
        dest = self.root / claimed.destination
        try:
            outcome = fetch_file(
                entry, dest, layout="drs", resume=True, retries=0,
                progress=_Reporter(self, claimed.id, stop), stop=stop,
                transport=self.transport or claimed.engine, catalog=False,
            )  # fmt: skip
        except Cancelled:
            return _End(False, 0, None, None, True)
        except (NdnError, NdnsciError, OSError, ValueError) as exc:
            if stop.is_set() and not self.stop.is_set():  # the job's cancel, mid-attempt
                return _End(False, 0, None, None, True)
            if self.stop.is_set():
                return _End(False, 0, None, None, True)
            return _End(False, 0, None, f"{type(exc).__name__}: {exc}", False)
        except Exception as exc:  # never the agent's end: the file fails with the reason
            log.exception("transfer of %s", claimed.name)
            return _End(False, 0, None, f"{type(exc).__name__}: {exc}", False)
        engine = outcome.engine or ("already-complete" if outcome.status == "skipped" else None)
        return _End(True, outcome.size, engine, None, False)


def run_agent(
    db: str,
    root: str | os.PathLike[str],
    *,
    until_idle: bool = False,
    on_start: Callable[[Agent], None] | None = None,
    **options: object,
) -> AgentReport:
    """An :class:`Agent` run to its end (``ndnsci transfer agent``)."""
    agent = Agent(db, root, **options)  # type: ignore[arg-type]
    if on_start is not None:
        on_start(agent)
    return agent.run(until_idle=until_idle)
