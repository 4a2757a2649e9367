"""Transfer jobs as the SDK shows them: :meth:`Catalog.transfer` submits one and returns a
:class:`Transfer`, whose :meth:`~Transfer.wait` follows it to its end.

A job runs at the catalog's site, by its transfer agent (``ndnsci transfer agent``), without
the caller: a notebook may submit a 2 TB job, close, and look at it the next day with
``cat.transfers()`` or ``Transfer(cat, id)``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: the states in which a job has ended (a retry starts it again)
ENDED = ("done", "failed", "cancelled")


@dataclass(frozen=True)
class TransferStatus:
    """A job as the catalog reports it (``GET /api/v1/transfers/{id}``).

    ``state``: queued, running, done, failed or cancelled. ``counts``: files per state
    (pending, running, done, failed, cancelled). ``rate``: bytes per second since its first
    file started; ``eta``: seconds left at that rate. ``engines``: finished files per engine.
    """

    id: int
    state: str
    destination: str
    engine: str
    owner: str
    files: int
    bytes: int
    bytes_done: int
    counts: Mapping[str, int]
    engines: Mapping[str, int]
    created: float
    updated: float
    started: float | None = None
    finished: float | None = None
    rate: float | None = None
    eta: float | None = None
    unknown_sizes: int = 0
    selection: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TransferStatus:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in obj.items() if k in known})

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def ok(self) -> bool:
        """Every file is in place and verified."""
        return self.state == "done"

    def summary(self) -> str:
        """One line: ``job 3 running: 12/50 files, 1.2 of 12.8 GB, 210 MB/s, 55 s left``."""
        c = self.counts
        parts = [f"{c.get('done', 0)}/{self.files} files"]
        if self.bytes:
            parts.append(f"{self.bytes_done / 1e9:.2f} of {self.bytes / 1e9:.2f} GB")
        if self.rate:
            parts.append(f"{self.rate / 1e6:.1f} MB/s")
        if self.eta is not None and not self.ended:
            parts.append(f"{self.eta:.0f} s left")
        if c.get("failed"):
            parts.append(f"{c['failed']} failed")
        if self.engines:
            parts.append("by " + ", ".join(f"{e} {n}" for e, n in sorted(self.engines.items())))
        return f"job {self.id} {self.state}: " + ", ".join(parts)


@dataclass(frozen=True)
class TransferFile:
    """One file of a job: where it goes below the destination, its state, its last error."""

    name: str
    path: str
    state: str
    size: int | None = None
    sha256: str | None = None
    bytes_done: int = 0
    attempts: int = 0
    engine: str | None = None
    error: str | None = None
    retry_at: float | None = None
    started: float | None = None
    finished: float | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TransferFile:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in obj.items() if k in known})


def _pause(
    now: TransferStatus,
    progress: Callable[[TransferStatus], None] | None,
    poll: float,
    deadline: float | None,
) -> float | None:
    """One step of a wait: ``progress`` told, then None once the job has ended, else the
    seconds to wait before asking again. Raises TimeoutError past ``deadline``."""
    if progress is not None:
        progress(now)
    if now.ended:
        return None
    if deadline is not None and time.monotonic() >= deadline:
        raise TimeoutError(f"transfer job {now.id} still {now.state}: {now.summary()}")
    return poll if deadline is None else min(poll, max(deadline - time.monotonic(), 0))


class _Jobs(Protocol):
    """What a handle asks of its catalog (:class:`ndnsci.Catalog`)."""

    url: str

    def transfer_status(self, job_id: int) -> TransferStatus: ...

    def transfer_files(self, job_id: int, state: str | None = None) -> list[TransferFile]: ...

    def cancel_transfer(self, job_id: int) -> TransferStatus: ...

    def retry_transfer(self, job_id: int) -> TransferStatus: ...


class Transfer:
    """A handle on one job of a catalog: ask its status, wait for it, cancel or retry it."""

    def __init__(self, catalog: _Jobs, job_id: int) -> None:
        self.catalog = catalog
        self.id = job_id

    def __repr__(self) -> str:
        return f"Transfer({self.catalog.url!r}, {self.id})"

    def status(self) -> TransferStatus:
        return self.catalog.transfer_status(self.id)

    def files(self, state: str | None = None) -> list[TransferFile]:
        """The job's files (those in ``state`` when given: ``failed`` says why each failed)."""
        return self.catalog.transfer_files(self.id, state)

    def cancel(self) -> TransferStatus:
        return self.catalog.cancel_transfer(self.id)

    def retry(self) -> TransferStatus:
        return self.catalog.retry_transfer(self.id)

    def wait(
        self,
        timeout: float | None = None,
        *,
        poll: float = 1.0,
        progress: Callable[[TransferStatus], None] | None = None,
    ) -> TransferStatus:
        """The job's status once it has ended (done, failed or cancelled); ``progress`` is
        called with each status seen on the way.

        Raises:
            TimeoutError: ``timeout`` seconds passed first (the job goes on).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            now = self.status()
            pause = _pause(now, progress, poll, deadline)
            if pause is None:
                return now
            time.sleep(pause)


class _AsyncJobs(Protocol):
    """What an async handle asks of its catalog (:class:`ndnsci.AsyncCatalog`)."""

    url: str

    def transfer_status(self, job_id: int) -> Awaitable[TransferStatus]: ...

    def transfer_files(
        self, job_id: int, state: str | None = None
    ) -> Awaitable[list[TransferFile]]: ...

    def cancel_transfer(self, job_id: int) -> Awaitable[TransferStatus]: ...

    def retry_transfer(self, job_id: int) -> Awaitable[TransferStatus]: ...


class AsyncTransfer:
    """:class:`Transfer` for asyncio code: the same methods, awaited."""

    def __init__(self, catalog: _AsyncJobs, job_id: int) -> None:
        self.catalog = catalog
        self.id = job_id

    def __repr__(self) -> str:
        return f"AsyncTransfer({self.catalog.url!r}, {self.id})"

    async def status(self) -> TransferStatus:
        return await self.catalog.transfer_status(self.id)

    async def files(self, state: str | None = None) -> list[TransferFile]:
        return await self.catalog.transfer_files(self.id, state)

    async def cancel(self) -> TransferStatus:
        return await self.catalog.cancel_transfer(self.id)

    async def retry(self) -> TransferStatus:
        return await self.catalog.retry_transfer(self.id)

    async def wait(
        self,
        timeout: float | None = None,
        *,
        poll: float = 1.0,
        progress: Callable[[TransferStatus], None] | None = None,
    ) -> TransferStatus:
        """:meth:`Transfer.wait`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            now = await self.status()
            pause = _pause(now, progress, poll, deadline)
            if pause is None:
                return now
            await asyncio.sleep(pause)
