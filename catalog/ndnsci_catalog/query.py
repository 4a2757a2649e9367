"""Search: facet filters, free text, name prefix, time overlap, sorting and facet counts.

Filters: values of one facet are ORed, facets are ANDed, ``facet!=value`` excludes.
Facet counts follow ESGF: the counts of facet F are computed with every filter applied except
F's own, so a user who picked ``model=A`` still sees how many files ``model=B`` would give under
the other filters (and the count of A itself). Facets nobody filtered share one count over the
full result set.

Every filter is a boolean mask over the in-memory facet index (:mod:`ndnsci_catalog.facetindex`)
and counts are ``bincount`` over the selection: a few milliseconds per facet for a million
files. The database answers what only it can (free-text matches, the names around a prefix
boundary) and supplies the page of records, which is checked against the index: a record that
changed since the index last synced raises :class:`~ndnsci_catalog.facetindex.Stale` and the
caller syncs and searches again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from ndnsci_catalog import fulltext, ordering
from ndnsci_catalog.bulk import load_json, time_code
from ndnsci_catalog.errors import InvalidInputError, UnknownFacetError
from ndnsci_catalog.facetindex import Bools, FacetIndex, Ints, Stale
from ndnsci_catalog.models import FacetKey
from ndnsci_catalog.records import RESERVED_KEYS, SITE_FACET, normalize_name, parse_time

Sort = Literal[
    "name", "-name", "size", "-size", "time_start", "-time_start", "time_end", "-time_end",
    "published", "-published",
]  # fmt: skip
SORTS: tuple[str, ...] = Sort.__args__  # type: ignore[attr-defined]
MAX_LIMIT = 1000
MAX_VALUES_PER_FILTER = 100
#: answers that find the database ahead of the index sync and run again, at most this often
ATTEMPTS = 3
T = TypeVar("T")
#: page columns, as the API returns them
SUMMARY = ("name", "filename", "original", "scheme", "size", "sha256", "facets", "time_start",
           "time_end", "site")  # fmt: skip


@dataclass(slots=True)
class FacetFilter:
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SearchParams:
    filters: dict[str, FacetFilter] = field(default_factory=dict)
    q: str | None = None
    prefix: str | None = None
    start: str | None = None
    end: str | None = None
    schemes: list[str] = field(default_factory=list)
    limit: int = 50
    offset: int = 0
    sort: str = "name"
    count_facets: list[str] | None = None  # None: every facet
    facet_limit: int = 100


@functools.cache
def scheme_facet_keys() -> frozenset[str]:
    """Facet keys every registered naming scheme declares (valid even before any publish)."""
    from ndnsci_translators import get_translator, list_schemes

    keys: set[str] = set()
    for scheme in list_schemes():
        try:
            keys.update(get_translator(scheme).facet_keys)
        except Exception:  # a broken plugin must not take search down
            continue
    return frozenset(keys)


def valid_facets(session: Session) -> list[str]:
    """The schemes' keys, the keys ever published and ``site`` (the origin, set by the catalog)."""
    keys = scheme_facet_keys() | set(session.scalars(select(FacetKey.key)))
    return sorted(keys | {SITE_FACET})


def parse_params(session: Session, items: Sequence[tuple[str, str]], **fixed: Any) -> SearchParams:
    """Facet filters from the query string's extra items; ``fixed`` are the typed parameters."""
    params = SearchParams(**fixed)
    valid: list[str] | None = None
    for raw_key, value in items:
        if "\x00" in raw_key or "\x00" in value:
            raise InvalidInputError(f"parameter {raw_key!r} contains a NUL character")
        negate = raw_key.endswith("!")
        key = raw_key[:-1] if negate else raw_key
        if not negate and key in RESERVED_KEYS:
            continue  # typed parameters, already validated by the framework
        if valid is None:
            valid = valid_facets(session)
        if key not in valid:
            raise UnknownFacetError(raw_key, valid)
        flt = params.filters.setdefault(key, FacetFilter())
        (flt.exclude if negate else flt.include).append(value)
        if len(flt.include) + len(flt.exclude) > MAX_VALUES_PER_FILTER:
            raise InvalidInputError(f"more than {MAX_VALUES_PER_FILTER} values for facet {key!r}")
    if params.count_facets is not None:
        valid = valid if valid is not None else valid_facets(session)
        for key in params.count_facets:
            if key not in valid:
                raise UnknownFacetError(key, valid)
    return params


