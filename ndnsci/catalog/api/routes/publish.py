"""Publishing (token required) and the change feed for mirrors (public)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select

from ndnsci.catalog.api.deps import TokenDep, errors
from ndnsci.catalog.database import SessionDep
from ndnsci.catalog.errors import InvalidInputError
from ndnsci.catalog.ingest import publish
from ndnsci.catalog.models import CatalogState, Change
from ndnsci.catalog.records import RecordError, parse_lines
from ndnsci.catalog.schemas import ChangesResponse, PublishResponse

router = APIRouter(tags=["publish"])

NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "description": "JSON lines: one record per line, as `ndnsci translate --json` and the "
        "metadata extractor produce them",
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    }
}


@router.post(
    "/publish",
    operation_id="publish_records",
    response_model=PublishResponse,
    responses=errors(401, 422),
    openapi_extra=NDJSON_BODY,
)
async def publish_records(
    request: Request, session: SessionDep, _token: TokenDep
) -> PublishResponse:
    """Upsert records by name in one transaction: all lines or none.

    A record identical to the published one changes nothing; a different one replaces it and
    the replaced version goes to the file's history. A bad line is a 422 naming the line.
    """
    body = await request.body()
    limit = request.app.state.settings.max_publish_records

    def write() -> PublishResponse:  # in a worker thread: parsing is CPU work too
        try:
            records = parse_lines(body.splitlines(), limit=limit)
        except RecordError as exc:
            raise InvalidInputError(str(exc), line=exc.line) from None
        result = publish(session, records)
        session.commit()
        conflicting = [{"name": n, "held_by": site} for n, site in result.conflicts]
        return PublishResponse.model_validate({**result.to_dict(), "conflicting": conflicting})

    return await run_in_threadpool(write)


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
