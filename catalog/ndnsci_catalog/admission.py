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

A request body is counted as it arrives (:class:`BodyLimitMiddleware`): beyond its limit
(``max_publish_bytes`` for ``POST /publish``, ``max_body_bytes`` for any other) the answer is a
413 naming the limit, before any of it is read when the request states its length. ``GET
/limits`` states the limits. (FastAPI's own ``max_body_size`` answers a bare "Content Too Large"
text that a client cannot size its next request by.)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import HTTPException, Request
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ndnsci_catalog.config import Settings
from ndnsci_catalog.errors import UnavailableError

#: operations that write (the write lane; the others read)
WRITES = frozenset(
    {"publish_records", "retract_file", "submit_transfer", "cancel_transfer", "retry_transfer"}
)
#: operations that touch no pooled connection and answer under any load (a transfer's event
#: stream may stay open for hours: each of its looks takes a session for a moment)
UNGUARDED = frozenset({"health", "limits", "transfer_events"})
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


class BodyTooLarge(HTTPException):
    """A request body beyond its limit (413). An HTTPException, so that FastAPI passes it on
    when it is raised while FastAPI reads the body (a JSON body parameter)."""

    def __init__(self, limit: int, **extra: Any) -> None:
        super().__init__(
            413, f"the request body is larger than {limit} bytes, the most this route takes "
            "(GET /api/v1/limits lists the limits)"
        )  # fmt: skip
        self.limit = limit
        #: more for the client: a publish's limits (``code: batch-too-large``)
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        return {"detail": self.detail, "limit": self.limit, **self.extra}


class BodyLimitMiddleware:
    """ASGI middleware: at most ``limit(scope)`` bytes of request body (see the module
    docstring)."""

    def __init__(
        self, app: ASGIApp, publish_path: str, publish_limit: int, publish_records: int, limit: int
    ) -> None:
        self.app = app
        self.publish_path = publish_path
        self.publish_limit = publish_limit
        self.other_limit = limit
        # a publisher told the limits cuts its batch and sends it again (not a bad record)
        self.publish_extra = {
            "code": "batch-too-large",
            "max_records": publish_records,
            "max_bytes": publish_limit,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        publish = scope["method"] == "POST" and scope["path"].rstrip("/") == self.publish_path
        limit = self.publish_limit if publish else self.other_limit
        extra = self.publish_extra if publish else {}
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _answer(send, 413, BodyTooLarge(limit, **extra).to_dict())
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit, **extra)
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _answer(send: Send, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
