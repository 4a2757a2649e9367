"""An ESGF search run by the catalog's own search (:class:`~ndnsci_catalog.query.Search`).

Facet constraints become the catalog's facet filters (so counts are the ones ``/api/v1/search``
gives for the same filters); ``project``, ids, nodes, ``latest``, ``replica``, ``retracted``
and ``from``/``to`` become further masks over the facet index, each left out of its own counts
as ESGF does. A Dataset search lifts every mask to whole datasets (:mod:`.datasets`) and counts
datasets, not files.
"""

from __future__ import annotations

import fnmatch
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from ndnsci_catalog.bulk import load_json
from ndnsci_catalog.errors import CatalogError, UnknownFacetError
from ndnsci_catalog.esgf import docs
from ndnsci_catalog.esgf.datasets import Datasets, datasets_of
from ndnsci_catalog.esgf.request import (
    ID_KEYS,
    NODE_KEYS,
    PROJECT,
    STAR,
    Constraint,
    EsgfError,
    EsgfRequest,
)
from ndnsci_catalog.esgf.vocabulary import (
    STAR_FACETS,
    VERSION,
    ParsedId,
    catalog_key,
    catalog_values,
    esgf_value,
    node_part,
    parse_id,
    project,
)
from ndnsci_catalog.facetindex import Bools, FacetIndex, Ints, Stale
from ndnsci_catalog.models import File
from ndnsci_catalog.ordering import rows_by_id
from ndnsci_catalog.query import FacetFilter, Search, SearchParams, parse_params

#: searches that find the database ahead of the index sync run again, at most this often (as
#: /api/v1/search does)
ATTEMPTS = 3
#: values counted per facet (ESGF counts them all; a facet of file names would be endless)
FACET_LIMIT = 10_000
FILE_COLUMNS = ["id", "seq", "name", "filename", "scheme", "size", "sha256", "facets",
                "time_start", "time_end", "published_at"]  # fmt: skip
_PREFIX = "esgf:"  # keys of the masks that are not catalog facets (facet keys have no ':')


@dataclass
class Answer:
    total: int
    docs: list[dict[str, Any]]
    #: ESGF name -> [(value, count), ...] in value order
    facet_counts: dict[str, list[tuple[str, int]]]
    seconds: float


def run(session: Session, index: FacetIndex, request: EsgfRequest, site: docs.Site) -> Answer:
    """Answer ``request`` from the catalog; raises :class:`EsgfError` for what it refuses."""
    started = time.perf_counter()
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with index.reading():
                answer = _answer(session, index, request, site, strict=attempt < ATTEMPTS)
            answer.seconds = time.perf_counter() - started
            return answer
        except Stale as stale:
            session.rollback()  # end the read transaction: the next attempt sees the new rows
            if stale.rerank:
                index.rerank()
    raise AssertionError("unreachable: the last attempt does not raise Stale")


def counted_facets(request: EsgfRequest) -> list[str]:
    """The ESGF names whose counts the answer carries."""
    if request.facets is None:
        return []
    if STAR in request.facets:
        return list(dict.fromkeys([*STAR_FACETS, *(f for f in request.facets if f != STAR)]))
    return list(dict.fromkeys(request.facets))


def _answer(
    session: Session, index: FacetIndex, request: EsgfRequest, site: docs.Site, *, strict: bool
) -> Answer:
    names = counted_facets(request)
    params = _params(session, index, request, [catalog_key(n) for n in names if n != PROJECT])
    groups = datasets_of(index) if request.type == "Dataset" or request.latest is not None else None
    masks = _Masks(session, index, request, site, groups).build()
    try:
        found = EsgfSearch(
            session,
            params,
            index,
            extra=masks,
            groups=groups if request.type == "Dataset" else None,
            strict=strict,
        )
    except CatalogError as exc:  # the free text, the only thing the search itself refuses
        raise EsgfError("query", exc.message) from None
    if request.type == "File":
        total, page = found.total(), _file_docs(found, request, site)
    elif request.type == "Dataset":
        assert groups is not None
        total, page = _dataset_docs(found, groups, request, site)
    else:  # Aggregation: none here
        total, page = 0, []
    return Answer(total, page, _counts(found, names, groups), 0.0)


# --- constraints -----------------------------------------------------------------------------


