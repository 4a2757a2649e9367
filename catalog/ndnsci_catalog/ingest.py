"""Publishing and retracting: idempotent upserts keyed by name, in the caller's transaction.

One call is one batch and the caller commits it, so a crash loses nothing already committed and
never leaves half a record: the files row, its free text, the facet and tree counts and the
change-feed entry are written together or not at all.

A name is one file. A record for a published name that differs from the published one replaces
it only when it is evidently the same file (the same ``original_path``, the same ``sha256``, or
a ``version`` stated and different: a new version); otherwise two different files translated to
one name, a *collision*: the published record stays and the collision is reported (the line,
the name, where each record came from), unless the caller asks to ``replace`` (then it is
replaced, and still reported). Within one batch the first record of a name is the published
one. Nothing is lost without a word (docs/catalog.md, "Publishing").

Publishers are serialised by a row lock on ``catalog_state`` (taken by the first statement, a
write, so SQLite takes its write lock at once instead of failing to upgrade a read transaction).
Under that lock sequence numbers and file ids are allocated by counting up, so the change feed
is committed in sequence order: the in-memory facet index of every server process follows it.

The batch is prepared in Python (rows as tuples, tree counts aggregated per batch) and written
with one bulk statement per table (:mod:`ndnsci_catalog.bulk`). Facet counts are not stored:
the in-memory facet index counts (:mod:`ndnsci_catalog.facetindex`).

Every record keeps the site that published it (``origin``; by default this catalog's own site,
docs/federation.md): its ``site`` column, and a ``site`` facet value in ``packed`` so searches
filter and count by site. A name another site holds is never replaced or retracted: the claim is
a conflict, written to ``conflicts`` and reported, and the record held stays as it is.
"""

from __future__ import annotations

import datetime as dt
import json
import marshal
import os
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from ndnsci_catalog import bulk, fulltext
from ndnsci_catalog.errors import ConflictError
from ndnsci_catalog.records import SITE_FACET, PublishRecord, name_components

try:  # the compiled per-row work (catalog/ndnsci_catalog/_prepare.c), built by `pip install`
    from ndnsci_catalog import _prepare
except ImportError:  # an install without a C compiler: the same work in Python
    _prepare = None  # type: ignore[assignment]
_compiled = None if os.environ.get("NDNSCI_HOTLOOP") == "python" else _prepare
#: None: the walk and the rows in Python (no extension, or ``NDNSCI_HOTLOOP=python``, the
#: switch of the other compiled loops)
_compiled_tree_rows = None if _compiled is None else _compiled.tree_rows
_compiled_new_rows = None if _compiled is None else _compiled.new_rows
_compiled_document = None if _compiled is None else _compiled.document

CHUNK = 500  # bound parameters per IN list: far under every backend's limit
#: a ``tree_nodes`` delta: (parent, component, files, leaves)
TreeRow = tuple[str, str, int, int]
_SIZE = bulk.RECORD_COLUMNS.index("size")
_VERSION = bulk.RECORD_COLUMNS.index("version")
_SHA256 = bulk.RECORD_COLUMNS.index("sha256")
_ORIGINAL = bulk.RECORD_COLUMNS.index("original")
_ORIGINAL_PATH = bulk.RECORD_COLUMNS.index("original_path")
_ID = bulk.FILE_COLUMNS.index("id")
#: marshal's format for a batch between processes of one interpreter (its latest, 4, shares
#: repeated strings; any version reads what the same Python wrote)
WIRE_VERSION = 4


@dataclass(frozen=True, slots=True)
class Collision:
    """Two different files with one name: which one is published, which one collided."""

    #: the line (of the request or the batch) of the record that collided
    line: int
    name: str
    #: where the published record came from: its original path, else its original file name
    published: str | None
    #: the same for the record that collided (its input, when the loader knows it)
    given: str | None
    #: True when the collided record replaced the published one (``replace``)
    replaced: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "name": self.name,
            "published": self.published,
            "given": self.given,
            "replaced": self.replaced,
        }


