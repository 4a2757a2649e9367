"""Transfer jobs: a selection of files copied into a folder at a site, run by its agent.

A job is what Globus gives an ESGF user and a Rucio rule a CMS one: a request that runs without
them. Its state lives in the catalog database (``transfer_jobs``, ``transfer_files``), so a
restarted agent, or machine, continues every job where it stopped. The catalog answers the
API (:mod:`ndnsci_catalog.api.routes.transfers`); the site's transfer agent
(:mod:`ndnsci.site.transfers`) claims files, fetches them over NDN and reports here.

A file goes ``pending`` -> ``running`` (claimed by one agent, whose lease on it is renewed as
bytes arrive) -> ``done`` or, after a failed attempt, ``pending`` again with ``retry_at``
later (back-off) until :data:`MAX_ATTEMPTS`, then ``failed`` with its reason. A claim whose
lease ran out (the agent was killed) is taken again by the next claim; an agent that starts
takes back at once what it held when it stopped (:func:`release`). A cancel stops the job's
pending files at once and its running ones at their next report (:func:`report` says so);
a retry puts failed and cancelled files back to ``pending``.

A job's state follows from its files: ``cancelled`` once cancelled (until retried), else
``running`` while a file runs, ``queued`` while files wait and none runs, else ``failed`` when
a file failed, else ``done``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sqlalchemy import case, func, insert, select, text, update
from sqlalchemy.orm import Session

from ndnsci_catalog.errors import InvalidInputError, NotFoundError
from ndnsci_catalog.models import Replica, Site, TransferFile, TransferJob

ENGINES = ("auto", "python", "ndn-dpdk")
FILE_STATES = ("pending", "running", "done", "failed", "cancelled")
#: attempts of one file before it is ``failed`` (a retry of the job starts its count again)
MAX_ATTEMPTS = 4
#: seconds before a failed attempt is tried again: doubled each time, at most RETRY_MAX
RETRY_FIRST = 5.0
RETRY_MAX = 300.0
#: seconds an agent's claim holds without a report (it reports about once a second)
LEASE_SECONDS = 30.0
#: the longest destination folder and error text kept
MAX_DESTINATION = 1024
MAX_ERROR = 2000


class Wanted(NamedTuple):
    """A file of a new job: its name, its DRS path and what the catalog says of it."""

    name: str
    path: str
    size: int | None
    sha256: str | None


class Claimed(NamedTuple):
    """A file an agent now runs: where it goes and what it must be."""

    id: int
    job_id: int
    name: str
    #: the job's destination folder and the file's path below it
    destination: str
    path: str
    size: int | None
    sha256: str | None
    engine: str
    #: this attempt's number (1 for the first)
    attempt: int


@dataclass
class JobStatus:
    """A job as the API shows it: counts per state, bytes, rate and engines used."""

    id: int
    owner: str
    destination: str
    engine: str
    selection: dict[str, Any]
    state: str
    created: float
    updated: float
    files: int
    bytes: int
    bytes_done: int
    counts: dict[str, int]
    engines: dict[str, int]
    started: float | None
    finished: float | None
    #: bytes per second since the first file started (None before)
    rate: float | None
    #: seconds left at that rate (None: unknown or finished)
    eta: float | None
    unknown_sizes: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _begin_write(session: Session) -> None:
    """End whatever the session was reading, then start a transaction that holds SQLite's
    write lock from its first statement (waiting for it as long as the busy timeout says).

    A SQLite transaction that read first cannot become a writer once another connection has
    committed (``database is locked`` at once, whatever the timeout): the agent's workers and
    the catalog's requests write these tables side by side. PostgreSQL needs none of this;
    its conditional updates settle the races (see :func:`claim`).
    """
    session.commit()
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("UPDATE transfer_jobs SET id = id WHERE 0"))


def check_destination(destination: str) -> str:
    """The destination folder as stored: relative, ``/``-separated, no ``..``; else a 422."""
    text = destination.strip()
    if not text:
        raise InvalidInputError("destination: give a folder below the site's transfer root")
    if "\x00" in text or len(text) > MAX_DESTINATION:
        raise InvalidInputError(f"destination: at most {MAX_DESTINATION} characters, no NUL")
    if text.startswith("/") or "\\" in text:
        raise InvalidInputError(
            f"destination {destination!r}: write a folder relative to the site's transfer root "
            "(e.g. 'cmip6/tas'), not an absolute path"
        )
    parts = [p for p in text.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise InvalidInputError(f"destination {destination!r}: '.' and '..' are not allowed")
    return "/".join(parts)


def check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise InvalidInputError(f"engine {engine!r}: one of {', '.join(ENGINES)}")
    return engine


def submit(
    session: Session,
    *,
    owner: str,
    destination: str,
    engine: str,
    selection: dict[str, Any],
    files: Iterable[Wanted],
    now: float | None = None,
) -> int:
    """A new job of ``files`` (each name once: a repeated name is kept once); its id.

    The caller commits. Raises InvalidInputError for a bad destination or engine, or no file.
    """
    destination, engine = check_destination(destination), check_engine(engine)
    at = time.time() if now is None else now
    seen: set[str] = set()
    rows = []
    for wanted in files:
        if wanted.name in seen:
            continue
        seen.add(wanted.name)
        rows.append(
            {
                "name": wanted.name,
                "path": wanted.path,
                "size": wanted.size,
                "sha256": wanted.sha256,
                "state": "pending",
                "bytes_done": 0,
                "attempts": 0,
            }
        )
    if not rows:
        raise InvalidInputError("the selection has no files: nothing to transfer")
    _begin_write(session)
    job = TransferJob(
        owner=owner, destination=destination, engine=engine, selection=selection,
        cancelled=False, created=at, updated=at,
    )  # fmt: skip
    session.add(job)
    session.flush()
    for row in rows:
        row["job_id"] = job.id
    for start in range(0, len(rows), 1000):
        session.execute(insert(TransferFile), rows[start : start + 1000])
    return job.id


def _job(session: Session, job_id: int) -> TransferJob:
    job = session.get(TransferJob, job_id)
    if job is None:
        raise NotFoundError(f"no transfer job {job_id}")
    return job


def status(session: Session, job_id: int, now: float | None = None) -> JobStatus:
    """The job's status; NotFoundError when there is none."""
    job = _job(session, job_id)
    return _statuses(session, [job], now)[0]