def _params(
    session: Session, index: FacetIndex, request: EsgfRequest, counted: list[str]
) -> SearchParams:
    items: list[tuple[str, str]] = []
    for name, constraint in request.constraints.items():
        if name in ID_KEYS or name in NODE_KEYS or name == PROJECT:
            continue
        key = catalog_key(name)
        for value in _expanded(index, key, constraint.include):
            items.append((key, value))
        for value in _expanded(index, key, constraint.exclude):
            items.append((key + "!", value))
    try:
        return parse_params(
            session,
            items,
            q=request.query,
            start=request.start,
            end=request.end,
            limit=request.limit,
            offset=request.offset,
            sort="name",
            count_facets=counted,
            facet_limit=FACET_LIMIT,
        )
    except UnknownFacetError as exc:
        bad = next((n for n in request.constraints if catalog_key(n) in exc.message), None)
        raise EsgfError(bad or "facets", exc.message) from None
    except CatalogError as exc:
        raise EsgfError("query", exc.message) from None


def _expanded(index: FacetIndex, key: str, values: list[str]) -> list[str]:
    """Catalog values of ESGF values: versions in both spellings, wildcards expanded."""
    out: list[str] = []
    facet = index.facets.get(key)
    for value in values:
        for candidate in catalog_values(key, value):
            if ("*" in candidate or "?" in candidate) and facet is not None:
                out.extend(v for v in facet.values[1:] if fnmatch.fnmatchcase(v, candidate))
            else:
                out.append(candidate)
    return out or ([values[0]] if values else [])


class _Masks:
    """The masks of the constraints that are not catalog facets, by key."""

    def __init__(
        self,
        session: Session,
        index: FacetIndex,
        request: EsgfRequest,
        site: docs.Site,
        groups: Datasets | None,
    ) -> None:
        self.session = session
        self.index = index
        self.request = request
        self.site = site
        self.groups = groups
        self.none = np.zeros(index.capacity, np.bool_)

    def build(self) -> dict[str, tuple[Bools | None, Bools | None]]:
        """key -> (files to keep, files to leave out)."""
        request, index = self.request, self.index
        masks: dict[str, tuple[Bools | None, Bools | None]] = {}
        for name, constraint in request.constraints.items():
            if name == PROJECT:
                masks[_PREFIX + name] = self._pair(constraint, self._project)
            elif name in NODE_KEYS:
                masks[_PREFIX + name] = self._pair(constraint, self._node)
            elif name in ID_KEYS:
                masks[_PREFIX + name] = self._pair(constraint, functools.partial(self._ids, name))
        if request.latest is not None:
            assert self.groups is not None
            latest = self.groups.latest_files()
            masks[_PREFIX + "latest"] = (latest if request.latest else ~latest & index.alive, None)
        if request.replica or request.retracted or request.type == "Aggregation":
            masks[_PREFIX + "none"] = (self.none, None)  # no replicas, retractions leave
        if request.published_from or request.published_to:
            masks[_PREFIX + "from"] = (self._published(), None)
        return masks

    def _pair(
        self, constraint: Constraint, matching: Callable[[str], Bools]
    ) -> tuple[Bools | None, Bools | None]:
        include = _any(self.none, [matching(v) for v in constraint.include])
        exclude = _any(self.none, [matching(v) for v in constraint.exclude])
        return (include if constraint.include else None, exclude if constraint.exclude else None)

    def _project(self, value: str) -> Bools:
        codes = [
            code
            for scheme, code in self.index.scheme_codes.items()
            if value in (project(scheme), scheme)
        ]
        return np.isin(self.index.scheme, np.array(codes, np.uint8)) & self.index.alive

    def _node(self, value: str) -> Bools:
        return self.index.alive.copy() if value == self.site.node else self.none

    def _ids(self, name: str, value: str) -> Bools:
        instance, node = node_part(value)
        if node is not None and node != self.site.node:
            return self.none
        as_file = self.request.type != "Dataset" and name in ("id", "instance_id", "master_id")
        parsed = parse_id(instance, master=name in ("master_id", "drs_id"), file=as_file)
        if parsed is None:
            return self.none
        if parsed.name is not None:
            return self._named(parsed.name)
        mask = self._facets(parsed)
        if parsed.filename is not None:
            mask = self._with_filename(mask, parsed.filename)
        return mask

    def _facets(self, parsed: ParsedId) -> Bools:
        index = self.index
        code = index.scheme_codes.get(parsed.scheme or "")
        if code is None:
            return self.none
        mask = index.alive & (index.scheme == code)
        for key, value in parsed.facets:
            facet = index.facets.get(key)
            value_code = facet.codes.get(value) if facet is not None else None
            if facet is None or value_code is None:
                return self.none
            mask &= facet.column == value_code
        return np.asarray(mask)

    def _with_filename(self, mask: Bools, filename: str) -> Bools:
        ids = [int(i) for i in np.flatnonzero(mask)]
        rows = rows_by_id(self.session, ids, ["id", "filename"])
        keep = [r["id"] for r in rows if r["filename"] == filename]
        out = self.none.copy()
        out[np.array(keep, np.int64)] = True
        return out

    def _named(self, name: str) -> Bools:
        found = self.session.execute(select(File.id).where(File.name == name)).scalar()
        out = self.none.copy()
        if found is not None and found < self.index.capacity:
            out[found] = self.index.alive[found]
        return out

    def _published(self) -> Bools:
        """Files published between ``from`` and ``to`` (a scan of ``published_at``)."""
        request = self.request
        ids = self.session.execute(
            text("SELECT id FROM files WHERE published_at >= :low AND published_at <= :high"),
            {"low": request.published_from or "", "high": request.published_to or "~"},
        ).scalars()
        out = self.none.copy()
        found = np.fromiter(ids, np.int64)
        out[found[found < self.index.capacity]] = True
        return out & self.index.alive


