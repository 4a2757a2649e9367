"""Admission: how many requests work at once, and how long the others wait.

Every API request but ``/health`` and ``/limits`` takes a turn in one of two lanes before it
runs (:func:`admitted`, a dependency of every API router): reads (searches, records, manifests,
exports) and writes (publish, retract). A lane has a fixed number of turns (``max_reads``,
``max_writes``) and the database pool holds that many connections, so a request that has its
turn never waits for a connection, and the server's worker threads are never all taken. The
others wait for a turn in the event loop, without a thread, at most ``max_waiting`` of them for
at most ``read_wait_seconds`` (``write_wait_seconds``); beyond, the answer is a 503 with
``Retry-After`` at once, never a hang. A turn lasts until the response's last byte is sent (a
streamed manifest included: FastAPI ends a dependency after the response).

Request bodies are limited by FastAPI's own ``max_body_size`` (set by the app factory from the
settings, stated by ``GET /limits``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi import Request
from fastapi.routing import APIRoute

from ndnsci.catalog.config import Settings
from ndnsci.catalog.errors import UnavailableError

#: operations that write (the write lane; the others read)
WRITES = frozenset({"publish_records", "retract_file"})
#: operations that touch no pooled connection and answer under any load
UNGUARDED = frozenset({"health", "limits"})
#: seconds a client is told to wait after a 503, per lane
RETRY_AFTER = {"reads": 1, "writes": 5}


class Lane:
    """A fixed number of turns, a bounded wait for one, counters for ``/health``."""

    def __init__(self, name: str, turns: int, waiting: int, wait_seconds: float) -> None:
        self.name = name
        self.turns = turns
        self.max_waiting = waiting
        self.wait_seconds = wait_seconds
        self.running = 0
        self.waiting = 0
        self.refused = 0
        self._semaphore = asyncio.Semaphore(turns)

    async def enter(self) -> None:
        """Take a turn (raises UnavailableError: no turn free and no room to wait, or the wait
        ran out)."""
        if self._semaphore.locked():
            if self.waiting >= self.max_waiting:
                raise self._busy(f"{self.waiting} more wait")
            self.waiting += 1
            try:
                await asyncio.wait_for(self._semaphore.acquire(), self.wait_seconds)
            except TimeoutError:
                raise self._busy(f"none ended within {self.wait_seconds:g} s") from None
            finally:
                self.waiting -= 1
        else:
            await self._semaphore.acquire()
        self.running += 1

    def leave(self) -> None:
        self.running -= 1
        self._semaphore.release()

    def _busy(self, why: str) -> UnavailableError:
        self.refused += 1
        retry = RETRY_AFTER.get(self.name, 1)
        return UnavailableError(
            f"the catalog is busy: {self.turns} {self.name} run and {why}; retry after {retry} s",
            retry,
        )

    def load(self) -> dict[str, int]:
        return {"turns": self.turns, "running": self.running, "waiting": self.waiting,
                "refused": self.refused}  # fmt: skip


class Admission:
    """The two lanes of one app."""

    def __init__(self, settings: Settings) -> None:
        self.reads = Lane("reads", settings.max_reads, settings.max_waiting,
                          settings.read_wait_seconds)  # fmt: skip
        self.writes = Lane("writes", settings.max_writes, settings.max_waiting,
                           settings.write_wait_seconds)  # fmt: skip

    @property
    def connections(self) -> int:
        """Pooled connections the requests can hold at once: one per turn."""
        return self.reads.turns + self.writes.turns

    def lane(self, route: object) -> Lane | None:
        """The lane of a route; None for the unguarded ones."""
        if not isinstance(route, APIRoute):
            return None
        operation = route.operation_id or route.name
        if operation in UNGUARDED:
            return None
        return self.writes if operation in WRITES else self.reads

    def load(self) -> dict[str, dict[str, int]]:
        return {"reads": self.reads.load(), "writes": self.writes.load()}


async def admitted(request: Request) -> AsyncIterator[None]:
    """Hold a turn of the route's lane for the whole request (see the module docstring)."""
    admission: Admission = request.app.state.admission
    lane = admission.lane(request.scope.get("route"))
    if lane is None:
        yield
        return
    await lane.enter()
    try:
        yield
    finally:
        lane.leave()