@dataclass(slots=True)
class PublishResult:
    inserted: int = 0
    replaced: int = 0
    unchanged: int = 0
    last_seq: int = 0
    collisions: list[Collision] = field(default_factory=list)
    #: names another site holds, with that site: refused, recorded in ``conflicts``
    conflicts: list[tuple[str, str | None]] = field(default_factory=list)

    def add(self, other: PublishResult) -> None:
        self.inserted += other.inserted
        self.replaced += other.replaced
        self.unchanged += other.unchanged
        self.last_seq = max(self.last_seq, other.last_seq)
        self.collisions += other.collisions
        self.conflicts.extend(other.conflicts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "inserted": self.inserted,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "last_seq": self.last_seq,
            "collisions": [c.to_dict() for c in self.collisions],
            "conflicts": len(self.conflicts),
        }


def same_file(
    a: tuple[str | None, str | None, str | None], b: tuple[str | None, str | None, str | None]
) -> bool:
    """Are two records of one name evidently the same file? Each is (original_path, sha256,
    version): the same original path, the same content, or a new version stated."""
    (path_a, sha_a, version_a), (path_b, sha_b, version_b) = a, b
    return (
        (path_b is not None and path_b == path_a)
        or (sha_b is not None and sha_b == sha_a)
        or (version_b is not None and version_b != version_a)
    )


def _evidence(r: PublishRecord) -> tuple[str | None, str | None, str | None]:
    return r.original_path, r.sha256, r.version


def _source(r: PublishRecord) -> str:
    return r.original_path or r.original


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _State:
    """The locked ``catalog_state`` row, updated once at the end of the batch."""

    def __init__(self, writer: bulk.Writer) -> None:
        writer.many("UPDATE catalog_state SET last_seq = last_seq WHERE id = ?", [(1,)])
        ((self.seq, self.files, self.bytes),) = writer.all(
            "SELECT last_seq, files, bytes FROM catalog_state WHERE id = 1"
        )
        ((max_id,),) = writer.all("SELECT max(id) FROM files")
        local = writer.all("SELECT name FROM sites WHERE local = ?", (True,))
        #: this catalog's own site (None until ``ndnsci catalog site init``)
        self.local_site: str | None = local[0][0] if local else None
        self.writer = writer
        self.next_id = int(max_id or 0) + 1

    def holder(self, row: dict[str, Any]) -> str | None:
        """The site a published row belongs to (rows from before the site had a name: ours)."""
        return row["site"] or self.local_site

    def next_seq(self) -> int:
        self.seq += 1
        return int(self.seq)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def save(self) -> None:
        self.writer.many(
            "UPDATE catalog_state SET last_seq = ?, files = ?, bytes = ? WHERE id = 1",
            [(self.seq, self.files, self.bytes)],
        )


class _AlreadyPublished(Exception):
    """A batch written without looking its names up had a published one (nothing written)."""


@dataclass(slots=True)
class _Batch:
    """Rows and count deltas of one batch, written with one bulk statement per table."""

    stamp: str
    inserts: list[tuple[Any, ...]] = field(default_factory=list)
    updates: list[tuple[Any, ...]] = field(default_factory=list)
    history: list[tuple[Any, ...]] = field(default_factory=list)
    changes: list[tuple[Any, ...]] = field(default_factory=list)
    conflicts: list[tuple[Any, ...]] = field(default_factory=list)
    fts_docs: list[tuple[int, str]] = field(default_factory=list)
    #: (id, document) of the free-text rows to remove: the SQLite table holds no copy of the
    #: documents, so a row is removed by giving its document again (:func:`_old_document`)
    fts_deletes: list[tuple[int, str]] = field(default_factory=list)
    #: tree count deltas (parent, component, files, leaves), summed per node
    tree: list[TreeRow] = field(default_factory=list)
    #: files added (or removed, negative) per parent directory, on top of ``tree``
    parents: Counter[str] = field(default_factory=Counter)

    def remove(self, old: dict[str, Any], seq: int) -> None:
        """The published version ``old`` goes to the history and leaves the counts."""
        kept = {k: v for k, v in old.items() if k not in ("id", "packed")}
        self.history.append((old["name"], old["version"], bulk.dump_json(kept), seq, self.stamp))
        self.fts_deletes.append((old["id"], _old_document(old)))

    def write(self, writer: bulk.Writer, *, optimistic: bool = False) -> None:
        """``optimistic``: the names were not looked up (every row an insert): the files rows
        go first, skipping names already published; if one was, the rows just written are
        deleted and _AlreadyPublished raised, before anything else is written."""
        if optimistic:
            written = writer.insert_new_files(self.inserts)
            if written < len(self.inserts):
                writer.delete_files_from(self.inserts[0][_ID])
                raise _AlreadyPublished
        writer.insert_history(self.history)
        writer.delete_fulltext(self.fts_deletes)
        if not optimistic:
            writer.insert_files(self.inserts)
        writer.update_files(self.updates)
        writer.insert_fulltext(self.fts_docs)
        if optimistic:  # every row an insert: its change made from the row (not in .changes)
            writer.insert_changes_of_files_from(self.inserts[0][_ID])
        writer.insert_changes(self.changes)
        insert_conflicts(writer, self.conflicts)
        tree = self.tree
        if self.parents:
            tree = _merge_tree(tree, _tree_rows(self.parents))
        writer.add_tree_counts(tree)


