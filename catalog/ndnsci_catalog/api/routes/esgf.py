"""The ESGF search API: ``/esg-search/search`` and ``/esg-search/wget`` (public).

ESGF clients (esgf-pyclient, esgpull, intake-esgf, wget scripts) work against the catalog by
pointing them at ``<catalog>/esg-search``. Parameters and answers: :mod:`ndnsci_catalog.esgf`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.esgf import request as esgf_request
from ndnsci_catalog.esgf import search as esgf_search
from ndnsci_catalog.esgf import solr, wget
from ndnsci_catalog.esgf.docs import Site
from ndnsci_catalog.schemas import ErrorResponse

router = APIRouter(prefix="/esg-search", tags=["esgf"])

_QUERY_HELP = (
    "The ESGF search API as ESGF index nodes serve it: keywords `type` (Dataset, File, "
    "Aggregation), `format` (application/solr+json, or Solr XML by default), `limit`, `offset`, "
    "`facets` (`*` for all), `fields`, `query` (free text), `latest`, `replica`, `retracted`, "
    "`distrib` (answered locally), `shards`, `start`/`end`, `from`/`to`; every other parameter "
    "is a constraint: `model=HadCM3&model=MIROC5` (OR), `experiment!=historical` (not), ids "
    "(`dataset_id`, `id`, `instance_id`, `master_id`, `drs_id`), `project`. A parameter that "
    "cannot be honoured is a 400 saying `Invalid HTTP query parameter=<name>` and why."
)
_REFUSED: dict[int | str, dict[str, Any]] = {400: {"model": ErrorResponse}}


def site(request: Request) -> Site:
    """This node as the records name it: the configured data node, else the host asked."""
    settings = request.app.state.settings
    base = str(request.base_url)
    node = settings.data_node or request.url.netloc
    gateway = settings.gateway_url or base + "data/"
    return Site(
        node=node,
        gateway=gateway.rstrip("/") + "/",
        search=base + "esg-search/",
        xrootd=settings.xrootd_url,
    )


def _refused(exc: esgf_request.EsgfError) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=400)


@router.get(
    "/search",
    operation_id="esgf_search",
    description=_QUERY_HELP,
    response_class=Response,
    responses={
        200: {
            "description": "Solr JSON (`format=application/solr+json`) or Solr XML (the "
            "default, `format=application/solr+xml`), sent as ESGF's index nodes send them",
            "content": {"application/json": {}, "application/xml": {}},
        },
        **_REFUSED,
    },
)
def esgf_search_route(request: Request, session: SessionDep) -> Response:
    try:
        asked = esgf_request.parse(request.query_params.multi_items())
        here = site(request)
        answer = esgf_search.run(session, request.app.state.index, asked, here)
    except esgf_request.EsgfError as exc:
        return _refused(exc)
    if asked.format == esgf_request.JSON:
        return Response(solr.as_json(answer, asked, here.node), media_type="application/json")
    return Response(solr.as_xml(answer, asked, here.node), media_type="application/xml")


@router.get("/search/", include_in_schema=False)
def esgf_search_slash(request: Request, session: SessionDep) -> Response:
    return esgf_search_route(request, session)


@router.get(
    "/wget",
    operation_id="esgf_wget",
    description=(
        "A bash script downloading the files of a search (same constraints as `/search`) over "
        "HTTP from the gateway, verifying each SHA-256 and skipping complete files on a re-run. "
        f"`limit`: at most {wget.MAX_FILES:,} files (default {wget.DEFAULT_FILES:,})."
    ),
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-sh": {}}}, **_REFUSED},
)
def esgf_wget_route(request: Request, session: SessionDep) -> Response:
    try:
        script = wget.script(session, request.app.state.index, request, site(request))
    except esgf_request.EsgfError as exc:
        return _refused(exc)
    return StreamingResponse(
        script.lines(),
        media_type="application/x-sh",
        headers={"Content-Disposition": f'attachment; filename="{script.filename}"'},
    )


@router.get("/wget/", include_in_schema=False)
def esgf_wget_slash(request: Request, session: SessionDep) -> Response:
    return esgf_wget_route(request, session)
