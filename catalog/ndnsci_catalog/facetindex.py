"""The in-memory facet index: filters and facet counts without SQL.

Counting facets through SQL costs about 2 µs per matching row, so a filter matching a fifth of
a million files cannot be counted in 100 ms. Each server process therefore keeps the columns a
search needs in numpy arrays indexed by file id (ids are dense: allocated by counting up):

- per facet key, the local code of each file's value (0: none), uint8/uint16/int32 as the number
  of values requires; a filter is a boolean mask (``column == code``), and the counts of a facet
  over a selection are ``np.bincount(column[selection])``;
- ``alive``, ``scheme`` codes, ``size``, ``seq`` and the time coverage as sortable integers
  (``YYYYMMDDhhmmss``, calendar-agnostic like the ISO text they come from);
- ``order``/``rank``: the ids sorted by name and each id's position, so the first page sorted
  by name is a walk along ``order`` (or an ``argpartition`` of a small selection's ranks), and
  a name prefix is a rank interval.

The database is the truth; the index follows it. Each use first reads
``catalog_state.last_seq``; when it moved, the rows named by the change feed since the index's
sequence number are re-read and applied (re-reading the current row is idempotent, so a change
seen twice is harmless), or the index is rebuilt when the delta is large. New names are kept
apart (``pending``, with their names) until enough accumulate to re-read the name order, so a
trickle of publishes does not cost a full re-sort each. Answers are checked against the rows
read from the database (:class:`Stale`), and a search that finds the index behind syncs and
runs again.

Readers share the index; a sync reads the database first, gives its connection back, and only
then takes the index exclusively (:class:`RWLock`) to change the arrays: nobody waits for a lock
while holding a connection, and nobody waits for a connection while holding a lock that others
wait for. The source is a connection of the index's own (the server gives it an engine of one
connection): a sync never competes with the requests for their pool. Syncs take turns
(``sync(timeout=...)`` gives up with :class:`IndexBusy`); a request asks whether the index is
behind on its own connection and gives that back before it waits for a sync
(:func:`ndnsci_catalog.query.on_index`). Design and figures: docs/catalog.md.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, Engine

from ndnsci_catalog.bulk import HEAD, NO_END, NO_SIZE, NO_START

log = logging.getLogger(__name__)

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Column = npt.NDArray[Any]  # uint8, uint16 or int32 codes

#: rebuild instead of applying a delta larger than this (or than a quarter of the catalog)
REBUILD_CHANGES = 200_000
#: re-read the name order once this many names wait outside it
RERANK_PENDING = 2_000
VALUES = "SELECT id, key, value FROM facet_values"

Source = Callable[[], AbstractContextManager[Connection]]


class IndexBusy(Exception):
    """Another sync ran longer than the caller would wait (the server answers 503)."""


class Stale(Exception):
    """The database moved past the index during a search: sync and run it again.

    ``rerank``: the answer needs every name in the name order (re-read it first).
    """

    def __init__(self, message: str, *, rerank: bool = False) -> None:
        super().__init__(message)
        self.rerank = rerank


def engine_source(engine: Engine) -> Source:
    """Fresh snapshots from ``engine`` (REPEATABLE READ on PostgreSQL: one consistent view)."""

    @contextmanager
    def connect() -> Iterator[Connection]:
        with engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                # set on this checkout only: the pool resets it when the connection returns
                connection.execution_options(isolation_level="REPEATABLE READ")
            try:
                yield connection
            finally:
                connection.rollback()

    return connect


class RWLock:
    """Many readers or one writer; a waiting writer goes before new readers."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._waiting = 0

    @contextmanager
    def read(self) -> Iterator[None]:
        with self._cond:
            while self._writer or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


