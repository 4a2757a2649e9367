"""One file's record, retraction, and manifests of many files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from typing import Any
from urllib.parse import parse_qsl

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from ndnsci_catalog.api.deps import TokenDep, errors
from ndnsci_catalog.api.routes.esgf import site
from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.errors import CatalogError, InvalidInputError, NotFoundError
from ndnsci_catalog.esgf.docs import Site
from ndnsci_catalog.facetindex import FacetIndex, Ints
from ndnsci_catalog.ingest import chunks, retract
from ndnsci_catalog.models import File, FileHistory, table
from ndnsci_catalog.query import (
    Search,
    SearchParams,
    manifest_rows,
    normalize_prefix,
    on_index,
    parse_params,
    time_bound,
)
from ndnsci_catalog.records import RecordError, normalize_name
from ndnsci_catalog.schemas import FileRecord, ManifestRequest, RetractResponse
from ndnsci_catalog.transfers import replicas
from ndnsci_translators.names import split_name

router = APIRouter(tags=["files"])


def _name(path: str) -> str:
    """The canonical name from the URL path (clients percent-encode the NDN URI once)."""
    try:
        return normalize_name("/" + path.lstrip("/"))
    except RecordError as exc:
        raise CatalogError(exc.message) from None


@router.get(
    "/files/{name:path}",
    operation_id="get_file",
    response_model=FileRecord,
    responses=errors(400, 404, 422),
)
def get_file(name: str, session: SessionDep, request: Request) -> FileRecord:
    """The full record: facets, corrections applied by the translator, extracted metadata, and
    where to read the file besides NDN (``urls``: HTTP, and XRootD for CMS files)."""
    canonical = _name(name)
    row = session.execute(select(table(File)).where(File.name == canonical)).mappings().first()
    if row is None:
        raise NotFoundError(f"no file named {canonical!r}")
    history = session.execute(
        select(FileHistory.version, FileHistory.seq, FileHistory.replaced_at, FileHistory.record)
        .where(FileHistory.name == canonical)
        .order_by(FileHistory.seq.desc())
        .limit(100)
    ).all()
    return FileRecord.model_validate(
        {
            **row,
            "history": [
                {
                    "version": version,
                    "seq": seq,
                    "replaced_at": at,
                    "size": record.get("size"),
                    "sha256": record.get("sha256"),
                }
                for version, seq, at, record in history
            ],
            "urls": _urls(site(request), canonical),
            "replicas": replicas(session, canonical),
        }
    )


def _urls(here: Site, name: str) -> dict[str, str]:
    urls = {"http": here.data_url(name)}
    xrootd = here.xrootd_url(name)
    if xrootd is not None:
        urls["xrootd"] = xrootd
    return urls


@router.delete(
    "/files/{name:path}",
    operation_id="retract_file",
    response_model=RetractResponse,
    responses=errors(400, 401, 404, 409, 422),
)
def retract_file(name: str, session: SessionDep, _token: TokenDep) -> RetractResponse:
    """Retract a file: it leaves search results; its last version stays in the history."""
    canonical = _name(name)
    seq = retract(session, canonical)
    if seq is None:
        raise NotFoundError(f"no file named {canonical!r}")
    session.commit()
    return RetractResponse(name=canonical, seq=seq)


@router.post(
    "/manifests",
    operation_id="create_manifest",
    responses={
        200: {
            "description": "one JSON object per line: name, size, sha256, filename, path",
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        },
        **errors(400, 422),
    },
    response_class=StreamingResponse,
)
def create_manifest(
    body: ManifestRequest, session: SessionDep, request: Request
) -> StreamingResponse:
    """A JSON-lines manifest for bulk download; ``path`` is the relative DRS path of the file."""
    if body.search is not None:
        state = request.app.state
        lines = _search_lines(session, state.index, body.search, state.settings.read_wait_seconds)
    else:
        names = body.names or []
        most = request.app.state.settings.max_manifest_names
        if len(names) > most:
            raise InvalidInputError(
                f"{len(names)} names in one manifest request; at most {most} (GET /limits)"
            )
        lines = _name_lines(session, names)
    return StreamingResponse(_pieces(lines), media_type="application/x-ndjson")


def _pieces(lines: Iterator[str], size: int = 1000) -> Iterator[str]:
    """Lines joined ``size`` at a time: a streamed response takes a worker thread for each
    piece it pulls from a plain iterator, and one per line cost 170 us a line."""
    while piece := "".join(islice(lines, size)):
        yield piece


def _search_lines(
    session: Session, index: FacetIndex, query: str, wait: float | None
) -> Iterator[str]:
    return (_line(row) for row in search_rows(session, index, query, wait))


def search_rows(
    session: Session, index: FacetIndex, query: str, wait: float | None
) -> Iterator[dict[str, Any]]:
    """Name, filename, size and sha256 of every file a /search query string matches, in the
    search's order; a bad query raises before the first row."""
    items = parse_qsl(query, keep_blank_values=False)
    typed = dict(items)
    params = parse_params(
        session,
        items,
        q=typed.get("q") or None,
        prefix=normalize_prefix(typed["prefix"]) if typed.get("prefix") else None,
        start=time_bound(typed.get("start"), upper=False, label="start"),
        end=time_bound(typed.get("end"), upper=True, label="end"),
        schemes=[v for k, v in items if k == "scheme"],
    )
    # errors surface here, before the 200 starts streaming; the ids are taken in one go (a few
    # MB for a million files) and the rows read page by page while streaming
    ids = _matching_ids(index, session, params, wait)
    return manifest_rows(session, ids)


def _matching_ids(
    index: FacetIndex, session: Session, params: SearchParams, wait: float | None
) -> Ints:
    def work(strict: bool) -> Ints:
        found = Search(session, params, index, strict=strict)
        if strict:
            return found.ordered_ids()
        # still moving: the order as it is (unranked names last)
        selected = np.flatnonzero(found.selection)
        rank = np.where(index.rank[selected] < 0, len(index.rank), index.rank[selected])
        return selected[np.argsort(rank, kind="stable")]

    return on_index(index, session, work, wait)


def _name_lines(session: Session, names: list[str]) -> Iterator[str]:
    for row in name_rows(session, names):
        yield json.dumps(row) + "\n" if "error" in row else _line(row)


def name_rows(session: Session, names: list[str]) -> Iterator[dict[str, Any]]:
    """For each of ``names`` in order: its name, filename, size and sha256, or its name and an
    ``error`` (``invalid NDN name``, ``not found``)."""
    canonical: list[str | None] = []
    for name in names:
        try:
            canonical.append(normalize_name(name))
        except RecordError:
            canonical.append(None)
    for chunk in chunks(list(zip(names, canonical, strict=True))):
        wanted = [c for _, c in chunk if c is not None]
        found = {
            row["name"]: dict(row)
            for row in session.execute(
                select(File.name, File.filename, File.size, File.sha256).where(
                    File.name.in_(wanted)
                )
            ).mappings()
        }
        for given, name in chunk:
            if name is None:
                yield {"name": given, "error": "invalid NDN name"}
            elif name not in found:
                yield {"name": name, "error": "not found"}
            else:
                yield found[name]


def drs_path(name: str) -> str:
    """A file's relative DRS path: its name's components joined by ``/`` (they were checked at
    publish: no '', '.', '..' or separators, so the path stays below where it is put)."""
    return "/".join(split_name(name))


def _line(row: dict[str, Any]) -> str:
    return json.dumps({**row, "path": drs_path(row["name"])}) + "\n"
