"""intake-esm export: an esmcat JSON description and the CSV it points to."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from ndnsci.catalog.api.deps import errors
from ndnsci.catalog.database import SessionDep
from ndnsci.catalog.models import File
from ndnsci.catalog.query import valid_facets

router = APIRouter(tags=["export"])

FIXED_COLUMNS = ["name", "scheme", "filename", "size", "sha256", "time_start", "time_end", "site"]
# how intake-esm groups files of a scheme into datasets (variable key, dataset keys)
AGGREGATION = {
    "cmip5": (
        "variable",
        ["product", "institute", "model", "experiment", "frequency", "realm", "table", "ensemble"],
    ),
    "cmip6": (
        "variable_id",
        [
            "activity_id",
            "institution_id",
            "source_id",
            "experiment_id",
            "member_id",
            "table_id",
            "grid_label",
        ],
    ),
}
SchemeParam = Annotated[str | None, Query(max_length=64, pattern=r"^[a-z][a-z0-9_-]*$")]


def _columns(session: Session) -> list[str]:
    return FIXED_COLUMNS + [k for k in valid_facets(session) if k not in FIXED_COLUMNS]


@router.get("/export/intake-esm", operation_id="export_intake_esm", responses=errors(422))
def esmcat(request: Request, session: SessionDep, scheme: SchemeParam = None) -> dict[str, Any]:
    """An esm collection spec: ``intake.open_esm_datastore(url)`` opens the catalog."""
    csv_url = str(request.url_for("export_intake_esm_csv"))
    if scheme:
        csv_url += f"?scheme={scheme}"
    spec: dict[str, Any] = {
        "esmcat_version": "0.1.0",
        "id": f"ndnsci-{scheme or 'all'}",
        "description": "ndnsci catalog export; 'name' is the NDN name to fetch",
        "catalog_file": csv_url,
        "attributes": [{"column_name": c, "vocabulary": ""} for c in _columns(session)],
        "assets": {"column_name": "name", "format": "netcdf"},
    }
    if scheme in AGGREGATION:
        variable, groupby = AGGREGATION[scheme]
        spec["aggregation_control"] = {
            "variable_column_name": variable,
            "groupby_attrs": groupby,
            "aggregations": [
                {"type": "union", "attribute_name": variable},
                {
                    "type": "join_existing",
                    "attribute_name": "time_range",
                    "options": {"dim": "time", "coords": "minimal", "compat": "override"},
                },
            ],
        }
    return spec


@router.get(
    "/export/intake-esm.csv",
    operation_id="export_intake_esm_csv",
    name="export_intake_esm_csv",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}, **errors(422)},
)
def esmcat_csv(session: SessionDep, scheme: SchemeParam = None) -> StreamingResponse:
    """One row per file: fixed columns, then every facet."""
    return StreamingResponse(_rows(session, _columns(session), scheme), media_type="text/csv")


def _rows(session: Session, columns: list[str], scheme: str | None) -> Iterator[str]:
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
        for row in rows:
            facets = row[-1]
            writer.writerow([*row[:-1], *(facets.get(c) for c in columns[len(FIXED_COLUMNS) :])])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        if len(rows) < 1000:
            return
        after = rows[-1][0]