@dataclass
class Facet:
    """One facet key: its values (code 0 is 'no value') and the column of codes."""

    key: str
    number: int
    values: list[str] = field(default_factory=lambda: [""])
    codes: dict[str, int] = field(default_factory=dict)
    column: Column = field(default_factory=lambda: np.zeros(0, np.uint8))
    #: scheme codes having a value of this facet (a superset: never shrinks)
    schemes: set[int] = field(default_factory=set)
    _value_rank: Ints | None = None

    def add(self, value: str) -> int:
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.values)
            self.values.append(value)
            self._value_rank = None
        return code

    def fit(self, capacity: int) -> None:
        """Make the column ``capacity`` long and wide enough for every code."""
        dtype: type[np.integer[Any]] = np.uint8 if len(self.values) < 256 else np.uint16
        if len(self.values) >= 65_536:
            dtype = np.int32
        if len(self.column) != capacity or self.column.dtype != dtype:
            column = np.zeros(capacity, dtype)
            n = min(capacity, len(self.column))
            column[:n] = self.column[:n]
            self.column = column

    def value_rank(self) -> Ints:
        """Each code's position in value order (ties of counts are listed by value)."""
        if self._value_rank is None or len(self._value_rank) != len(self.values):
            order = sorted(range(len(self.values)), key=self.values.__getitem__)
            rank = np.empty(len(self.values), np.int64)
            rank[order] = np.arange(len(self.values))
            self._value_rank = rank
        return self._value_rank


@dataclass
class Rows:
    """Rows read from ``files`` (ids ascending), ``packed`` decoded into arrays."""

    ids: Ints
    seq: Ints
    schemes: list[str]
    size: Ints
    start: Ints
    end: Ints
    #: facet value ids of all rows, and the row (position in ``ids``) of each
    values: Ints
    value_rows: Ints
    names: list[str] | None = None


