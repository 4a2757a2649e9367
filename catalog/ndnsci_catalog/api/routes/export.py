"""intake-esm export: an esmcat JSON description and the CSV it points to.

Each row has the file's NDN name (``name``, what ``ndnsci fetch`` takes) and its URL on the
HTTP gateway (``url``). ``assets=url`` makes the URL the asset, for clients without NDN:
intake-esm then hands it to xarray as is (``format: opendap`` is intake-esm's word for "a URL
the engine opens itself"), and netCDF's byte-range mode (the ``#mode=bytes`` the URLs of
netCDF files carry) reads what it needs over HTTP ranges, lazily.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from ndnsci_catalog.api.deps import errors
from ndnsci_catalog.api.routes.esgf import site
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.esgf.docs import Site
from ndnsci_catalog.models import File
from ndnsci_catalog.query import valid_facets
from ndnsci_translators import Aggregation, UnknownSchemeError, get_translator

router = APIRouter(tags=["export"])

FIXED_COLUMNS = ["name", "scheme", "filename", "size", "sha256", "time_start", "time_end", "site"]
#: the file on the HTTP gateway (netCDF files: in netCDF's byte-range form)
URL_COLUMN = "url"
SchemeParam = Annotated[str | None, Query(max_length=64, pattern=r"^[a-z][a-z0-9_-]*$")]
AssetsParam = Annotated[
    Literal["name", "url"],
    Query(description="the asset column: NDN names (fetch them), or URLs on the HTTP gateway"),
]


def _columns(session: Session) -> list[str]:
    fixed = [*FIXED_COLUMNS, URL_COLUMN]
    return fixed + [k for k in valid_facets(session) if k not in fixed]


def url_of(here: Site, name: str) -> str:
    url = here.data_url(name)
    return url + "#mode=bytes" if name.endswith(".nc") else url


@router.get("/export/intake-esm", operation_id="export_intake_esm", responses=errors(422))
def esmcat(
    request: Request, session: SessionDep, scheme: SchemeParam = None, assets: AssetsParam = "name"
) -> dict[str, Any]:
    """An esm collection spec: ``intake.open_esm_datastore(url)`` opens the catalog."""
    # intake-esm tells a CSV by the URL's end: one scheme's rows have a path of their own
    if scheme:
        csv_url = str(request.url_for("export_intake_esm_scheme_csv", scheme=scheme))
    else:
        csv_url = str(request.url_for("export_intake_esm_csv"))
    spec: dict[str, Any] = {
        "esmcat_version": "0.1.0",
        "id": f"ndnsci-{scheme or 'all'}",
        "description": "ndnsci catalog export; 'name' is the NDN name to fetch",
        "catalog_file": csv_url,
        "attributes": [{"column_name": c, "vocabulary": ""} for c in _columns(session)],
        "assets": (
            {"column_name": "name", "format": "netcdf"}
            if assets == "name"
            else {"column_name": URL_COLUMN, "format": "opendap"}
        ),
    }
    aggregation = _aggregation(scheme)
    if aggregation is not None:
        spec["aggregation_control"] = {
            "variable_column_name": aggregation.variable,
            "groupby_attrs": list(aggregation.groupby),
            "aggregations": [
                {"type": "union", "attribute_name": aggregation.variable},
                {
                    "type": "join_existing",
                    "attribute_name": "time_range",
                    "options": {"dim": "time", "coords": "minimal", "compat": "override"},
                },
            ],
        }
    return spec


def _aggregation(scheme: str | None) -> Aggregation | None:
    """How the scheme's translator says its files group into datasets (entry points)."""
    if not scheme:
        return None
    try:
        return get_translator(scheme).aggregation
    except UnknownSchemeError:
        return None


@router.get(
    "/export/intake-esm.csv",
    operation_id="export_intake_esm_csv",
    name="export_intake_esm_csv",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}, **errors(422)},
)
def esmcat_csv(
    request: Request, session: SessionDep, scheme: SchemeParam = None
) -> StreamingResponse:
    """One row per file: fixed columns, the gateway URL, then every facet."""
    rows = _rows(session, _columns(session), scheme, site(request))
    return StreamingResponse(rows, media_type="text/csv")


@router.get(
    "/export/intake-esm/{scheme}.csv",
    operation_id="export_intake_esm_scheme_csv",
    name="export_intake_esm_scheme_csv",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}, **errors(422)},
)
def esmcat_scheme_csv(
    request: Request,
    session: SessionDep,
    scheme: Annotated[str, Path(max_length=64, pattern=r"^[a-z][a-z0-9_-]*$")],
) -> StreamingResponse:
    """The rows of one scheme's files (the ``catalog_file`` of ``/export/intake-esm?scheme=``)."""
    return esmcat_csv(request, session, scheme)


def _rows(session: Session, columns: list[str], scheme: str | None, here: Site) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    after = ""
    while True:
        stmt = (
            select(*(getattr(File, c) for c in FIXED_COLUMNS), File.facets)
            .where(File.name > after)
            .order_by(File.name)
            .limit(1000)
        )
        if scheme:
            stmt = stmt.where(File.scheme == scheme)
        rows = session.execute(stmt).all()
        facet_columns = columns[len(FIXED_COLUMNS) + 1 :]
        for row in rows:
            facets = row[-1]
            link = url_of(here, row[0])
            writer.writerow([*row[:-1], link, *(facets.get(c) for c in facet_columns)])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        if len(rows) < 1000:
            return
        after = rows[-1][0]
