"""Files grouped into ESGF datasets, over the facet index (no SQL).

Each published file gets a dataset code: files of a scheme with a dataset rule
(:data:`~.vocabulary.DATASET_FACETS`) share one when they share those facets' values; any other
file is a dataset of its own. Codes follow the name order of each dataset's first file, so a
page of datasets is a slice of codes. Built from the index's columns in a few vectorised passes
(about 0.2 s for a million files), then kept in the index's cache until the next change.

A dataset matches a constraint when one of its files does (its facets are the union of its
files'); it is left out by ``facet!=value`` when one of its files has that value, as a Solr
multi-valued field would be. ``latest``: the newest version among the datasets that share all
other dataset facets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ndnsci_catalog.bulk import NO_END, NO_START
from ndnsci_catalog.esgf.vocabulary import DATASET_FACETS, VERSION
from ndnsci_catalog.facetindex import Bools, Facet, FacetIndex, Ints

_CACHE_KEY = ("esgf", "datasets")
_MAX_KEY = 1 << 62


@dataclass
class Datasets:
    """The datasets of one index generation."""

    index: FacetIndex
    #: per file id: its dataset code; ``count`` for files that are not published
    code: Ints
    count: int
    #: per dataset: its first file in name order, its number of files, bytes, latest flag
    first: Ints
    files: Ints
    size: Ints
    latest: Bools
    _pairs: dict[str, tuple[Ints, Ints]] = field(default_factory=dict)

    # -- from files to datasets ---------------------------------------------------------------

    def having(self, files: Bools) -> Bools:
        """Per dataset: one of its files is in ``files``."""
        hit = np.zeros(self.count + 1, np.bool_)
        hit[self.code[files]] = True
        hit[self.count] = False
        return hit[: self.count]

    def lift(self, files: Bools) -> Bools:
        """Every published file of the datasets having a file in ``files``."""
        hit = np.zeros(self.count + 1, np.bool_)
        hit[: self.count] = self.having(files)
        return hit[self.code]

    def files_of(self, datasets: Ints) -> Ints:
        """The ids of the files of ``datasets`` (codes)."""
        wanted = np.zeros(self.count + 1, np.bool_)
        wanted[datasets] = True
        return np.flatnonzero(wanted[self.code])

    def latest_files(self) -> Bools:
        latest = np.zeros(self.count + 1, np.bool_)
        latest[: self.count] = self.latest
        return latest[self.code]

    # -- counts -------------------------------------------------------------------------------

    def pairs(self, facet: Facet) -> tuple[Ints, Ints]:
        """Every distinct (dataset, value code) of ``facet`` among the published files, as two
        arrays (kept with the datasets: a count is then a gather and a bincount)."""
        found = self._pairs.get(facet.key)
        if found is None:
            column = facet.column
            ids = np.flatnonzero(self.code < self.count)
            if np.all(column[ids] == column[self.first[self.code[ids]]]):  # one value each
                found = (np.arange(self.count), column[self.first].astype(np.int64))
            else:
                width = len(facet.values)
                unique = np.unique(self.code[ids] * width + column[ids].astype(np.int64))
                found = (unique // width, unique % width)
            self._pairs[facet.key] = found
        return found

    def value_counts(self, facet: Facet, datasets: Bools) -> Ints:
        """Per value code of ``facet``: how many of ``datasets`` (:meth:`having`) have it."""
        owner, value = self.pairs(facet)
        return np.bincount(value[datasets[owner]], minlength=len(facet.values))

    def scheme_counts(self, datasets: Bools) -> Ints:
        firsts = self.first[datasets]
        return np.bincount(self.index.scheme[firsts], minlength=len(self.index.schemes))

    # -- pages --------------------------------------------------------------------------------

    def values(self, datasets: Ints, facet: Facet, ids: Ints) -> list[list[str]]:
        """Per dataset of ``datasets``: the distinct values of ``facet`` among its files
        (``ids``: :meth:`files_of` ``datasets``)."""
        codes = facet.column[ids].astype(np.int64)
        keep = codes != 0
        width = len(facet.values)
        pairs = np.unique(self.code[ids][keep] * width + codes[keep])
        position = {int(d): i for i, d in enumerate(datasets)}
        found: list[list[str]] = [[] for _ in datasets]
        for pair in pairs.tolist():
            found[position[pair // width]].append(facet.values[pair % width])
        return found

    def time_span(self, datasets: Ints, ids: Ints) -> list[tuple[int | None, int | None]]:
        """Per dataset: the earliest start and the latest end of its files (time codes)."""
        codes = self.code[ids]
        starts = np.full(self.count, NO_START, np.int64)
        ends = np.full(self.count, NO_END, np.int64)
        np.minimum.at(starts, codes, self.index.start[ids])
        np.maximum.at(ends, codes, self.index.end[ids])
        return [
            (
                None if starts[d] == NO_START else int(starts[d]),
                None if ends[d] == NO_END else int(ends[d]),
            )
            for d in datasets.tolist()
        ]


def datasets_of(index: FacetIndex) -> Datasets:
    """The datasets of the index as it is now (call while reading it)."""
    cached = index.cache.get(_CACHE_KEY)
    if cached is None:
        cached = index.cache[_CACHE_KEY] = _group(index)
    assert isinstance(cached, Datasets)
    return cached


def _group(index: FacetIndex) -> Datasets:
    raw = np.full(index.capacity, -1, np.int64)
    groups = 0
    for scheme, rule in DATASET_FACETS.items():
        columns = _columns(index, scheme, rule.facets)
        if columns is None:
            continue
        ids, key = columns
        unique, inverse = np.unique(key, return_inverse=True)
        raw[ids] = groups + inverse
        groups += len(unique)
    singles = np.flatnonzero(index.alive & (raw < 0))
    raw[singles] = groups + np.arange(len(singles))
    count = groups + len(singles)
    code, first = _in_name_order(index, raw, count)
    published = np.flatnonzero(code < count)
    sizes = np.maximum(index.size[published], 0)
    return Datasets(
        index=index,
        code=code,
        count=count,
        first=first,
        files=np.bincount(code[published], minlength=count),
        size=np.bincount(code[published], weights=sizes, minlength=count).astype(np.int64),
        latest=_latest(index, first, count),
    )


def _columns(index: FacetIndex, scheme: str, keys: tuple[str, ...]) -> tuple[Ints, Ints] | None:
    """The published files of ``scheme`` having every one of ``keys``, and a key per file that
    is equal exactly when all their values are."""
    scheme_code = index.scheme_codes.get(scheme)
    facets = [index.facets.get(key) for key in keys]
    if scheme_code is None or any(f is None for f in facets):
        return None
    members = index.alive & (index.scheme == scheme_code)
    for facet in facets:
        assert facet is not None
        members &= facet.column != 0
    ids = np.flatnonzero(members)
    return ids, _combined(ids, [f.column for f in facets if f is not None])


def _combined(ids: Ints, columns: list[Any]) -> Ints:
    """One int64 per row, equal exactly when the rows' codes are (mixed radix; renumbered
    whenever the next column would overflow it)."""
    key = np.zeros(len(ids), np.int64)
    span = 1
    for column in columns:
        codes = column[ids].astype(np.int64)
        width = int(codes.max()) + 1 if len(codes) else 1
        if span * width >= _MAX_KEY:
            key = np.unique(key, return_inverse=True)[1].astype(np.int64)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * width + codes
        span *= width
    return key


def _in_name_order(index: FacetIndex, raw: Ints, count: int) -> tuple[Ints, Ints]:
    """Codes renumbered by the name order of each dataset's first file (unpublished files get
    ``count``), and that first file of each."""
    ranked = index.order
    in_order = raw[ranked]
    seen = in_order >= 0
    groups, position = np.unique(in_order[seen], return_index=True)
    # names waiting outside the order (a trickle of publishes) come after the ordered ones
    place = np.full(count, len(ranked), np.int64)
    place[groups] = position
    first = np.full(count, -1, np.int64)
    first[groups] = ranked[seen][position]
    loose = np.flatnonzero(raw >= 0)
    unplaced = first[raw[loose]] < 0
    first[raw[loose][unplaced]] = loose[unplaced]
    renumber = np.empty(count, np.int64)
    order = np.lexsort((np.arange(count), place))
    renumber[order] = np.arange(count)
    code = np.where(raw >= 0, renumber[np.maximum(raw, 0)], count)
    return code, first[order]


def _latest(index: FacetIndex, first: Ints, count: int) -> Bools:
    """Per dataset: no dataset with the same facets but the version has a newer version."""
    latest = np.ones(count, np.bool_)
    version = index.facets.get(VERSION)
    if version is None:
        return latest
    for scheme, rule in DATASET_FACETS.items():
        scheme_code = index.scheme_codes.get(scheme)
        facets = [index.facets.get(key) for key in rule.facets]
        if VERSION not in rule.facets or scheme_code is None or None in facets:
            continue
        # the datasets this rule formed, by their first file
        formed = index.scheme[first] == scheme_code
        for facet in facets:
            assert facet is not None
            formed &= facet.column[first] != 0
        mine = np.flatnonzero(formed)
        files = first[mine]
        masters = [index.facets[key].column for key in rule.master_facets]
        master = np.unique(_combined(files, masters), return_inverse=True)[1]
        rank = version.value_rank()[version.column[files]]
        newest = np.full(len(mine), -1, np.int64)
        np.maximum.at(newest, master, rank)
        latest[mine] = rank == newest[master]
    return latest