@dataclass(slots=True)
class Prepared:
    """A batch with everything computed that needs no database and no lock.

    Plain tuples, strings and buffers, cheap to pickle: ``ndnsci publish --records`` prepares
    the next batch in a second process while this one writes (:mod:`ndnsci_catalog.loader`).
    """

    #: per name (the last record given for it), in name order: the values of
    #: :data:`bulk.RECORD_COLUMNS` (JSON columns as text)
    rows: list[tuple[Any, ...]]
    documents: list[str]
    #: per row: size, time_start and time_end as ``files.packed`` stores them
    codes: list[tuple[int, int, int]]
    #: the batch's (key, value) facet pairs; ``refs`` indexes them (int32), ``offsets[i]`` to
    #: ``offsets[i + 1]`` are row i's, in the order of its facets
    values: list[tuple[str, str]]
    refs: bytes
    offsets: list[int]
    #: tree count deltas as if every name were new
    tree: list[TreeRow]
    #: per row: its line in the request or batch; and its input (the loader's, else None)
    lines: list[int] = field(default_factory=list)
    sources: list[str | None] = field(default_factory=list)
    #: collisions inside the batch (the first record of a name is kept unless ``replace``)
    collisions: list[Collision] = field(default_factory=list)
    #: a published record of another file is replaced (and reported) instead of kept
    replace: bool = False

    def __len__(self) -> int:
        return len(self.rows)

    def to_wire(self) -> tuple[Any, ...]:
        """The batch as plain tuples, lists and strings, for :func:`marshal.dumps`: a
        batch crosses between processes at half the cost of pickling it (no memo of its
        million objects)."""
        collisions = [(c.line, c.name, c.published, c.given, c.replaced) for c in self.collisions]
        return (
            self.rows, self.documents, self.codes, self.values, self.refs, self.offsets,
            self.tree, self.lines, self.sources, collisions, self.replace,
        )  # fmt: skip

    @classmethod
    def from_wire(cls, wire: tuple[Any, ...]) -> Prepared:
        """The batch of :meth:`to_wire`."""
        rows, documents, codes, values, refs, offsets, tree, lines, sources, hits, replace = wire
        collisions = [Collision(*c) for c in hits]
        return cls(
            rows, documents, codes, values, refs, offsets, tree, lines, sources, collisions, replace
        )

    def dumps(self) -> bytes:
        return marshal.dumps(self.to_wire(), WIRE_VERSION)

    @classmethod
    def loads(cls, data: bytes) -> Prepared:
        return cls.from_wire(marshal.loads(data))


