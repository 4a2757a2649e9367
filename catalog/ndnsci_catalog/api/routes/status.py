"""Health, limits and statistics (public)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from sqlalchemy import select

from ndnsci_catalog.admission import Admission
from ndnsci_catalog.api.deps import errors
from ndnsci_catalog.database import Probe, SessionDep
from ndnsci_catalog.errors import UnavailableError
from ndnsci_catalog.models import CatalogState, FacetKey, TreeNode
from ndnsci_catalog.records import FIELD_LIMITS
from ndnsci_catalog.schemas import HealthResponse, LimitsResponse, StatsResponse

router = APIRouter(tags=["status"])
#: ``/health`` says the database does not answer when it last did longer ago than this
HEALTH_STALE_SECONDS = 3.0
#: the first ``/health`` of a process waits this long for the first answer
HEALTH_FIRST_WAIT = 0.5


@router.get("/health", operation_id="health", response_model=HealthResponse, responses=errors(503))
async def health(request: Request) -> HealthResponse:
    """Answers at once under any load: the database is asked every second on a connection and
    a thread of its own; ``instance`` names this server process, ``load`` says how busy it is."""
    probe: Probe = request.app.state.probe
    probe.start()  # started with the server; here for an app run without its lifespan
    waited = 0.0
    while not probe.asked and waited < HEALTH_FIRST_WAIT:
        await asyncio.sleep(0.01)
        waited += 0.01
    problem = probe.problem(HEALTH_STALE_SECONDS)
    if problem is not None:
        raise UnavailableError(problem)
    admission: Admission = request.app.state.admission
    return HealthResponse(
        status="ok",
        database=probe.engine.dialect.name,
        instance=request.app.state.settings.instance,
        load=admission.load(),
    )


@router.get("/limits", operation_id="limits", response_model=LimitsResponse)
async def limits(request: Request) -> LimitsResponse:
    """What one request may carry: a client sizes its batches by these."""
    settings = request.app.state.settings
    return LimitsResponse(
        max_publish_records=settings.max_publish_records,
        max_publish_bytes=settings.max_publish_bytes,
        max_body_bytes=settings.max_body_bytes,
        max_manifest_names=settings.max_manifest_names,
        **FIELD_LIMITS,
    )


@router.get("/stats", operation_id="stats", response_model=StatsResponse)
def stats(session: SessionDep) -> StatsResponse:
    """Totals kept up to date by every publish: no scan of the files."""
    state = session.execute(select(CatalogState)).scalar_one()
    roots = session.execute(select(TreeNode.component, TreeNode.files).where(TreeNode.parent == ""))
    return StatsResponse(
        files=state.files,
        bytes=state.bytes,
        last_seq=state.last_seq,
        roots={f"/{component}": files for component, files in roots},
        facets=sorted(session.scalars(select(FacetKey.key))),
        database=session.get_bind().dialect.name,
    )