def jobs(
    session: Session, *, owner: str | None = None, limit: int = 100, offset: int = 0
) -> list[JobStatus]:
    """The newest jobs first (of ``owner`` when given)."""
    query = select(TransferJob).order_by(TransferJob.id.desc()).limit(limit).offset(offset)
    if owner is not None:
        query = query.where(TransferJob.owner == owner)
    found = list(session.scalars(query))
    return _statuses(session, found) if found else []


def _statuses(
    session: Session, found: Sequence[TransferJob], now: float | None = None
) -> list[JobStatus]:
    at = time.time() if now is None else now
    ids = [job.id for job in found]
    f = TransferFile
    per_state: dict[int, dict[str, Any]] = {i: {} for i in ids}
    unknown = func.sum(case((f.size.is_(None), 1), else_=0))
    rows = session.execute(
        select(
            f.job_id, f.state, func.count(), func.coalesce(func.sum(f.size), 0),
            func.coalesce(func.sum(f.bytes_done), 0), unknown, func.min(f.started),
            func.max(f.finished),
        )
        .where(f.job_id.in_(ids))
        .group_by(f.job_id, f.state)
    ).all()  # fmt: skip
    for job_id, state, count, size, done, sizeless, started, finished in rows:
        counted = (int(count), int(size), int(done), int(sizeless or 0))
        per_state[job_id][state] = (*counted, started, finished)
    engines: dict[int, dict[str, int]] = {i: {} for i in ids}
    for job_id, engine, count in session.execute(
        select(f.job_id, f.engine, func.count())
        .where(f.job_id.in_(ids), f.state == "done")
        .group_by(f.job_id, f.engine)
    ).all():
        engines[job_id][engine or "unknown"] = int(count)
    return [_status(job, per_state[job.id], engines[job.id], at) for job in found]


def _status(
    job: TransferJob, states: dict[str, Any], engines: dict[str, int], now: float
) -> JobStatus:
    counts = {state: states.get(state, (0,))[0] for state in FILE_STATES}
    total = sum(counts.values())
    size = sum(v[1] for v in states.values())
    done = sum(v[2] for v in states.values())
    unknown = sum(v[3] for v in states.values())
    starts = [v[4] for v in states.values() if v[4] is not None]
    ends = [v[5] for v in states.values() if v[5] is not None]
    started = min(starts) if starts else None
    if job.cancelled:
        state = "cancelled"
    elif counts["running"]:
        state = "running"
    elif counts["pending"]:
        state = "queued"
    elif counts["failed"]:
        state = "failed"
    else:
        state = "done"
    active = state in ("running", "queued")
    finished = None if active or not ends else max(ends)
    rate = eta = None
    if started is not None:
        elapsed = max((now if active else (finished or now)) - started, 1e-3)
        rate = done / elapsed
        if active and rate > 0 and not unknown:
            eta = max(size - done, 0) / rate
    return JobStatus(
        id=job.id, owner=job.owner, destination=job.destination, engine=job.engine,
        selection=job.selection, state=state, created=job.created, updated=job.updated,
        files=total, bytes=size, bytes_done=done, counts=counts, engines=engines,
        started=started, finished=finished, rate=rate, eta=eta, unknown_sizes=unknown,
    )  # fmt: skip