def normalize_prefix(prefix: str) -> str:
    """An NDN name prefix, compared component-wise (``/CMIP5/output1`` is not ``/CMIP5/out``)."""
    stripped = prefix.rstrip("/")
    if not stripped:
        return ""
    try:
        return normalize_name(stripped) if stripped.count("/") > 1 else _root(stripped)
    except ValueError as exc:
        raise InvalidInputError(f"prefix: {exc}") from None


def _root(prefix: str) -> str:
    if not prefix.startswith("/") or any(c in prefix for c in "\\\x00"):
        raise InvalidInputError(f"prefix must be an NDN name starting with '/', got {prefix!r}")
    return prefix


def time_bound(value: str | None, *, upper: bool, label: str) -> str | None:
    if value is None:
        return None
    try:
        return parse_time(value, upper=upper)
    except ValueError as exc:
        raise InvalidInputError(f"{label}: {exc}") from None


class Search:
    """One search: masks over the facet index, then the three answers built from them.

    ``strict``: raise :class:`Stale` when the database disagrees with the index (the caller
    syncs and retries); the last attempt passes False and answers with what it can read.
    """

    def __init__(
        self, session: Session, params: SearchParams, index: FacetIndex, *, strict: bool = True
    ) -> None:
        self.session = session
        self.params = params
        self.index = index
        self.strict = strict
        self.names = ordering.Names(session, index, strict=strict)
        self.base = self._base_mask()
        self.masks = {key: self._facet_mask(key, flt) for key, flt in params.filters.items()}
        self.selection = self._combine(None)
        self.filtered = bool(self.masks) or self._has_base_conditions()

    # -- masks ------------------------------------------------------------------------------

    def _has_base_conditions(self) -> bool:
        p = self.params
        return bool(p.q or p.prefix or p.start or p.end or p.schemes)

    def _base_mask(self) -> Bools:
        p, index = self.params, self.index
        mask = index.alive.copy()
        if p.q:
            mask &= self._text_mask(p.q)
        if p.prefix:
            mask &= self.names.prefix_mask(p.prefix)
        if p.start:
            mask &= index.end >= time_code(p.start)
        if p.end:
            mask &= index.start <= time_code(p.end)
        if p.schemes:
            codes = [index.scheme_codes[s] for s in p.schemes if s in index.scheme_codes]
            mask &= np.isin(index.scheme, np.array(codes, np.uint8))
        return mask

    def _text_mask(self, q: str) -> Bools:
        connection = self.session.connection()
        try:
            sql, param = fulltext.matching_list_sql(connection.dialect.name, q)
        except fulltext.QueryError as exc:
            raise InvalidInputError(str(exc)) from None
        driver: Any = connection.connection.driver_connection
        cursor = driver.cursor()
        try:  # through the driver, one string: a common word matches a fifth of the catalog
            cursor.execute(sql, (param,))
            joined = cursor.fetchone()[0]
        finally:
            cursor.close()
        ids = np.fromstring(joined, np.int64, sep=" ") if joined else np.zeros(0, np.int64)
        mask = np.zeros(self.index.capacity, np.bool_)
        mask[ids[ids < self.index.capacity]] = True
        return mask

    def _facet_mask(self, key: str, flt: FacetFilter) -> Bools:
        facet = self.index.facets.get(key)
        capacity = self.index.capacity
        if facet is None:  # a valid key nobody published yet: no file has a value
            return np.full(capacity, not flt.include, np.bool_)
        mask = np.ones(capacity, np.bool_)
        if flt.include:
            mask = _matches(facet.column, [facet.codes.get(v, 0) for v in flt.include])
        if flt.exclude:
            mask &= ~_matches(facet.column, [facet.codes.get(v, 0) for v in flt.exclude])
        return mask

    def _combine(self, skip: str | None) -> Bools:
        mask = self.base.copy()
        for key, facet_mask in self.masks.items():
            if key != skip:
                mask &= facet_mask
        return mask

    # -- answers ----------------------------------------------------------------------------

    def total(self) -> int:
        return int(np.count_nonzero(self.selection))

    def results(self) -> list[dict[str, Any]]:
        p = self.params
        ids = self.names.page(self.selection, p.sort, p.offset, p.limit)
        rows = self.names.rows(ids, ["id", "seq", *SUMMARY])
        results = []
        for row in rows:
            record = {key: row[key] for key in SUMMARY}
            record["facets"] = load_json(record["facets"])
            results.append(record)
        return results

    def facet_counts(self) -> dict[str, dict[str, int]]:
        p = self.params
        keys = p.count_facets if p.count_facets is not None else sorted(self.index.facets)
        shared = ordering.Counts(self.index, self.selection, p.facet_limit, self.filtered)
        counts: dict[str, dict[str, int]] = {}
        for key in keys:
            if key in self.masks:
                others = self.filtered and (self._has_base_conditions() or len(self.masks) > 1)
                own = ordering.Counts(self.index, self._combine(key), p.facet_limit, others)
                counts[key] = own.top(key)
            else:
                counts[key] = shared.top(key)
        return counts

    def ordered_ids(self) -> Ints:
        """Every matching id in name order (for manifests: read in pages afterwards)."""
        selected = np.flatnonzero(self.selection)
        if np.any(self.index.rank[selected] < 0):
            raise Stale("names wait outside the name order", rerank=True)
        return selected[np.argsort(self.index.rank[selected], kind="stable")]


