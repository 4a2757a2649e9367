"""Transfer jobs (submitting, cancelling and retrying need a token; reading them is public).

The jobs are run by the site's transfer agent (``ndnsci transfer agent``), which reads and
writes the same tables (:mod:`ndnsci_catalog.transfers`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from itertools import islice
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from ndnsci_catalog import transfers
from ndnsci_catalog.api.deps import TokenDep, errors
from ndnsci_catalog.api.routes.files import drs_path, name_rows, search_rows
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.errors import InvalidInputError, NotFoundError
from ndnsci_catalog.schemas import (
    TransferFilesResponse,
    TransferJobResponse,
    TransferJobsResponse,
    TransferRequest,
)

router = APIRouter(tags=["transfers"])

#: the most files one job may hold
MAX_TRANSFER_FILES = 1_000_000
#: names quoted back when some of a job's names are not in the catalog
QUOTED_NAMES = 10
#: seconds between two looks at a job for its event stream; an event is sent when it changed
EVENT_INTERVAL = 0.5
#: a comment line this often keeps proxies from closing a quiet stream
KEEPALIVE_SECONDS = 15.0

JobId = Annotated[int, Path(ge=1, le=2**62, description="the job's number")]


def _response(job: transfers.JobStatus) -> TransferJobResponse:
    return TransferJobResponse.model_validate(job.to_dict())


@router.post(
    "/transfers",
    operation_id="submit_transfer",
    status_code=201,
    response_model=TransferJobResponse,
    responses=errors(400, 401, 422),
)
def submit_transfer(
    body: TransferRequest, session: SessionDep, request: Request, owner: TokenDep
) -> TransferJobResponse:
    """A new job copying the files of ``names`` or ``search`` into ``destination`` at this
    site, run by its transfer agent. Every name must be in the catalog (a 422 lists those that
    are not: nothing is left out silently); a name given twice is copied once."""
    state = request.app.state
    if body.search is not None:
        selection: dict[str, Any] = {"search": body.search}
        rows: Iterator[dict[str, Any]] = search_rows(
            session, state.index, body.search, state.settings.read_wait_seconds
        )
    else:
        most = state.settings.max_manifest_names
        if len(body.names or []) > most:
            raise InvalidInputError(
                f"{len(body.names or [])} names in one transfer; at most {most} (GET /limits): "
                "give a search instead"
            )
        selection = {"names": list(body.names or [])}
        rows = name_rows(session, body.names or [])
    # a destination or engine that is wrong is said before the selection is read
    transfers.check_destination(body.destination)
    transfers.check_engine(body.engine)
    wanted = list(islice(rows, MAX_TRANSFER_FILES + 1))
    if len(wanted) > MAX_TRANSFER_FILES:
        raise InvalidInputError(
            f"the selection has more than {MAX_TRANSFER_FILES:,} files: split it into several jobs"
        )
    missing = [row for row in wanted if "error" in row]
    if missing:
        quoted = ", ".join(f"{row['name']!r} ({row['error']})" for row in missing[:QUOTED_NAMES])
        more = f" and {len(missing) - QUOTED_NAMES} more" if len(missing) > QUOTED_NAMES else ""
        raise InvalidInputError(
            f"{len(missing)} of the {len(wanted)} names cannot be transferred: {quoted}{more}",
            code="unknown-names",
            names=[row["name"] for row in missing],
        )
    job_id = transfers.submit(
        session,
        owner=owner,
        destination=body.destination,
        engine=body.engine,
        selection=selection,
        files=(
            transfers.Wanted(row["name"], drs_path(row["name"]), row["size"], row["sha256"])
            for row in wanted
        ),
    )
    session.commit()
    return _response(transfers.status(session, job_id))


@router.get("/transfers", operation_id="list_transfers", response_model=TransferJobsResponse)
def list_transfers(
    session: SessionDep,
    owner: Annotated[str | None, Query(max_length=200, description="the token name")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> TransferJobsResponse:
    """The newest jobs first."""
    found = transfers.jobs(session, owner=owner, limit=limit, offset=offset)
    return TransferJobsResponse(jobs=[_response(job) for job in found])


@router.get(
    "/transfers/{job_id}",
    operation_id="get_transfer",
    response_model=TransferJobResponse,
    responses=errors(404, 422),
)
def get_transfer(job_id: JobId, session: SessionDep) -> TransferJobResponse:
    return _response(transfers.status(session, job_id))


@router.get(
    "/transfers/{job_id}/files",
    operation_id="list_transfer_files",
    response_model=TransferFilesResponse,
    responses=errors(404, 422),
)
def list_transfer_files(
    job_id: JobId,
    session: SessionDep,
    state: Annotated[
        str | None, Query(description="pending, running, done, failed or cancelled")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> TransferFilesResponse:
    """The job's files in order, with their state, bytes, attempts, engine and last error."""
    rows = transfers.files(session, job_id, state=state, limit=limit, offset=offset)
    return TransferFilesResponse.model_validate({"files": rows})


@router.delete(
    "/transfers/{job_id}",
    operation_id="cancel_transfer",
    response_model=TransferJobResponse,
    responses=errors(401, 404, 422),
)
def cancel_transfer(job_id: JobId, session: SessionDep, _token: TokenDep) -> TransferJobResponse:
    """Cancel the job: waiting files are not started, running ones stop within a second or
    two (their partial files stay, so a retry continues them); finished files stay."""
    transfers.cancel(session, job_id)
    session.commit()
    return _response(transfers.status(session, job_id))


@router.post(
    "/transfers/{job_id}/retry",
    operation_id="retry_transfer",
    response_model=TransferJobResponse,
    responses=errors(401, 404, 422),
)
def retry_transfer(job_id: JobId, session: SessionDep, _token: TokenDep) -> TransferJobResponse:
    """Failed and cancelled files are tried again (their attempts counted afresh)."""
    transfers.retry(session, job_id)
    session.commit()
    return _response(transfers.status(session, job_id))


@router.get(
    "/transfers/{job_id}/events",
    operation_id="transfer_events",
    responses={
        200: {
            "description": "server-sent events: `data:` the job as GET /transfers/{id} gives it, "
            "each time it changes; the stream ends when the job is done, failed or cancelled",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **errors(404, 422),
    },
    response_class=StreamingResponse,
)
async def transfer_events(job_id: JobId, request: Request) -> StreamingResponse:
    """The job's status as it changes (server-sent events, for the portal's Transfers page).

    Each look takes a session of its own for a moment: a stream open for hours holds no
    connection and no turn of the admission lanes.
    """
    first = await run_in_threadpool(_look, request, job_id)  # a 404 before the stream starts
    return StreamingResponse(
        _events(request, job_id, first),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _look(request: Request, job_id: int) -> dict[str, Any]:
    with request.app.state.sessionmaker() as session:
        return _response(transfers.status(session, job_id)).model_dump()


async def _events(request: Request, job_id: int, first: dict[str, Any]) -> AsyncIterator[str]:
    job, sent, quiet = first, None, 0.0
    while True:
        if job != sent:
            yield f"event: job\ndata: {json.dumps(job)}\n\n"
            sent, quiet = job, 0.0
        if job["state"] in ("done", "failed", "cancelled"):
            return
        if quiet >= KEEPALIVE_SECONDS:
            yield ": still running\n\n"
            quiet = 0.0
        await asyncio.sleep(EVENT_INTERVAL)
        quiet += EVENT_INTERVAL
        if await request.is_disconnected():
            return
        try:
            job = await run_in_threadpool(_look, request, job_id)
        except NotFoundError:
            return
