"""Publishing (token required) and the change feed for mirrors (public)."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select

from ndnsci_catalog.api.deps import TokenDep, errors
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.errors import BatchTooLargeError, InvalidInputError
from ndnsci_catalog.ingest import publish
from ndnsci_catalog.loader import more_records_than
from ndnsci_catalog.models import CatalogState, Change
from ndnsci_catalog.schemas import ChangesResponse, PublishResponse

router = APIRouter(tags=["publish"])

NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "description": "JSON lines: one record per line, as `ndnsci translate --json` and the "
        "metadata extractor produce them; at most the limits `GET /limits` states "
        "(`max_publish_records` records, `max_publish_bytes` bytes)",
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    }
}
ReplaceParam = Annotated[
    bool,
    Query(
        description="a record of a name another file has already published replaces it "
        "(reported in `collisions` either way); by default the published record stays"
    ),
]


@router.post(
    "/publish",
    operation_id="publish_records",
    response_model=PublishResponse,
    responses=errors(401, 413, 422),
    openapi_extra=NDJSON_BODY,
)
async def publish_records(
    request: Request, session: SessionDep, _token: TokenDep, replace: ReplaceParam = False
) -> PublishResponse:
    """Upsert records by name in one transaction: all lines or none.

    A record identical to the published one changes nothing; one of the same file (the same
    original path or SHA-256, or a new version) replaces it and the replaced version goes to
    the file's history; one of another file is a collision: reported, and published only with
    ``replace=true``. Every bad line is reported at once (422 ``invalid-records``, nothing
    published); a body over the limits is refused whole (413 ``batch-too-large``).
    """
    # the token check read in a transaction: end it, so no connection is held while the body
    # arrives and is prepared, and the write below starts a fresh one (a SQLite read
    # transaction cannot become a write one once another publisher has committed)
    await run_in_threadpool(session.rollback)
    settings = request.app.state.settings
    body = await request.body()  # at most max_publish_bytes: BodyLimitMiddleware
    if more_records_than(body, settings.max_publish_records):
        raise _too_large(f"more than {settings.max_publish_records} records", settings)
    batch = await request.app.state.preparer.prepare(body, replace)
    del body
    if batch.prepared is None:
        line, detail = batch.refused[0]
        raise InvalidInputError(
            f"line {line}: {detail}"
            + (f" (and {len(batch.refused) - 1} more lines)" if len(batch.refused) > 1 else ""),
            code="invalid-records",
            line=line,
            refused=[{"line": n, "detail": d} for n, d in batch.refused],
        )
    prepared = batch.prepared

    def write() -> PublishResponse:
        # on the publishes' own connection when the server has one: its page cache stays valid
        # from one batch to the next (main.create_app)
        sessions = request.app.state.publish_sessionmaker
        with sessions() if sessions is not None else contextlib.nullcontext(session) as writing:
            result = publish(writing, prepared)
            writing.commit()
        request.app.state.metrics.count_publish(result.inserted, result.replaced, result.unchanged)
        conflicting = [{"name": n, "held_by": site} for n, site in result.conflicts]
        return PublishResponse.model_validate({**result.to_dict(), "conflicting": conflicting})

    return await run_in_threadpool(write)


def _too_large(what: str, settings: Any) -> BatchTooLargeError:
    return BatchTooLargeError(
        f"{what} in one publish request: send at most {settings.max_publish_records} records "
        f"and {settings.max_publish_bytes} bytes per request (GET /limits states the limits)",
        max_records=settings.max_publish_records,
        max_bytes=settings.max_publish_bytes,
    )


@router.get(
    "/changes",
    operation_id="list_changes",
    response_model=ChangesResponse,
    responses=errors(422),
)
def list_changes(
    session: SessionDep,
    since: Annotated[int, Query(ge=0, le=2**62, description="last seq already applied")] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> ChangesResponse:
    """Publications and retractions after ``since``, in order: a mirror applies them in turn."""
    last_seq = session.scalar(select(CatalogState.last_seq)) or 0
    rows = session.execute(
        select(Change.seq, Change.op, Change.name, Change.version, Change.at)
        .where(Change.seq > since)
        .order_by(Change.seq)
        .limit(limit)
    ).mappings()
    changes = [dict(r) for r in rows]
    return ChangesResponse.model_validate(
        {
            "since": since,
            "last_seq": last_seq,
            "changes": changes,
            "next": changes[-1]["seq"] if changes else max(since, 0),
        }
    )