def on_index(
    index: FacetIndex, session: Session, work: Callable[[bool], T], wait: float | None = None
) -> T:
    """``work(strict)`` on the shared index synced to the database, again after a sync when
    the database moved meanwhile (:class:`Stale`); the last attempt is not strict and answers
    with what it reads.

    The session's connection asks whether the index is behind (one short query, no lock); only
    then is the connection given back (rollback) while the index syncs, waiting at most ``wait``
    seconds for another sync (IndexBusy): a request never waits for the index holding a
    connection, and takes its connection before it shares the index.
    """
    for attempt in range(1, ATTEMPTS + 1):
        if _index_behind(index, session):
            session.rollback()
            index.sync(wait)
            session.connection()
        try:
            with index.lock.read():
                return work(attempt < ATTEMPTS)
        except Stale as stale:
            session.rollback()  # end the read transaction: the next attempt sees the new rows
            if stale.rerank:
                index.rerank(wait)
    raise AssertionError("unreachable: the last attempt does not raise Stale")


def _index_behind(index: FacetIndex, session: Session) -> bool:
    statement = "SELECT last_seq FROM catalog_state WHERE id = 1"
    return int(session.connection().exec_driver_sql(statement).scalar_one()) != index.seq


def _matches(column: Any, codes: list[int]) -> Bools:
    """Rows whose code is one of ``codes`` (0, an unknown value, matches nothing)."""
    wanted = sorted({c for c in codes if c})
    if not wanted:
        return np.zeros(len(column), np.bool_)
    if len(wanted) == 1:
        return np.asarray(column == wanted[0])
    table = np.zeros(int(max(wanted)) + 1, np.bool_)
    table[wanted] = True
    inside = column <= wanted[-1]
    mask = np.zeros(len(column), np.bool_)
    mask[inside] = table[column[inside]]
    return mask


def manifest_rows(session: Session, ids: Ints, page: int = 1000) -> Iterator[dict[str, Any]]:
    """Name, filename, size and sha256 of ``ids``, in their order, read a page at a time."""
    for start in range(0, len(ids), page):
        chunk = [int(i) for i in ids[start : start + page]]
        rows = ordering.rows_by_id(session, chunk, ["id", "name", "filename", "size", "sha256"])
        for row in rows:
            yield {k: row[k] for k in ("name", "filename", "size", "sha256")}