def prepare(
    records: Sequence[PublishRecord],
    *,
    lines: Sequence[int] | None = None,
    sources: Sequence[str | None] | None = None,
    replace: bool = False,
) -> Prepared:
    """Everything of a batch that needs no database. ``lines`` numbers the records (default
    1, 2, ...), ``sources`` says where each came from, for the collision report."""
    numbers = lines if lines is not None else range(1, len(records) + 1)
    kept, collisions = _one_per_name(records, numbers, sources, replace)
    # ids in name order: the name index takes each batch in sorted runs
    order = [kept[name] for name in sorted(kept)]
    ordered = [records[i] for i in order]
    pairs: dict[tuple[str, str], int] = {}
    refs = array("i")
    offsets = [0]
    rows = []
    codes = []
    documents = []
    # the hot loop of a bulk load: names bound locally
    dump, ref_of, add_ref = bulk.dump_json, pairs.get, refs.append
    dump_facets = bulk.flat_json_encoder()
    code = _Memo(bulk.time_code)  # a batch's times are a few distinct strings
    parents: dict[str, int] = {}
    for r in ordered:
        for key, value in r.facets.items():
            if value is not None:
                ref = ref_of((key, value))
                if ref is None:
                    ref = pairs[key, value] = len(pairs)
                add_ref(ref)
        offsets.append(len(refs))
        rows.append(
            (
                r.name, r.scheme, r.filename, r.original, r.original_path, r.size, r.sha256,
                r.mtime, r.version, r.time_start, r.time_end, dump_facets(r.facets),
                dump(r.corrections) if r.corrections else "[]", dump(r.metadata),
            )
        )  # fmt: skip
        codes.append(
            (
                bulk.NO_SIZE if r.size is None else r.size,
                bulk.NO_START if r.time_start is None else code[r.time_start],
                bulk.NO_END if r.time_end is None else code[r.time_end],
            )
        )
        documents.append(_document(r))
        parent = r.name.rpartition("/")[0]
        parents[parent] = parents.get(parent, 0) + 1
    if sys.byteorder != "little":
        refs.byteswap()
    return Prepared(
        rows=rows,
        documents=documents,
        codes=codes,
        values=list(pairs),
        refs=refs.tobytes(),
        offsets=offsets,
        tree=_tree_rows(parents),
        lines=[numbers[i] for i in order],
        sources=[sources[i] for i in order] if sources is not None else [None] * len(order),
        collisions=collisions,
        replace=replace,
    )


def _document(r: PublishRecord) -> str:
    """:func:`fulltext.document` of ``r``; compiled for a record without metadata in ASCII
    (``_prepare.document``: in Python, the largest step of preparing such a record)."""
    if _compiled_document is not None and not r.metadata:
        text: str | None = _compiled_document(r.name, r.facets, r.original, r.original_path)
        if text is not None:
            return text
    return fulltext.document(r.components, r.facets, r.metadata, r.original, r.original_path)