def _any(empty: Bools, masks: list[Bools]) -> Bools:
    out = empty.copy()
    for mask in masks:
        out |= mask
    return out


class EsgfSearch(Search):
    """The catalog's search with ESGF's further masks; over datasets when ``groups`` is given."""

    def __init__(
        self,
        session: Session,
        params: SearchParams,
        index: FacetIndex,
        *,
        extra: dict[str, tuple[Bools | None, Bools | None]],
        groups: Datasets | None,
        strict: bool,
    ) -> None:
        self.groups = groups  # before Search builds its masks: they are lifted to datasets
        super().__init__(session, params, index, strict=strict)
        for key, (include, exclude) in extra.items():
            self.masks[key] = self._lifted(include, exclude)
        self.selection = self._combine(None)
        self.filtered = bool(self.masks) or self._has_base_conditions()

    def _lifted(self, include: Bools | None, exclude: Bools | None) -> Bools:
        alive = self.index.alive
        mask = alive.copy() if include is None else self._lift(include & alive)
        if exclude is not None:
            mask &= ~self._lift(exclude & alive)
        return mask

    def _lift(self, files: Bools) -> Bools:
        return files if self.groups is None else self.groups.lift(files)

    def _base_mask(self) -> Bools:
        if not self._has_base_conditions():  # every published file: nothing to lift
            return super()._base_mask()
        return self._lift(super()._base_mask())

    def _facet_mask(self, key: str, flt: FacetFilter) -> Bools:
        if self.groups is None:
            return super()._facet_mask(key, flt)
        include = super()._facet_mask(key, FacetFilter(include=flt.include))
        exclude = ~super()._facet_mask(key, FacetFilter(exclude=flt.exclude))
        return self._lifted(include if flt.include else None, exclude if flt.exclude else None)

    def without(self, key: str) -> Bools:
        """The selection with every constraint but ``key``'s (ESGF counts of ``key``)."""
        return self._combine(key) if key in self.masks else self.selection


# --- answers ---------------------------------------------------------------------------------


def _file_docs(found: EsgfSearch, request: EsgfRequest, site: docs.Site) -> list[dict[str, Any]]:
    ids = found.names.page(found.selection, "name", request.offset, request.limit)
    rows = found.names.rows(ids, FILE_COLUMNS)
    wanted = request.fields
    tracking = (
        _tracking_ids(found.session, [r["id"] for r in rows])
        if _wants(wanted, "tracking_id")
        else {}
    )
    latest = _latest_of(found.index, ids) if len(ids) and _wants(wanted, "latest") else {}
    page = []
    for row in rows:
        row["facets"] = load_json(row["facets"])
        doc = docs.file_doc(
            row, site, latest=latest.get(row["id"], True), tracking_id=tracking.get(row["id"])
        )
        page.append(docs.select_fields(doc, wanted))
    return page


def _wants(fields: frozenset[str] | None, name: str) -> bool:
    return fields is None or name in fields


def _latest_of(index: FacetIndex, ids: Ints) -> dict[int, bool]:
    groups = datasets_of(index)
    latest = groups.latest_files()
    return {int(i): bool(latest[i]) for i in ids}


