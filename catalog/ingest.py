"""Publishing and retracting: idempotent upserts keyed by name, in the caller's transaction.

One call is one batch and the caller commits it, so a crash loses nothing already committed and
never leaves half a record: the files row, its free text, the facet and tree counts and the
change-feed entry are written together or not at all.

Publishers are serialised by a row lock on ``catalog_state`` (taken by the first statement, a
write, so SQLite takes its write lock at once instead of failing to upgrade a read transaction).
Under that lock sequence numbers and file ids are allocated by counting up, so the change feed
is committed in sequence order: the in-memory facet index of every server process follows it.

The batch is prepared in Python (rows as tuples, tree counts aggregated per batch) and written
with one bulk statement per table (:mod:`ndnsci.catalog.bulk`). Facet counts are not stored:
the in-memory facet index counts (:mod:`ndnsci.catalog.facetindex`).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from . import bulk, fulltext
from .records import Record

CHUNK = 500  # bound parameters per IN list: far under every backend's limit


@dataclass(slots=True)
class PublishResult:
    inserted: int = 0
    replaced: int = 0
    unchanged: int = 0
    last_seq: int = 0

    def add(self, other: PublishResult) -> None:
        self.inserted += other.inserted
        self.replaced += other.replaced
        self.unchanged += other.unchanged
        self.last_seq = max(self.last_seq, other.last_seq)

    def to_dict(self) -> dict[str, int]:
        return {
            "inserted": self.inserted,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
            "last_seq": self.last_seq,
        }


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
        self.writer = writer
        self.next_id = int(max_id or 0) + 1

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


@dataclass(slots=True)
class _Batch:
    """Rows and count deltas of one batch, written with one bulk statement per table."""

    stamp: str
    inserts: list[tuple[Any, ...]] = field(default_factory=list)
    updates: list[tuple[Any, ...]] = field(default_factory=list)
    history: list[tuple[Any, ...]] = field(default_factory=list)
    changes: list[tuple[Any, ...]] = field(default_factory=list)
    fts_docs: list[tuple[int, str]] = field(default_factory=list)
    fts_deletes: list[int] = field(default_factory=list)
    #: files added (or removed, negative) per parent directory
    parents: Counter[str] = field(default_factory=Counter)

    def remove(self, old: dict[str, Any], seq: int) -> None:
        """The published version ``old`` goes to the history and leaves the counts."""
        kept = {k: v for k, v in old.items() if k not in ("id", "packed")}
        self.history.append((old["name"], old["version"], bulk.dump_json(kept), seq, self.stamp))
        self.fts_deletes.append(old["id"])

    def write(self, writer: bulk.Writer) -> None:
        writer.insert_history(self.history)
        fulltext.delete(writer, self.fts_deletes)
        writer.insert_files(self.inserts)
        writer.update_files(self.updates)
        fulltext.insert(writer, self.fts_docs)
        writer.insert_changes(self.changes)
        writer.add_tree_counts(_tree_rows(self.parents))


@dataclass(slots=True)
class Prepared:
    """A batch with everything computed that needs no database (no lock held meanwhile)."""

    records: list[Record]  # one per name (the last one given), in name order
    documents: list[str]
    facets: list[str]  # JSON
    values: dict[str, set[str]]  # facet values used, by key


def prepare(records: Sequence[Record]) -> Prepared:
    by_name = {r.name: r for r in records}  # the last record of a name wins
    ordered = [by_name[name] for name in sorted(by_name)]  # ids in name order: see below
    values: dict[str, set[str]] = {}
    for record in ordered:
        for key, value in record.facets.items():
            if value is not None:
                values.setdefault(key, set()).add(value)
    return Prepared(
        records=ordered,
        documents=[fulltext.document(r.components, r.facets, r.metadata) for r in ordered],
        facets=[bulk.dump_json(r.facets) or "{}" for r in ordered],
        values=values,
    )


def publish(session: Session, records: Sequence[Record] | Prepared) -> PublishResult:
    """Insert new names, replace changed ones (keeping the old version in the history)."""
    batch = records if isinstance(records, Prepared) else prepare(records)
    result = PublishResult()
    if not batch.records:
        return result
    writer = bulk.writer(session.connection())
    state = _State(writer)
    # names are inserted in order, so the name index takes each batch in sorted runs
    existing = writer.existing([r.name for r in batch.records])
    value_ids = _value_ids(writer, batch.values)
    rows = _Batch(now())
    for record, document, facets in zip(batch.records, batch.documents, batch.facets, strict=True):
        old = existing.get(record.name)
        if old is not None and _same(old, record):
            result.unchanged += 1
            continue
        seq = state.next_seq()
        ids = [value_ids[k][v] for k, v in record.facets.items() if v is not None]
        if old is None:
            file_id = state.new_id()
            state.files += 1
            rows.parents[record.name.rpartition("/")[0]] += 1
            result.inserted += 1
        else:
            file_id = old["id"]
            state.bytes -= old["size"] or 0
            rows.remove(old, seq)
            result.replaced += 1
        state.bytes += record.size or 0
        row = _file_row(record, file_id, facets=facets, ids=ids, seq=seq, stamp=rows.stamp)
        (rows.inserts if old is None else rows.updates).append(row)
        rows.fts_docs.append((file_id, document))
        rows.changes.append((seq, "publish", record.name, record.version, rows.stamp, file_id))
    rows.write(writer)
    state.save()
    result.last_seq = state.seq
    return result


def retract(session: Session, name: str) -> int | None:
    """Remove ``name`` (its last version goes to the history); the change's seq, or None."""
    writer = bulk.writer(session.connection())
    state = _State(writer)
    old = writer.existing([name]).get(name)
    if old is None:
        return None
    seq = state.next_seq()
    batch = _Batch(now())
    batch.remove(old, seq)
    batch.parents[name.rpartition("/")[0]] -= 1
    batch.changes.append((seq, "retract", name, None, batch.stamp, old["id"]))
    writer.delete_file(old["id"])
    batch.write(writer)
    state.files -= 1
    state.bytes -= old["size"] or 0
    state.save()
    return seq