def files(
    session: Session,
    job_id: int,
    *,
    state: str | None = None,
    limit: int = 1000,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """The job's files in order (of one ``state`` when given)."""
    _job(session, job_id)
    if state is not None and state not in FILE_STATES:
        raise InvalidInputError(f"state {state!r}: one of {', '.join(FILE_STATES)}")
    f = TransferFile
    query = select(
        f.name, f.path, f.size, f.sha256, f.state, f.bytes_done, f.attempts, f.engine, f.error,
        f.retry_at, f.started, f.finished,
    ).where(f.job_id == job_id)  # fmt: skip
    if state is not None:
        query = query.where(f.state == state)
    rows = session.execute(query.order_by(f.id).limit(limit).offset(offset)).mappings()
    return [dict(row) for row in rows]


def cancel(session: Session, job_id: int, now: float | None = None) -> None:
    """Stop the job: its waiting files at once, its running ones at their next report. The
    caller commits. Files already done stay done (and on disk)."""
    at = time.time() if now is None else now
    _begin_write(session)
    job = _job(session, job_id)
    job.cancelled, job.updated = True, at
    session.execute(
        update(TransferFile)
        .where(TransferFile.job_id == job_id, TransferFile.state == "pending")
        .values(state="cancelled", finished=at, retry_at=None)
    )


def retry(session: Session, job_id: int, now: float | None = None) -> int:
    """Failed and cancelled files back to ``pending`` with their attempts counted afresh; the
    number of files put back. The caller commits."""
    at = time.time() if now is None else now
    _begin_write(session)
    job = _job(session, job_id)
    job.cancelled, job.updated = False, at
    result = session.execute(
        update(TransferFile)
        .where(TransferFile.job_id == job_id, TransferFile.state.in_(("failed", "cancelled")))
        .values(state="pending", attempts=0, retry_at=None, finished=None)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


# --- the agent's side ---------------------------------------------------------------------------


def claim(
    session: Session, agent: str, *, now: float | None = None, lease: float = LEASE_SECONDS
) -> Claimed | None:
    """The next file for ``agent`` to run, now claimed by it (committed), or None.

    The oldest job's first file that waits (and whose back-off is over), or that runs under a
    lease that ran out. Several agents may claim at once: a claim is a conditional update of
    the row as it was read, and a lost race tries the next file.
    """
    at = time.time() if now is None else now
    f, j = TransferFile, TransferJob
    for _ in range(16):  # races lost to other agents
        _begin_write(session)
        row = session.execute(
            select(f.id, f.state, f.lease_until, f.attempts)
            .join(j, j.id == f.job_id)
            .where(~j.cancelled)
            .where(
                ((f.state == "pending") & (f.retry_at.is_(None) | (f.retry_at <= at)))
                | ((f.state == "running") & (f.lease_until < at))
            )
            .order_by(f.job_id, f.id)
            .limit(1)
        ).first()
        if row is None:
            session.rollback()
            return None
        file_id, state, held_until, attempts = row
        taken = session.execute(
            update(f)
            .where(f.id == file_id, f.state == state, f.attempts == attempts)
            .where(f.lease_until.is_(None) if held_until is None else f.lease_until == held_until)
            .values(
                state="running",
                agent=agent,
                lease_until=at + lease,
                attempts=attempts + 1,
                started=func.coalesce(f.started, at),
                error=None,
            )
        )
        if not taken.rowcount:  # type: ignore[attr-defined]
            session.rollback()
            continue
        chosen = session.execute(
            select(f.id, f.job_id, f.name, j.destination, f.path, f.size, f.sha256, j.engine)
            .join(j, j.id == f.job_id)
            .where(f.id == file_id)
        ).one()
        session.execute(update(j).where(j.id == chosen.job_id).values(updated=at))
        session.commit()
        return Claimed(*chosen, attempt=attempts + 1)
    return None


def report(
    session: Session,
    file_id: int,
    agent: str,
    bytes_done: int,
    *,
    now: float | None = None,
    lease: float = LEASE_SECONDS,
) -> bool:
    """Bytes received so far; the lease renewed (committed). False when the agent should stop
    this file: the job was cancelled, or the file is no longer its own."""
    at = time.time() if now is None else now
    f, j = TransferFile, TransferJob
    _begin_write(session)
    cancelled = session.execute(
        select(j.cancelled).join(f, f.job_id == j.id).where(f.id == file_id)
    ).scalar()
    if cancelled is None or cancelled:
        session.rollback()
        return False
    result = session.execute(
        update(f)
        .where(f.id == file_id, f.agent == agent, f.state == "running")
        .values(bytes_done=bytes_done, lease_until=at + lease)
    )
    session.commit()
    return bool(result.rowcount)  # type: ignore[attr-defined]


def finish(
    session: Session,
    file_id: int,
    agent: str,
    *,
    ok: bool,
    size: int = 0,
    engine: str | None = None,
    error: str | None = None,
    cancelled: bool = False,
    now: float | None = None,
    retry_first: float = RETRY_FIRST,
) -> str:
    """The end of an attempt (committed); the file's new state.

    ``ok``: the file is in place and verified. Else ``cancelled`` (the job's cancel or the
    agent stopping: ``pending`` again unless the job was cancelled) or a failure: ``cancelled``
    (with ``error``) when the job was cancelled meanwhile, else ``pending`` with a back-off
    while attempts remain, then ``failed`` with ``error``.
    """
    at = time.time() if now is None else now
    f, j = TransferFile, TransferJob
    _begin_write(session)
    row = session.execute(
        select(f.attempts, f.job_id, j.cancelled)
        .join(j, j.id == f.job_id)
        .where(f.id == file_id, f.agent == agent, f.state == "running")
    ).first()
    if row is None:  # the lease ran out and another agent took it: its report counts
        session.rollback()
        return "lost"
    attempts, job_id, job_cancelled = row
    values: dict[str, Any] = {"lease_until": None, "agent": None}
    if ok:
        values.update(state="done", bytes_done=size, engine=engine, finished=at, error=None)
        _record_replica(session, file_id, size, at)
    elif cancelled:
        state = "cancelled" if job_cancelled else "pending"
        values.update(state=state, attempts=max(attempts - 1, 0))
        if job_cancelled:
            values["finished"] = at
    elif job_cancelled:  # failed after the job's cancel: it waits for a retry, not a back-off
        values.update(state="cancelled", finished=at, error=(error or "failed")[:MAX_ERROR])
    elif attempts < MAX_ATTEMPTS:
        delay = min(retry_first * 2 ** (attempts - 1), RETRY_MAX)
        values.update(state="pending", retry_at=at + delay, error=(error or "")[:MAX_ERROR])
    else:
        values.update(state="failed", finished=at, error=(error or "failed")[:MAX_ERROR])
    session.execute(update(f).where(f.id == file_id).values(**values))
    session.execute(update(j).where(j.id == job_id).values(updated=at))
    session.commit()
    return str(values["state"])


def _record_replica(session: Session, file_id: int, size: int, now: float) -> None:
    """The copy a finished file is, as one of its name's holders at this site."""
    f, j = TransferFile, TransferJob
    name, path, sha256, job_id, destination = session.execute(
        select(f.name, f.path, f.sha256, f.job_id, j.destination)
        .join(j, j.id == f.job_id)
        .where(f.id == file_id)
    ).one()
    where = f"{destination}/{path}"
    site = session.execute(select(Site.name).where(Site.local.is_(True))).scalar()
    held = session.execute(
        select(Replica.id).where(Replica.name == name, Replica.path == where)
    ).scalar()
    values = {"site": site, "size": size, "sha256": sha256, "job_id": job_id, "created": now}
    if held is None:
        session.execute(insert(Replica).values(name=name, path=where, **values))
    else:
        session.execute(update(Replica).where(Replica.id == held).values(**values))


def replicas(session: Session, name: str) -> list[dict[str, Any]]:
    """The verified copies of ``name`` that jobs made at this site, oldest first."""
    rows = session.execute(
        select(Replica.site, Replica.path, Replica.size, Replica.sha256, Replica.created)
        .where(Replica.name == name)
        .order_by(Replica.id)
    ).mappings()
    return [dict(row) for row in rows]


def release(session: Session, agent: str) -> int:
    """Everything ``agent`` held back to ``pending`` (committed): an agent that starts again
    continues its files at once instead of waiting for their leases. The attempt it was in
    is not counted."""
    f = TransferFile
    _begin_write(session)
    result = session.execute(
        update(f)
        .where(f.agent == agent, f.state == "running")
        .values(state="pending", agent=None, lease_until=None, attempts=_one_less(f.attempts))
    )
    session.commit()
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def _one_less(column: Any) -> Any:
    """``column - 1``, never below 0 (SQLite's max(a, b) is PostgreSQL's greatest)."""
    return case((column > 0, column - 1), else_=0)


def active(session: Session) -> bool:
    """Whether any job has a file that waits or runs (an agent with ``--until-idle`` stops once
    none has)."""
    f, j = TransferFile, TransferJob
    found = session.execute(
        select(f.id)
        .join(j, j.id == f.job_id)
        .where(~j.cancelled, f.state.in_(("pending", "running")))
        .limit(1)
    ).first()
    session.rollback()
    return found is not None
