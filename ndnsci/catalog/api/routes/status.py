"""Health and statistics (public)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy import select, text

from ndnsci.catalog.database import SessionDep
from ndnsci.catalog.models import CatalogState, FacetKey, TreeNode
from ndnsci.catalog.schemas import HealthResponse, PublishLimits, StatsResponse

router = APIRouter(tags=["status"])


@router.get("/health", operation_id="health", response_model=HealthResponse)
def health(request: Request, session: SessionDep) -> HealthResponse:
    """The service answers and its database too; and what a publish request may carry."""
    session.execute(text("SELECT 1"))
    settings = request.app.state.settings
    return HealthResponse(
        status="ok",
        database=session.get_bind().dialect.name,
        publish=PublishLimits(
            max_records=settings.max_publish_records, max_bytes=settings.max_publish_bytes
        ),
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