class FacetIndex:
    """The index of one catalog database in one process (see the module docstring)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.lock = RWLock()
        self._sync_lock = threading.Lock()
        self.generation = 0  # bumped by every change: keys the caches of derived answers
        self._reset()

    def _reset(self) -> None:
        self.seq = -1
        self.capacity = 0
        self.alive: Bools = np.zeros(0, np.bool_)
        self.scheme: npt.NDArray[np.uint8] = np.zeros(0, np.uint8)
        self.size: Ints = np.zeros(0, np.int64)
        self.row_seq: Ints = np.zeros(0, np.int64)
        self.start: Ints = np.zeros(0, np.int64)
        self.end: Ints = np.zeros(0, np.int64)
        self.rank: Ints = np.zeros(0, np.int64)
        self.order: Ints = np.zeros(0, np.int64)
        self.pending: dict[int, str] = {}
        self.schemes: list[str] = [""]
        self.scheme_codes: dict[str, int] = {}
        self.facets: dict[str, Facet] = {}
        self.facet_list: list[Facet] = []
        # by facet_values.id: the facet's number (-1: unknown id) and the value's code in it
        self.value_key: npt.NDArray[np.int32] = np.full(0, -1, np.int32)
        self.value_code: npt.NDArray[np.int32] = np.zeros(0, np.int32)
        self.cache: dict[Any, Any] = {}
        self.load_seconds = 0.0

    # -- using the index ---------------------------------------------------------------------

    @contextmanager
    def reading(self, timeout: float | None = None) -> Iterator[FacetIndex]:
        """Bring the index up to date with the database, then share it for one answer.

        Enter it holding no connection of the requests' pool (see the module docstring).
        """
        self.sync(timeout)
        with self.lock.read():
            yield self

    def sync(self, timeout: float | None = None) -> None:
        """Apply what changed in the database since the index last looked.

        Everything is read from the database first; searches are held back only while the
        arrays change in memory (a rebuild is loaded aside and swapped in). Waits at most
        ``timeout`` seconds for another sync to finish (:class:`IndexBusy`).
        """
        with self._turn(timeout):
            update = self._read_update()
            if update is not None:
                with self.lock.write():
                    self._apply_update(update)

    def rerank(self, timeout: float | None = None) -> None:
        """Read the name order now (before answers that need every name ranked)."""
        with self._turn(timeout):
            with self.source() as connection:
                order = _read_order(connection)
            with self.lock.write():
                self._set_order(order)
                self._changed()

    @contextmanager
    def _turn(self, timeout: float | None) -> Iterator[None]:
        if not self._sync_lock.acquire(timeout=-1 if timeout is None else timeout):
            raise IndexBusy(f"the facet index is being updated (waited {timeout} s)")
        try:
            yield
        finally:
            self._sync_lock.release()

    def _read_update(self) -> Update | None:
        """What the database holds beyond the index, read in one snapshot (None: nothing).

        Only the sync in turn runs this, so it may read the arrays without the lock."""
        with self.source() as connection:
            last = _scalar(connection, "SELECT last_seq FROM catalog_state WHERE id = 1")
            if last == self.seq:
                return None
            if self.seq < 0 or last < self.seq or last - self.seq > self._rebuild_after():
                fresh = FacetIndex(self.source)
                fresh._load(connection)
                return Update(last, fresh=fresh)
            delta = _read_delta(connection, self.seq, self.value_key)
            renamed = self._renamed(delta)
            order = None
            if len(self.pending) + len(renamed) > RERANK_PENDING:
                order = _read_order(connection)
            return Update(last, delta=delta, order=order)

    def _apply_update(self, update: Update) -> None:
        """Change the arrays (the caller holds the write lock)."""
        if update.fresh is not None:
            self._adopt(update.fresh)
        elif update.delta is not None:
            self._apply(update.delta, update.last)
        if update.order is not None:
            self._set_order(update.order)
        self._changed()

    def _changed(self) -> None:
        self.generation += 1
        self.cache.clear()

    def _rebuild_after(self) -> int:
        return max(REBUILD_CHANGES, self.capacity // 4)

    def _adopt(self, fresh: FacetIndex) -> None:
        for name, value in vars(fresh).items():
            if name not in ("source", "lock", "_sync_lock", "generation"):
                setattr(self, name, value)

    def alive_count(self) -> int:
        """Published files (cached until the next change)."""
        count = self.cache.get("alive")
        if count is None:
            count = self.cache["alive"] = int(np.count_nonzero(self.alive))
        return int(count)

    # -- loading -----------------------------------------------------------------------------

    def _load(self, connection: Connection) -> None:
        """Read everything (into a fresh index: see :meth:`sync`)."""
        started = time.perf_counter()
        self.seq = _scalar(connection, "SELECT last_seq FROM catalog_state WHERE id = 1")
        self._add_values(connection.exec_driver_sql(VALUES).all())
        top = connection.exec_driver_sql("SELECT max(id) FROM files").scalar()
        self._grow(int(top or 0) + 1)
        # in chunks: the transient Python rows of a million files would double the memory
        for chunk in _fetch(connection, "SELECT scheme, packed FROM files ORDER BY id"):
            self._store(_rows(chunk))
        self._set_order(_read_order(connection))  # not shared yet: no lock
        self.load_seconds = time.perf_counter() - started
        log.info("facet index: %d files loaded in %.2f s", len(self.order), self.load_seconds)

    def _add_values(self, rows: Sequence[Any]) -> None:
        """Rows of ``facet_values`` (id, key, value) the index did not know."""
        top = max((int(r[0]) for r in rows), default=-1) + 1
        if top > len(self.value_key):
            key, code = np.full(top, -1, np.int32), np.zeros(top, np.int32)
            key[: len(self.value_key)] = self.value_key
            code[: len(self.value_code)] = self.value_code
            self.value_key, self.value_code = key, code
        for value_id, key_name, value in rows:
            facet = self.facets.get(key_name)
            if facet is None:
                facet = self.facets[key_name] = Facet(key_name, len(self.facet_list))
                self.facet_list.append(facet)
            self.value_key[value_id] = facet.number
            self.value_code[value_id] = facet.add(value)
        for facet in self.facet_list:
            facet.fit(self.capacity)

    def _grow(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        capacity = max(needed, self.capacity + self.capacity // 4, 1024)

        def grown(array: Any, fill: Any) -> Any:
            new = np.full(capacity, fill, array.dtype)
            new[: len(array)] = array
            return new

        self.alive = grown(self.alive, False)
        self.scheme = grown(self.scheme, 0)
        self.size = grown(self.size, NO_SIZE)
        self.row_seq = grown(self.row_seq, 0)
        self.start = grown(self.start, NO_START)
        self.end = grown(self.end, NO_END)
        self.rank = grown(self.rank, -1)
        self.capacity = capacity
        for facet in self.facet_list:
            facet.fit(capacity)

    def _store(self, rows: Rows) -> None:
        """Write ``rows`` (alive, current versions) into the columns."""
        ids = rows.ids
        for scheme in set(rows.schemes) - self.scheme_codes.keys():
            self._scheme_code(scheme)
        codes = np.fromiter(map(self.scheme_codes.__getitem__, rows.schemes), np.uint8, len(ids))
        self.alive[ids] = True
        self.scheme[ids] = codes
        self.size[ids] = rows.size
        self.row_seq[ids] = rows.seq
        self.start[ids] = rows.start
        self.end[ids] = rows.end
        self._store_facets(ids, codes, rows)

    def _store_facets(self, ids: Ints, scheme_codes: npt.NDArray[np.uint8], rows: Rows) -> None:
        values = rows.values
        if len(values) and int(values.max()) >= len(self.value_key):
            raise Stale("a file refers to a facet value the index has not read")  # defensive
        which = self.value_key[values]
        # one scatter into a (row, facet) table (zeros: no value), then a column per facet
        table = np.zeros((len(ids), len(self.facet_list)), np.int32)
        table[rows.value_rows, which] = self.value_code[values]
        for facet in self.facet_list:
            facet.column[ids] = table[:, facet.number]
        # which schemes have values of which facet (for skipping facets a selection lacks)
        pairs = which.astype(np.int64) * 256 + scheme_codes[rows.value_rows]
        for pair in np.flatnonzero(np.bincount(pairs, minlength=1)).tolist():
            self.facet_list[pair // 256].schemes.add(pair % 256)

    def _scheme_code(self, scheme: str) -> int:
        code = self.scheme_codes.get(scheme)
        if code is None:
            code = self.scheme_codes[scheme] = len(self.schemes)
            self.schemes.append(scheme)
        return code

    # -- following the change feed ----------------------------------------------------------

    def _renamed(self, delta: Delta) -> dict[int, str]:
        """The rows of ``delta`` whose names are new to the order: ids free before, or freed
        and taken meanwhile."""
        ids = delta.rows.ids.tolist()
        capacity, alive = self.capacity, self.alive
        return {
            i: name
            for i, name in zip(ids, delta.rows.names or [], strict=True)
            if i >= capacity or not alive[i] or i in delta.retracted
        }

    def _apply(self, delta: Delta, last: int) -> None:
        rows, touched = delta.rows, delta.touched
        renamed = self._renamed(delta)  # before the arrays change
        self._add_values(delta.values)
        self._grow(int(max(touched, default=-1)) + 1)
        gone = sorted(set(touched) - set(rows.ids.tolist()))
        self._drop(gone)
        self._store(rows)
        self._unrank([*renamed, *gone])
        self.pending.update(renamed)
        self.seq = max(last, delta.seq)

    def _drop(self, ids: list[int]) -> None:
        if ids:
            where = np.array(ids, np.int64)
            self.alive[where] = False
            for facet in self.facet_list:
                facet.column[where] = 0
            for i in ids:
                self.pending.pop(i, None)

    def _unrank(self, ids: list[int]) -> None:
        """Take ``ids`` out of the name order (their names are new or gone)."""
        if not ids:
            return
        self.rank[np.array(ids, np.int64)] = -1
        self.order = self.order[self.rank[self.order] >= 0]
        self.rank[self.order] = np.arange(len(self.order))

    def _set_order(self, order: Ints) -> None:
        """Put every name in the order read by :func:`_read_order` (the caller holds the write
        lock, or the index is not shared yet)."""
        order = order[order < self.capacity]
        order = order[self.alive[order]]
        self.rank[:] = -1
        self.rank[order] = np.arange(len(order))
        # alive here but not in the database: retracted since; gone here too
        self._drop(np.flatnonzero(self.alive & (self.rank < 0)).tolist())
        self.order = order
        self.pending.clear()


def _read_order(connection: Connection) -> Ints:
    """The ids of the files in name order."""
    return _int_column(connection, "SELECT id FROM files ORDER BY name")


@dataclass
class Update:
    """What a sync read from the database, to apply under the write lock."""

    last: int
    fresh: FacetIndex | None = None
    delta: Delta | None = None
    #: the whole name order, when the names waiting outside it are too many
    order: Ints | None = None


@dataclass
class Delta:
    """What the change feed says changed since the index's seq, read from the database."""

    seq: int
    touched: list[int]
    retracted: set[int]
    rows: Rows
    values: list[Any]  # facet_values rows the index lacks