class _Memo(dict[Any, Any]):
    """``function``'s results by argument, each computed once: ``memo[x]``."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        super().__init__()
        self.function = function

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.function(key)
        return value


def _one_per_name(
    records: Sequence[PublishRecord],
    numbers: Sequence[int],
    sources: Sequence[str | None] | None,
    replace: bool,
) -> tuple[dict[str, int], list[Collision]]:
    """name -> the index of the record a batch publishes under it, and the collisions."""
    kept: dict[str, int] = {}
    collisions: list[Collision] = []
    for i, r in enumerate(records):
        j = kept.setdefault(r.name, i)
        if j == i or records[j] == r:  # a new name, or the same record again
            continue
        first = records[j]
        if same_file(_evidence(first), _evidence(r)):
            kept[r.name] = i  # a later version of the same file
            continue
        given = sources[i] if sources is not None else None
        collisions.append(
            Collision(numbers[i], r.name, _source(first), given or _source(r), replace)
        )
        if replace:
            kept[r.name] = i
    return kept, collisions


def publish(
    session: Session,
    records: Sequence[PublishRecord] | Prepared,
    *,
    replace: bool = False,
    origin: str | None = None,
) -> PublishResult:
    """Insert new names, replace records of the same file (keeping the old version in the
    history), keep the published record of a name another file collides with (unless
    ``replace``; a Prepared batch says it itself) and report the collision.

    ``origin``: the site that published the records (default: this catalog's own). A name held
    by another site is not touched: it is counted in ``conflicts`` and written to the table.
    """
    batch = records if isinstance(records, Prepared) else prepare(records, replace=replace)
    result = PublishResult(collisions=list(batch.collisions))
    if not batch.rows:  # nothing to write: the catalog's sequence as it is
        last = "SELECT last_seq FROM catalog_state WHERE id = 1"
        result.last_seq = int(session.connection().exec_driver_sql(last).scalar_one())
        return result
    writer = bulk.writer(session.connection())
    state = _State(writer)  # the lock first (above)
    names = [row[0] for row in batch.rows]
    if writer.optimistic and not writer.any_published(_probes(names)):
        # most likely all new (a first load): written without looking each name up. If a
        # name was published after all, the files rows written are taken back before anything
        # else is written, and the batch is written the usual way (the same answer either way)
        try:
            return _write(writer, batch, {}, state, origin, optimistic=True)
        except _AlreadyPublished:
            state = _State(writer)  # its counts as they were
    return _write(writer, batch, writer.existing(names), state, origin)


def _probes(names: list[str], count: int = 5) -> list[str]:
    """A few names spread over a sorted batch (first, last and between)."""
    if len(names) <= count:
        return names
    step = (len(names) - 1) / (count - 1)
    return [names[round(i * step)] for i in range(count)]


def _new_rows(
    batch: Prepared,
    facet_ids: bytes,
    site_ref: bytes,
    *,
    first_id: int,
    first_seq: int,
    stamp: str,
    site: str | None,
) -> list[tuple[Any, ...]]:
    """The files rows of a batch whose names are all new: ids and seqs from ``first_id`` and
    ``first_seq``, ``packed`` from the batch's codes and facet value ids (``facet_ids``, the
    int32 ids of the batch's refs, then ``site_ref``). Compiled when ndnsci was built with it
    (``_prepare.new_rows``: the server's per-row Python of a first load), else
    :func:`_new_rows_python`."""
    if _compiled_new_rows is not None:
        rows: list[tuple[Any, ...]] | None = _compiled_new_rows(
            batch.rows, batch.codes, facet_ids, batch.offsets, site_ref, first_id, first_seq,
            stamp, site,
        )  # fmt: skip
        if rows is not None:
            return rows
    return _new_rows_python(
        batch, facet_ids, site_ref, first_id=first_id, first_seq=first_seq, stamp=stamp, site=site
    )


def _new_rows_python(
    batch: Prepared,
    facet_ids: bytes,
    site_ref: bytes,
    *,
    first_id: int,
    first_seq: int,
    stamp: str,
    site: str | None,
) -> list[tuple[Any, ...]]:
    """:func:`_new_rows` in Python."""
    ids = range(first_id, first_id + len(batch.rows))
    seqs = range(first_seq, first_seq + len(batch.rows))
    head = bulk.HEAD.pack
    offsets = batch.offsets
    packed = [
        head(i, s, *code) + facet_ids[4 * a : 4 * b] + site_ref
        for i, s, code, a, b in zip(
            ids, seqs, batch.codes, offsets, islice(offsets, 1, None), strict=False
        )
    ]
    return [
        (*row, i, p, s, stamp, site)
        for row, i, p, s in zip(batch.rows, ids, packed, seqs, strict=True)
    ]


def _write(
    writer: bulk.Writer,
    batch: Prepared,
    existing: dict[str, dict[str, Any]],
    state: _State,
    origin: str | None,
    *,
    optimistic: bool = False,
) -> PublishResult:
    """:func:`publish` once the published rows of the batch's names are known (``optimistic``:
    taken to be none; raises _AlreadyPublished if one is, with its files rows taken back and
    nothing else written but the batch's new facet values, which stay as every value does)."""
    result = PublishResult(collisions=list(batch.collisions))
    site = origin or state.local_site
    values = [*batch.values, (SITE_FACET, site)] if site else batch.values
    ids = np.asarray(_value_ids(writer, values), dtype="<i4")
    # the site's facet value closes every row's packed ids
    site_ref = ids[-1:].tobytes() if site else b""
    ids = ids[: len(batch.values)]
    facet_ids = ids[np.frombuffer(batch.refs, dtype="<i4")].tobytes() if len(ids) else b""
    rows = _Batch(now())
    stamp = rows.stamp
    head = bulk.HEAD.pack
    offsets = batch.offsets
    known: Counter[str] = Counter()  # names already published: the tree has them
    if optimistic:  # every row an insert: the loop below, row by row, made at once
        n = len(batch.rows)
        first_id, first_seq = state.next_id, state.seq + 1
        rows.inserts = _new_rows(
            batch,
            facet_ids,
            site_ref,
            first_id=first_id,
            first_seq=first_seq,
            stamp=stamp,
            site=site,
        )
        rows.fts_docs = list(zip(range(first_id, first_id + n), batch.documents, strict=True))
        state.next_id += n
        state.seq += n
        state.files += n
        state.bytes += sum(row[_SIZE] or 0 for row in batch.rows)
        result.inserted = n
    for k, row in enumerate(() if optimistic else batch.rows):
        name = row[0]
        old = existing.get(name) if existing else None
        if old is not None:
            known[name.rpartition("/")[0]] -= 1
            held_by = state.holder(old)
            if held_by != site:
                result.conflicts.append((name, held_by))
                rows.conflicts.append((name, held_by, site, "publish", stamp))
                continue
            if old["site"] == site and _same(old, row):
                result.unchanged += 1
                continue
            if not same_file(_old_evidence(old), _row_evidence(row)):
                collision = Collision(
                    batch.lines[k],
                    name,
                    old["original_path"] or old["original"],
                    batch.sources[k] or row[_ORIGINAL_PATH] or row[_ORIGINAL],
                    batch.replace,
                )
                result.collisions.append(collision)
                if not batch.replace:
                    continue
        seq = state.next_seq()
        if old is None:
            file_id = state.new_id()
            state.files += 1
            result.inserted += 1
        else:
            file_id = old["id"]
            state.bytes -= old["size"] or 0
            rows.remove(old, seq)
            result.replaced += 1
        state.bytes += row[_SIZE] or 0
        packed = (
            head(file_id, seq, *batch.codes[k])
            + facet_ids[4 * offsets[k] : 4 * offsets[k + 1]]
            + site_ref
        )
        (rows.inserts if old is None else rows.updates).append(
            (*row, file_id, packed, seq, stamp, site)
        )
        rows.fts_docs.append((file_id, batch.documents[k]))
        rows.changes.append((seq, "publish", name, row[_VERSION], stamp, file_id, site))
    rows.tree = _merge_tree(batch.tree, _tree_rows(known)) if known else batch.tree
    rows.write(writer, optimistic=optimistic)
    state.save()
    result.last_seq = state.seq
    return result


def retract(session: Session, name: str, *, origin: str | None = None) -> int | None:
    """Remove ``name`` (its last version goes to the history); the change's seq, or None.

    ``origin``: the site retracting (default: this catalog's own). Raises ConflictError when
    another site holds the name (nothing is changed; the caller decides what to record).
    """
    writer = bulk.writer(session.connection())
    state = _State(writer)
    old = writer.existing([name]).get(name)
    if old is None:
        return None
    site = origin or state.local_site
    held_by = state.holder(old)
    if held_by != site:
        raise ConflictError(name, held_by, site)
    seq = state.next_seq()
    batch = _Batch(now())
    batch.remove(old, seq)
    batch.parents[name.rpartition("/")[0]] -= 1
    batch.changes.append((seq, "retract", name, None, batch.stamp, old["id"], site))
    writer.delete_file(old["id"])
    batch.write(writer)
    state.files -= 1
    state.bytes -= old["size"] or 0
    state.save()
    return seq


def _old_document(old: dict[str, Any]) -> str:
    """The free-text document a published row was given: :func:`prepare` made it from the
    same fields, which the row holds as published (JSON round-trips keep the key order)."""
    return fulltext.document(
        name_components(old["name"]),
        old["facets"] or {},
        old["metadata"],
        old["original"],
        old["original_path"],
    )


def _old_evidence(old: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    return old["original_path"], old["sha256"], old["version"]


def _row_evidence(row: tuple[Any, ...]) -> tuple[str | None, str | None, str | None]:
    return row[_ORIGINAL_PATH], row[_SHA256], row[_VERSION]


def insert_conflicts(writer: bulk.Writer, rows: list[tuple[Any, ...]]) -> None:
    """Conflict rows: (name, held_by, claimed_by, op, at)."""
    writer.many(
        "INSERT INTO conflicts (name, held_by, claimed_by, op, at) VALUES (?, ?, ?, ?, ?)", rows
    )


def record_conflict(session: Session, conflict: ConflictError, op: str) -> None:
    """Write ``conflict`` (raised by :func:`retract`) to the table, in the caller's transaction."""
    writer = bulk.writer(session.connection())
    insert_conflicts(writer, [(conflict.name, conflict.held_by, conflict.claimed_by, op, now())])


def _same(old: dict[str, Any], row: tuple[Any, ...]) -> bool:
    """Is ``row`` what is published already? (Republishing it must change nothing.)"""
    for column, value in zip(bulk.RECORD_COLUMNS, row, strict=True):
        if column in bulk.JSON_COLUMNS:
            # JSON compared as canonical text: key order does not matter, NaN equals NaN
            if _canonical(old[column]) != _canonical(bulk.load_json(value)):
                return False
        elif old[column] != value:
            return False
    return True


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _value_ids(writer: bulk.Writer, pairs: list[tuple[str, str]]) -> list[int]:
    """The id of each (key, value) pair, creating the missing ones."""
    wanted: dict[str, set[str]] = {}
    for key, value in pairs:
        wanted.setdefault(key, set()).add(value)
    ids = {key: writer.value_ids(key, sorted(values)) for key, values in wanted.items()}
    created = {key: sorted(values - ids[key].keys()) for key, values in wanted.items()}
    created = {key: values for key, values in created.items() if values}
    if created:
        writer.insert_values([(k, v) for k, values in sorted(created.items()) for v in values])
        known = {k for (k,) in writer.all("SELECT key FROM facet_keys")}
        writer.many(
            "INSERT INTO facet_keys (key) VALUES (?)",
            [(k,) for k in sorted(set(created) - known)],
        )
        for key, values in created.items():
            ids[key].update(writer.value_ids(key, values))
    return [ids[key][value] for key, value in pairs]


def _tree_rows(parents: Mapping[str, int]) -> list[TreeRow]:
    """The count deltas of every prefix of the directories in ``parents``: :func:`_tree_python`'s
    rows, by the compiled walk when ndnsci was built with it (``_prepare.tree_rows``: a sixth of
    a batch's preparing time in Python, on names that share few directories)."""
    rows = _compiled_tree_rows(parents) if _compiled_tree_rows is not None else None
    return _tree_python(parents) if rows is None else rows


def _tree_python(parents: Mapping[str, int]) -> list[TreeRow]:
    """The count deltas of every prefix of the directories in ``parents`` (files added to each,
    negative when removed), in path order: about the key order, so neighbouring rows share
    pages. One walk over the sorted paths: the paths under a prefix are one run of them, so a
    node is complete when the walk leaves it, and adds its count to its parent's."""
    rows: list[TreeRow | None] = []
    # the open nodes from the root down: [path + "/", files, leaves, index of its row]
    stack: list[list[Any]] = []
    # "P/" sorts before every "P/...", and the strings with a prefix are an interval: sorted
    # so, a node and everything under it are one run (sorted plainly, "/a" and "/a/b" would
    # be apart: "/a-b" sorts between them)
    for key in sorted(path + "/" for path, delta in parents.items() if delta):
        while stack and not key.startswith(stack[-1][0]):
            _close(stack, rows)
        opened = stack[-1][0] if stack else "/"
        for component in key[len(opened) : -1].split("/") if len(key) > len(opened) else ():
            opened = f"{opened}{component}/"
            stack.append([opened, 0, 0, len(rows)])
            rows.append(None)
        delta = parents[key[:-1]]
        stack[-1][1] += delta
        stack[-1][2] += delta
    while stack:
        _close(stack, rows)
    return [row for row in rows if row is not None]


def _close(stack: list[list[Any]], rows: list[TreeRow | None]) -> None:
    key, files, leaves, index = stack.pop()
    if files:
        parent, _, component = key[:-1].rpartition("/")
        rows[index] = (parent, component, files, leaves)
        if stack:
            stack[-1][1] += files


def _merge_tree(a: list[TreeRow], b: list[TreeRow]) -> list[TreeRow]:
    """Deltas summed per node (nodes left unchanged dropped)."""
    total: dict[tuple[str, str], list[int]] = {}
    for parent, component, files, leaves in (*a, *b):
        counts = total.setdefault((parent, component), [0, 0])
        counts[0] += files
        counts[1] += leaves
    return [(*key, f, n) for key, (f, n) in total.items() if f]
