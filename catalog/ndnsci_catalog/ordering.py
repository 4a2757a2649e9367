"""Pages, name prefixes and facet counts over the facet index (helpers of :mod:`.query`).

The index holds no names: it holds each file's rank in name order. A page sorted by name is the
``offset + limit`` smallest ranks of the selection (``argpartition``, then a sort of those few);
a name prefix is a rank interval found by binary search, reading the name at a rank from the
database (about 20 primary-key reads per bound). Names published since the order was read wait
in ``index.pending`` with their names and are merged in by name.

Every row read from the database is checked against the index (same ``seq``): a mismatch means
the database moved on, and :class:`Stale` sends the search back to sync.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from ndnsci_catalog.bulk import NO_END, NO_START
from ndnsci_catalog.facetindex import Bools, FacetIndex, Ints, Stale, by_ids

#: beyond this many rows before the end of the page, merging pending names gives way to
#: re-reading the name order
MERGE_LIMIT = 5_000
#: selections at least this big are paged by walking the name order (no sort at all)
WALK_FROM = 4_096
WALK_CHUNK = 65_536
_BIG = np.iinfo(np.int64).max


def rows_by_id(session: Session, ids: list[int], columns: list[str]) -> list[dict[str, Any]]:
    """Rows of ``files`` by id, in the order of ``ids`` (missing ids are left out).

    ``columns`` are constants of the callers and must start with ``id``.
    """
    if not ids:
        return []
    sql = f"SELECT {', '.join(columns)} FROM files WHERE id"
    rows = by_ids(session.connection(), sql, ids)
    found = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    return [found[i] for i in ids if i in found]


class Names:
    """Name order and prefixes for one search, reading names from ``session``."""

    def __init__(self, session: Session, index: FacetIndex, *, strict: bool) -> None:
        self.session = session
        self.index = index
        self.strict = strict

    # -- rows checked against the index ------------------------------------------------------

    def rows(self, ids: Ints, columns: list[str]) -> list[dict[str, Any]]:
        """Rows by id; strict: all of them, as the index knows them (else :class:`Stale`)."""
        wanted = [int(i) for i in ids]
        rows = rows_by_id(self.session, wanted, columns)
        if self.strict and (
            len(rows) != len(wanted) or any(r["seq"] != self.index.row_seq[r["id"]] for r in rows)
        ):
            raise Stale("a file of the page changed since the index synced")
        return rows  # not strict: the rows as they are now (retracted ones left out)

    def _name_at(self, rank: int) -> str:
        file_id = int(self.index.order[rank])
        row = self.session.execute(
            text("SELECT name, seq FROM files WHERE id = :i"), {"i": file_id}
        ).first()
        if row is None or row[1] != self.index.row_seq[file_id]:
            if self.strict:
                raise Stale("a name of the order changed since the index synced")
            if row is None:  # retracted since: its neighbours decide (an empty name sorts first)
                return ""
        return str(row[0])

    # -- prefixes ----------------------------------------------------------------------------

    def _first_rank(self, bound: str) -> int:
        """The first rank whose name is ``>= bound``."""
        low, high = 0, len(self.index.order)
        while low < high:
            middle = (low + high) // 2
            if self._name_at(middle) < bound:
                low = middle + 1
            else:
                high = middle
        return low

    def prefix_mask(self, prefix: str) -> Bools:
        """Files named ``prefix`` or under ``prefix/`` (component-wise)."""
        index = self.index
        key = ("prefix", prefix)
        cached = index.cache.get(key)
        if cached is not None:
            return np.asarray(cached)
        mask = np.zeros(index.capacity, np.bool_)
        # '0' follows '/' in byte order: [prefix/, prefix0) is everything under prefix/
        low, high = self._first_rank(prefix + "/"), self._first_rank(prefix + "0")
        mask[index.order[low:high]] = True
        exact = self.session.execute(
            text("SELECT id FROM files WHERE name = :n"), {"n": prefix}
        ).scalar()
        if exact is not None and exact < index.capacity:
            mask[exact] = index.alive[exact]
        under = prefix + "/"
        for file_id, name in index.pending.items():
            if name == prefix or name.startswith(under):
                mask[file_id] = True
        index.cache[key] = mask
        return mask

    # -- pages -------------------------------------------------------------------------------

    def page(self, selection: Bools, sort: str, offset: int, limit: int) -> Ints:
        """The ids of one page of the ``selection`` mask in ``sort`` order."""
        end = offset + limit
        selected = np.flatnonzero(selection)
        if not limit or offset >= len(selected):
            return np.zeros(0, np.int64)
        rank = self.index.rank[selected]
        waiting = selected[rank < 0]
        if len(waiting) and (not sort.endswith("name") or end > MERGE_LIMIT):
            if self.strict:
                raise Stale("names wait outside the name order", rerank=True)
        elif len(waiting):
            return self._merged_page(selected, rank, sort, offset, end)
        elif sort.endswith("name") and len(selected) >= WALK_FROM:
            return self._walk(selection, sort.startswith("-"), end)[offset:end]
        keys = _sort_key(self.index, selected, sort)
        # ties (and 'name' itself) follow the name; unranked rows (non-strict only) go last
        ties = np.where(rank < 0, _BIG, rank)
        return selected[_smallest(keys, ties, end)][offset:end]

    def _walk(self, selection: Bools, descending: bool, end: int) -> Ints:
        """The first ``end`` selected ids in name order, walking the order a chunk at a time
        (a big selection fills a page within the first chunk)."""
        order, found, count = self.index.order, [], 0
        for start in range(0, len(order), WALK_CHUNK):
            if descending:
                chunk = order[max(0, len(order) - start - WALK_CHUNK) : len(order) - start][::-1]
            else:
                chunk = order[start : start + WALK_CHUNK]
            hits = chunk[selection[chunk]]
            found.append(hits)
            count += len(hits)
            if count >= end:
                break
        return np.concatenate(found)[:end] if found else np.zeros(0, np.int64)

    def _merged_page(self, selected: Ints, rank: Ints, sort: str, offset: int, end: int) -> Ints:
        descending = sort.startswith("-")
        ranked = selected[rank >= 0]
        keys = -self.index.rank[ranked] if descending else self.index.rank[ranked]
        top = ranked[_smallest(keys, keys, end)]
        names = {r["id"]: r["name"] for r in self.rows(top, ["id", "seq", "name"])}
        names.update((int(i), self.index.pending[int(i)]) for i in selected[rank < 0])
        ordered = sorted(names, key=names.__getitem__, reverse=descending)
        return np.array(ordered[offset:end], np.int64)


def _sort_key(index: FacetIndex, selected: Ints, sort: str) -> Ints:
    """The primary sort key of each selected row, ascending, NULLs largest (last)."""
    field = sort.lstrip("-")
    descending = sort.startswith("-")
    if field == "name":
        rank = index.rank[selected]
        return np.where(rank < 0, _BIG, -rank if descending else rank)
    values, null = {
        "size": (index.size[selected], index.size[selected] < 0),
        "time_start": (index.start[selected], index.start[selected] == NO_START),
        "time_end": (index.end[selected], index.end[selected] == NO_END),
        "published": (index.row_seq[selected], np.zeros(len(selected), np.bool_)),
    }[field]
    return np.where(null, _BIG, -values if descending else values)


def _smallest(keys: Ints, ties: Ints, count: int) -> Ints:
    """Positions of the ``count`` smallest (key, tie) pairs, in order."""
    if count < len(keys):
        threshold = np.partition(keys, count - 1)[count - 1]
        candidates = np.flatnonzero(keys <= threshold)
    else:
        candidates = np.arange(len(keys))
    ordered = candidates[np.lexsort((ties[candidates], keys[candidates]))]
    return ordered[:count]


class Counts:
    """Facet counts over one selection.

    A selection of more than half the catalog is counted through its complement (all files'
    counts, cached until the next change, minus the counts of the files left out): the cost is
    that of the smaller side.
    """

    def __init__(self, index: FacetIndex, selection: Bools, limit: int, filtered: bool) -> None:
        self.index = index
        self.limit = limit
        self.filtered = filtered
        self.selection = selection
        self._prepared = False
        self._ids = np.zeros(0, np.int64)
        self._complement = False
        self._schemes: set[int] = set()

    def _prepare(self) -> None:
        if self._prepared:
            return
        index = self.index
        if self.filtered:
            ids = np.flatnonzero(self.selection)
            if 2 * len(ids) > index.alive_count():
                ids, self._complement = np.flatnonzero(index.alive & ~self.selection), True
        else:
            ids, self._complement = np.zeros(0, np.int64), True
        self._ids = ids
        schemes = np.bincount(index.scheme[ids], minlength=len(index.schemes))
        if self._complement:
            schemes = self._full(index.scheme, len(index.schemes), "schemes") - schemes
        self._schemes = set(np.flatnonzero(schemes).tolist())
        self._prepared = True

    def _full(self, column: Any, size: int, key: str) -> Ints:
        """Counts of ``column`` over every published file (cached until the next change)."""
        cache_key = ("all", key)
        counts = self.index.cache.get(cache_key)
        if counts is None or len(counts) < size:
            counts = np.bincount(column[self.index.alive], minlength=size)
            self.index.cache[cache_key] = counts
        return np.asarray(counts[:size])

    def top(self, key: str) -> dict[str, int]:
        """At most ``limit`` values of ``key`` by count (then by value), with their counts."""
        facet = self.index.facets.get(key)
        if facet is None or not self.limit:
            return {}
        cache_key = ("top", key, self.limit)
        if not self.filtered and cache_key in self.index.cache:
            return dict(self.index.cache[cache_key])
        self._prepare()
        if facet.schemes.isdisjoint(self._schemes):
            return {}
        counts = np.bincount(facet.column[self._ids], minlength=len(facet.values))
        if self._complement:
            counts = self._full(facet.column, len(facet.values), key) - counts
        counts[0] = 0  # files without a value
        answer = _top_values(counts, facet.values, facet.value_rank, self.limit)
        if not self.filtered:
            self.index.cache[cache_key] = answer
        return answer


def _top_values(counts: Ints, values: list[str], value_rank: Any, limit: int) -> dict[str, int]:
    codes = np.flatnonzero(counts)
    if len(codes) > limit:
        ranked = counts[codes]
        threshold = np.partition(ranked, len(ranked) - limit)[len(ranked) - limit]
        codes = codes[ranked >= threshold]
    if len(codes) > 4 * limit + 64:  # many ties at the threshold: order by the values' ranks
        codes = codes[np.lexsort((value_rank()[codes], -counts[codes]))][:limit]
        return {values[c]: int(counts[c]) for c in codes}
    items = sorted(((values[c], int(counts[c])) for c in codes), key=lambda i: (-i[1], i[0]))
    return dict(items[:limit])