def _read_delta(connection: Connection, since: int, value_key: npt.NDArray[np.int32]) -> Delta:
    changes = connection.exec_driver_sql(
        _sql(connection, "SELECT seq, op, file_id FROM changes WHERE seq > ? ORDER BY seq"),
        (since,),
    ).all()
    touched = sorted({int(f) for _, _, f in changes if f is not None})
    rows = _read_rows(connection, touched)
    unknown = _unknown_values(rows.values, value_key)
    return Delta(
        seq=max([since, *(s for s, _, _ in changes)]),
        touched=touched,
        retracted={int(f) for _, op, f in changes if op == "retract" and f is not None},
        rows=rows,
        values=by_ids(connection, VALUES + " WHERE id", unknown) if unknown else [],
    )


def _unknown_values(values: Ints, value_key: npt.NDArray[np.int32]) -> list[int]:
    """Facet value ids the index has not read yet."""
    inside = values < len(value_key)
    unknown = values[~inside].tolist() + values[inside][value_key[values[inside]] < 0].tolist()
    return sorted(set(unknown))


def _sql(connection: Connection, statement: str) -> str:
    return statement if connection.dialect.name == "sqlite" else statement.replace("?", "%s")


def _scalar(connection: Connection, statement: str) -> int:
    return int(connection.exec_driver_sql(statement).scalar_one())


