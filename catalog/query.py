"""Search: facet filters, free text, name prefix, time overlap, sorting and facet counts.

Filters: values of one facet are ORed, facets are ANDed, ``facet!=value`` excludes.
Facet counts follow ESGF: the counts of facet F are computed with every filter applied except
F's own, so a user who picked ``model=A`` still sees how many files ``model=B`` would give under
the other filters (and the count of A itself). Facets nobody filtered share one count over the
full result set. When a facet's "other filters" are empty, its counts come from the maintained
``facet_values.count`` (an index read) instead of a scan.

Counting a filtered set reads the packed ``facet_ids`` of its files: cost is linear in the size
of the set (about 2 µs per file on SQLite), independent of the catalog size.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    and_,
    column,
    false,
    func,
    or_,
    select,
)
from sqlalchemy.orm import Session

from . import fulltext
from .errors import InvalidInputError, UnknownFacetError
from .ingest import chunks
from .models import CatalogState, FacetKey, FacetValue, File, FileFacet
from .records import RESERVED_KEYS, normalize_name, normalize_time

Sort = Literal[
    "name", "-name", "size", "-size", "time_start", "-time_start", "time_end", "-time_end",
    "published", "-published",
]  # fmt: skip
SORTS: tuple[str, ...] = Sort.__args__  # type: ignore[attr-defined]
MAX_LIMIT = 1000
MAX_VALUES_PER_FILTER = 100
_HIGHEST = "\U0010ffff"


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
    from ..translators import get_translator, list_schemes

    keys: set[str] = set()
    for scheme in list_schemes():
        try:
            keys.update(get_translator(scheme).facet_keys)
        except Exception:  # a broken plugin must not take search down
            continue
    return frozenset(keys)


def valid_facets(session: Session) -> list[str]:
    return sorted(scheme_facet_keys() | set(session.scalars(select(FacetKey.key))))


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
    bound = normalize_time(value, upper=upper)
    if bound is None:
        raise InvalidInputError(
            f"{label}={value!r} is not a date such as 1850, 1850-01 or 18500116"
        )
    return bound


class Search:
    """One search over one session: the SQL conditions and the three answers built from them."""

    def __init__(self, session: Session, params: SearchParams) -> None:
        self.session = session
        self.params = params
        self.dialect = session.get_bind().dialect.name
        self.value_ids = self._resolve_values()
        self.base = self._base_conditions()

    def _resolve_values(self) -> dict[tuple[str, str], int]:
        ids: dict[tuple[str, str], int] = {}
        for key, flt in self.params.filters.items():
            values = sorted({*flt.include, *flt.exclude})
            rows = self.session.execute(
                select(FacetValue.value, FacetValue.id).where(
                    FacetValue.key == key, FacetValue.value.in_(values)
                )
            )
            ids.update(((key, value), id_) for value, id_ in rows)
        return ids

    def _base_conditions(self) -> list[ColumnElement[bool]]:
        p = self.params
        conditions: list[ColumnElement[bool]] = []
        if p.q:
            try:
                matching = fulltext.matching_ids(self.dialect, p.q)
            except fulltext.QueryError as exc:
                raise InvalidInputError(str(exc)) from None
            conditions.append(File.id.in_(matching.columns(column("id", Integer))))
        if p.prefix:
            conditions.append(
                or_(
                    File.name == p.prefix,
                    and_(File.name > p.prefix + "/", File.name < p.prefix + "0"),
                )
            )
        if p.start:
            conditions.append(File.time_end >= p.start)
        if p.end:
            conditions.append(File.time_start <= p.end)
        if p.schemes:
            conditions.append(File.scheme.in_(p.schemes))
        return conditions

    def _facet_conditions(self, skip: str | None = None) -> list[ColumnElement[bool]]:
        conditions: list[ColumnElement[bool]] = []
        for key, flt in self.params.filters.items():
            if key == skip:
                continue
            if flt.include:
                conditions.append(self._in_values(key, flt.include))
            if flt.exclude:
                ids = self._ids(key, flt.exclude)
                if ids:
                    conditions.append(~File.id.in_(self._files_with(ids)))
        return conditions

    def _ids(self, key: str, values: list[str]) -> list[int]:
        return [self.value_ids[(key, v)] for v in values if (key, v) in self.value_ids]

    def _in_values(self, key: str, values: list[str]) -> ColumnElement[bool]:
        ids = self._ids(key, values)
        return File.id.in_(self._files_with(ids)) if ids else false()

    @staticmethod
    def _files_with(ids: list[int]) -> Select[Any]:
        return select(FileFacet.file_id).where(FileFacet.value_id.in_(ids))

    def conditions(self, skip: str | None = None) -> list[ColumnElement[bool]]:
        return [*self.base, *self._facet_conditions(skip)]

    # -- answers ----------------------------------------------------------------------------

    def total(self) -> int:
        conditions = self.conditions()
        if not conditions:
            return int(self.session.scalar(select(CatalogState.files)) or 0)
        single = self._single_include_filter()
        if single is not None:
            # one value per key and file: the files of distinct values are disjoint
            key, values = single
            ids = self._ids(key, values)
            if not ids:
                return 0
            total = self.session.scalar(
                select(func.sum(FacetValue.count)).where(FacetValue.id.in_(ids))
            )
            return int(total or 0)
        return int(self.session.scalar(select(func.count()).where(*conditions)) or 0)

    def _single_include_filter(self) -> tuple[str, list[str]] | None:
        if self.base or len(self.params.filters) != 1:
            return None
        ((key, flt),) = self.params.filters.items()
        return None if flt.exclude else (key, flt.include)

    def results(self) -> list[dict[str, Any]]:
        p = self.params
        order = _order(p.sort)
        rows = self.session.execute(
            select(
                File.name,
                File.filename,
                File.scheme,
                File.size,
                File.sha256,
                File.facets,
                File.time_start,
                File.time_end,
            )
            .where(*self.conditions())
            .order_by(*order)
            .limit(p.limit)
            .offset(p.offset)
        ).mappings()
        return [dict(row) for row in rows]

    def facet_counts(self) -> dict[str, dict[str, int]]:
        p = self.params
        keys = p.count_facets if p.count_facets is not None else self._present_keys()
        counts: dict[str, dict[str, int]] = {}
        shared = [k for k in keys if k not in p.filters]
        own = [k for k in keys if k in p.filters]
        if shared:
            counts.update(self._counts(shared, self.conditions()))
        for key in own:
            counts.update(self._counts([key], self.conditions(skip=key)))
        return {k: counts.get(k, {}) for k in keys}

    def _present_keys(self) -> list[str]:
        return sorted(self.session.scalars(select(FacetKey.key)))

    def _counts(
        self, keys: list[str], conditions: list[ColumnElement[bool]]
    ) -> dict[str, dict[str, int]]:
        if not conditions:
            return {k: self._stored_counts(k) for k in keys}
        counter: Counter[str] = Counter()
        rows = self.session.execute(select(File.facet_ids).where(*conditions))
        for (packed,) in rows:
            if packed:
                counter.update(packed.split(","))
        return self._top_values(keys, counter)

    def _stored_counts(self, key: str) -> dict[str, int]:
        rows = self.session.execute(
            select(FacetValue.value, FacetValue.count)
            .where(FacetValue.key == key, FacetValue.count > 0)
            .order_by(FacetValue.count.desc(), FacetValue.value)
            .limit(self.params.facet_limit)
        )
        return {value: count for value, count in rows}

    def _top_values(self, keys: list[str], counter: Counter[str]) -> dict[str, dict[str, int]]:
        wanted = set(keys)
        per_key: dict[str, list[tuple[str, int]]] = {k: [] for k in keys}
        ids = [int(i) for i in counter]
        for chunk in chunks(ids):
            rows = self.session.execute(
                select(FacetValue.id, FacetValue.key, FacetValue.value).where(
                    FacetValue.id.in_(chunk), FacetValue.key.in_(wanted)
                )
            )
            for id_, key, value in rows:
                per_key[key].append((value, counter[str(id_)]))
        return {
            k: dict(sorted(v, key=lambda item: (-item[1], item[0]))[: self.params.facet_limit])
            for k, v in per_key.items()
        }

    def names(self, page: int = 1000) -> Iterator[dict[str, Any]]:
        """Every matching file in name order, read in pages: bounded memory for manifests."""
        after = ""
        conditions = self.conditions()
        while True:
            rows = (
                self.session.execute(
                    select(File.name, File.filename, File.size, File.sha256)
                    .where(*conditions, File.name > after)
                    .order_by(File.name)
                    .limit(page)
                )
                .mappings()
                .all()
            )
            yield from (dict(r) for r in rows)
            if len(rows) < page:
                return
            after = rows[-1]["name"]


def _order(sort: str) -> list[Any]:
    descending = sort.startswith("-")
    key = sort.lstrip("-")
    col = {
        "name": File.name,
        "size": File.size,
        "time_start": File.time_start,
        "time_end": File.time_end,
        "published": File.seq,
    }[key]
    # NULLs last on both backends (SQLite and PostgreSQL disagree by default)
    primary = (col.desc() if descending else col.asc()).nulls_last()
    return [primary] if key == "name" else [primary, File.name]
