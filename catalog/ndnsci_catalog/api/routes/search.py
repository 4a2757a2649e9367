"""Search, autocomplete and tree browsing (public)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy.orm import Session

from ndnsci_catalog.api.deps import errors
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.facetindex import FacetIndex
from ndnsci_catalog.query import (
    MAX_LIMIT,
    Search,
    SearchParams,
    Sort,
    normalize_prefix,
    on_index,
    parse_params,
    time_bound,
)
from ndnsci_catalog.schemas import AutocompleteResponse, SearchResponse, TreeResponse
from ndnsci_catalog.tree import autocomplete, browse

router = APIRouter(tags=["search"])

FACET_HELP = (
    "Facet filters are further query parameters named after facets: `model=HadCM3&model=CanESM2` "
    "(OR within a facet), `experiment=historical` (AND across facets), `model!=HadCM3` "
    "(exclude). An unknown facet is a 400 listing the valid ones."
)


@router.get(
    "/search",
    operation_id="search",
    response_model=SearchResponse,
    responses=errors(400, 422),
    description=FACET_HELP,
)
def search(
    *,
    request: Request,
    session: SessionDep,
    q: Annotated[str | None, Query(max_length=1000, description="free text")] = None,
    prefix: Annotated[str | None, Query(max_length=4096, description="NDN name prefix")] = None,
    start: Annotated[str | None, Query(max_length=32, description="overlaps from")] = None,
    end: Annotated[str | None, Query(max_length=32, description="overlaps until")] = None,
    scheme: Annotated[list[str] | None, Query(max_length=20)] = None,
    limit: Annotated[int, Query(ge=0, le=MAX_LIMIT)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
    sort: Sort = "name",
    facets: Annotated[
        str | None, Query(max_length=2000, description="comma-separated facets to count")
    ] = None,
    facet_limit: Annotated[int, Query(ge=0, le=1000)] = 100,
) -> SearchResponse:
    params = parse_params(
        session,
        request.query_params.multi_items(),
        q=q or None,
        prefix=normalize_prefix(prefix) if prefix else None,
        start=time_bound(start, upper=False, label="start"),
        end=time_bound(end, upper=True, label="end"),
        schemes=scheme or [],
        limit=limit,
        offset=offset,
        sort=sort,
        count_facets=None if facets is None else [k for k in facets.split(",") if k],
        facet_limit=facet_limit,
    )
    state = request.app.state
    return answer(state.index, session, params, state.settings.read_wait_seconds)


def answer(
    index: FacetIndex, session: Session, params: SearchParams, wait: float | None = None
) -> SearchResponse:
    """The search on the index synced to the database."""

    def work(strict: bool) -> SearchResponse:
        found = Search(session, params, index, strict=strict)
        return SearchResponse.model_validate(
            {
                "total": found.total(),
                "limit": params.limit,
                "offset": params.offset,
                "results": found.results() if params.limit else [],
                "facets": found.facet_counts(),
            }
        )

    return on_index(index, session, work, wait)


@router.get(
    "/autocomplete",
    operation_id="autocomplete",
    response_model=AutocompleteResponse,
    responses=errors(422),
)
def autocomplete_names(
    session: SessionDep,
    prefix: Annotated[str, Query(min_length=1, max_length=4096)] = "/",
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> AutocompleteResponse:
    """The next name components under ``prefix`` with file counts; ``leaf`` marks files."""
    return AutocompleteResponse.model_validate(
        {"prefix": prefix, "completions": autocomplete(session, prefix, limit)}
    )


@router.get(
    "/tree",
    operation_id="browse_tree",
    response_model=TreeResponse,
    responses=errors(404, 422),
)
def tree(
    session: SessionDep,
    path: Annotated[str, Query(min_length=1, max_length=4096)] = "/",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000_000)] = 0,
) -> TreeResponse:
    """One level of the name tree: directories (with file counts) first, then files."""
    return TreeResponse.model_validate(browse(session, path, limit, offset))