def _fetch(connection: Connection, statement: str, size: int = 100_000) -> Iterator[list[Any]]:
    """The rows of a big ``statement`` in chunks, through the driver (a server-side cursor on
    PostgreSQL): SQLAlchemy's row objects would double the time of reading a million rows."""
    raw: Any = connection.connection.driver_connection
    if connection.dialect.name == "sqlite":
        cursor = raw.execute(statement)
        while chunk := cursor.fetchmany(size):
            yield chunk
        return
    with raw.cursor(name="ndnsci_facet_index") as cursor:
        cursor.itersize = size
        cursor.execute(statement)
        while chunk := cursor.fetchmany(size):
            yield chunk


def _int_column(connection: Connection, statement: str) -> Ints:
    chunks = [
        np.fromiter((r[0] for r in chunk), np.int64, len(chunk))
        for chunk in _fetch(connection, statement, 500_000)
    ]
    return np.concatenate(chunks) if chunks else np.zeros(0, np.int64)


def by_ids(connection: Connection, select: str, ids: Sequence[int]) -> list[Any]:
    """Rows of ``select`` (a constant ending in ``WHERE id``) for ``ids``: one statement each
    20,000 ids, the ids passed as one parameter (a JSON array on SQLite, an array otherwise)."""
    rows: list[Any] = []
    sqlite = connection.dialect.name == "sqlite"
    for start in range(0, len(ids), 20_000):
        chunk = [int(i) for i in ids[start : start + 20_000]]
        if sqlite:
            statement = select + " IN (SELECT value FROM json_each(?))"
            param: Any = json.dumps(chunk)
        else:
            statement, param = select + " = ANY(%s)", chunk
        rows.extend(connection.exec_driver_sql(statement, (param,)).all())
    return rows


def _read_rows(connection: Connection, ids: Sequence[int]) -> Rows:
    """The index columns and names of the files ``ids`` (those still published)."""
    sql = "SELECT scheme, packed, name, id FROM files WHERE id"
    return _rows(sorted(by_ids(connection, sql, ids), key=lambda row: int(row[3])))


def _rows(raw: list[Any]) -> Rows:
    """Rows of (scheme, packed[, name, ...]) in id order, decoded."""
    width = len(raw[0]) if raw else 2
    columns = [[row[i] for row in raw] for i in range(width)]  # faster than zip(*raw)
    ids, seq, size, start, end, values, value_rows = _unpack(columns[1])
    return Rows(
        ids=ids,
        seq=seq,
        schemes=columns[0],
        size=size,
        start=start,
        end=end,
        values=values,
        value_rows=value_rows,
        names=columns[2] if width > 2 else None,
    )


def _unpack(blobs: Sequence[bytes]) -> tuple[Ints, Ints, Ints, Ints, Ints, Ints, Ints]:
    """Decode ``files.packed`` of many rows at once (layout: :mod:`ndnsci_catalog.bulk`):
    id, seq, size, start, end, then the facet value ids and the row of each."""
    words = np.fromiter(map(len, blobs), np.int64, len(blobs)) // 4  # int32 words per row
    flat = np.frombuffer(b"".join(blobs), "<i4")
    head_words = HEAD.size // 4
    first = np.cumsum(words) - words
    head_at = first[:, None] + np.arange(head_words)
    head = np.ascontiguousarray(flat[head_at]).view("<i8").astype(np.int64)
    body = np.ones(len(flat), np.bool_)
    body[head_at.ravel()] = False
    values = flat[body].astype(np.int64)
    value_rows = np.repeat(np.arange(len(blobs)), words - head_words)
    return head[:, 0], head[:, 1], head[:, 2], head[:, 3], head[:, 4], values, value_rows