def _same(old: dict[str, Any], record: Record) -> bool:
    """Is ``record`` what is published already? (Republishing it must change nothing.)"""
    for key in ("scheme", "filename", "size", "sha256", "mtime", "version"):
        if old[key] != getattr(record, key):
            return False
    if (old["time_start"], old["time_end"]) != (record.time_start, record.time_end):
        return False
    # JSON fields compared as canonical text: key order does not matter, NaN equals NaN
    return all(
        _canonical(old[key]) == _canonical(getattr(record, key))
        for key in ("facets", "corrections", "metadata")
    )


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _value_ids(writer: bulk.Writer, wanted: dict[str, set[str]]) -> dict[str, dict[str, int]]:
    """Ids of every (key, value) in the batch, by key then value, creating the missing ones."""
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
    return ids


def _tree_rows(parents: Counter[str]) -> list[tuple[str, str, str, int, int]]:
    """(path, parent, component, files delta, leaves delta) of every prefix touched."""
    files: dict[str, int] = {}
    level = {path: delta for path, delta in parents.items() if delta}
    while level:  # one level up at a time: shared ancestors are summed, not walked per file
        up: dict[str, int] = {}
        for path, delta in level.items():
            files[path] = files.get(path, 0) + delta
            parent = path.rpartition("/")[0]
            if parent:
                up[parent] = up.get(parent, 0) + delta
        level = up
    rows = []
    for path in sorted(files):  # about the primary key's order: neighbouring pages
        delta = files[path]
        if delta:
            parent, _, component = path.rpartition("/")
            rows.append((path, parent, component, delta, parents.get(path, 0)))
    return rows


def _file_row(
    record: Record, file_id: int, *, facets: str, ids: list[int], seq: int, stamp: str
) -> tuple[Any, ...]:
    return (
        file_id,
        record.name,
        record.scheme,
        record.filename,
        record.size,
        record.sha256,
        record.mtime,
        record.version,
        record.time_start,
        record.time_end,
        facets,
        bulk.pack(
            file_id,
            seq,
            size=record.size,
            start=record.time_start,
            end=record.time_end,
            ids=ids,
        ),
        bulk.dump_json(record.corrections) if record.corrections else "[]",
        bulk.dump_json(record.metadata),
        seq,
        stamp,
    )
