"""The federation, over HTTP (docs/federation.md): the sites, this site's signed change
batches (the HTTP fallback of ``ndnsci catalog mirror``), and the conflicts between sites."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response

from ndnsci_catalog import sites
from ndnsci_catalog.api.deps import errors
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.errors import NotFoundError
from ndnsci_catalog.schemas import ConflictsResponse, SitesResponse

router = APIRouter(tags=["federation"])


@router.get("/sites", operation_id="list_sites", response_model=SitesResponse)
def list_sites(session: SessionDep) -> SitesResponse:
    """This catalog's site (null before ``ndnsci catalog site init``) and the sites it trusts,
    with how many change batches of each it has applied."""
    every = sites.all_sites(session)
    local = next((s for s in every if s.local), None)
    return SitesResponse.model_validate(
        {
            "local": local.to_dict() if local else None,
            "trusted": [s.to_dict() for s in every if not s.local],
        }
    )


@router.get(
    "/sites/{site}/batches/{number}",
    operation_id="get_change_batch",
    response_class=Response,
    responses={
        200: {
            "description": "the signed envelope of the batch (docs/federation.md)",
            "content": {"application/octet-stream": {"schema": {"type": "string"}}},
        },
        **errors(404, 422),
    },
)
def get_change_batch(
    session: SessionDep,
    site: Annotated[str, Path(max_length=64)],
    number: Annotated[int, Path(ge=1, le=2**62)],
) -> Response:
    """Batch ``number`` of this site's changes, signed by the site: verify it with the key of
    your trust list, never with one this server gives."""
    local = sites.local_site(session)
    if local is None or local.name != site:
        raise NotFoundError(f"this catalog serves the batches of its own site only, not {site!r}")
    sealed = sites.batch_envelope(session, number)
    if sealed is None:
        raise NotFoundError(f"site {site} has {local.applied} batches; {number} is not one")
    headers = {"Cache-Control": "public, max-age=31536000, immutable"}
    return Response(sealed, media_type="application/octet-stream", headers=headers)


@router.get("/conflicts", operation_id="list_conflicts", response_model=ConflictsResponse)
def list_conflicts(
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
    offset: Annotated[int, Query(ge=0, le=2**62)] = 0,
) -> ConflictsResponse:
    """Names two sites published: the site whose record is kept, and the one refused."""
    return ConflictsResponse.model_validate(
        {
            "total": sites.conflict_count(session),
            "conflicts": sites.conflicts(session, limit, offset),
        }
    )