def _tracking_ids(session: Session, ids: list[int]) -> dict[int, str]:
    """The ``tracking_id`` global attribute of files (from their extracted metadata)."""
    if not ids:
        return {}
    attribute = File.extra[("global_attributes", "tracking_id")].as_string()
    rows = session.execute(select(File.id, attribute).where(File.id.in_(ids))).all()
    return {int(i): str(t) for i, t in rows if t}


def _dataset_docs(
    found: EsgfSearch, groups: Datasets, request: EsgfRequest, site: docs.Site
) -> tuple[int, list[dict[str, Any]]]:
    matching = np.flatnonzero(groups.having(found.selection))  # codes are in name order
    page = matching[request.offset : request.offset + request.limit]
    if not len(page):
        return len(matching), []
    firsts = found.names.rows(groups.first[page], FILE_COLUMNS)
    by_id = {row["id"]: row for row in firsts}
    index = found.index
    members = groups.files_of(page)
    values = {key: groups.values(page, facet, members) for key, facet in index.facets.items()}
    spans = groups.time_span(page, members)
    out = []
    for position, code in enumerate(page.tolist()):
        row = by_id.get(int(groups.first[code]))
        if row is None:  # retracted since the index synced (only when not strict)
            continue
        row["facets"] = load_json(row["facets"])
        doc = docs.dataset_doc(
            row,
            site,
            files=int(groups.files[code]),
            size=int(groups.size[code]),
            latest=bool(groups.latest[code]),
            values={key: found_values[position] for key, found_values in values.items()},
            span=spans[position],
        )
        out.append(docs.select_fields(doc, request.fields))
    return len(matching), out


def _counts(
    found: EsgfSearch, names: list[str], groups: Datasets | None
) -> dict[str, list[tuple[str, int]]]:
    if not names:
        return {}
    index = found.index
    unfiltered = ("esgf-counts", tuple(names), groups is None)
    if not found.filtered and unfiltered in index.cache:  # the landing page: until a change
        return dict(index.cache[unfiltered])
    native = found.facet_counts() if groups is None else {}
    qualifying = _Qualifying(found, groups)
    counts: dict[str, list[tuple[str, int]]] = {}
    for name in names:
        if name == PROJECT:
            counts[name] = _project_counts(found, groups, qualifying)
            continue
        key = catalog_key(name)
        facet = index.facets.get(key)
        pairs: list[tuple[str, int]] = []
        if groups is None:
            pairs = list(native.get(key, {}).items())
        elif facet is not None:
            per_code = groups.value_counts(facet, qualifying(key))
            pairs = [(facet.values[c], int(per_code[c])) for c in np.flatnonzero(per_code[1:]) + 1]
        counts[name] = _esgf_values(key, pairs)
    if not found.filtered:
        index.cache[unfiltered] = counts
    return counts


class _Qualifying:
    """Per facet key, the datasets its counts are over (one computation per distinct mask)."""

    def __init__(self, found: EsgfSearch, groups: Datasets | None) -> None:
        self.found = found
        self.groups = groups
        self.known: dict[str, Bools] = {}

    def __call__(self, key: str) -> Bools:
        assert self.groups is not None
        mask_key = key if key in self.found.masks else ""
        datasets = self.known.get(mask_key)
        if datasets is None:
            datasets = self.known[mask_key] = self.groups.having(self.found.without(key))
        return datasets


def _project_counts(
    found: EsgfSearch, groups: Datasets | None, qualifying: _Qualifying
) -> list[tuple[str, int]]:
    index = found.index
    if groups is None:
        selection = found.without(_PREFIX + PROJECT)
        per_scheme = np.bincount(index.scheme[selection], minlength=len(index.schemes))
    else:
        per_scheme = groups.scheme_counts(qualifying(_PREFIX + PROJECT))
    pairs = [(project(index.schemes[c]), int(per_scheme[c])) for c in np.flatnonzero(per_scheme)]
    return sorted(pairs)


def _esgf_values(key: str, pairs: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Catalog (value, count) pairs as ESGF lists them: ESGF spellings, by value, at most
    :data:`FACET_LIMIT` (values that become one spelling are added up)."""
    if key != VERSION:  # the only facet ESGF spells otherwise
        return sorted(pair for pair in pairs if pair[1])[:FACET_LIMIT]
    merged: dict[str, int] = {}
    for value, count in pairs:
        if count:
            spelled = esgf_value(key, value)
            merged[spelled] = merged.get(spelled, 0) + count
    return sorted(merged.items())[:FACET_LIMIT]
