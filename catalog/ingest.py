"""Publishing and retracting: idempotent upserts keyed by name, in the caller's transaction.

One call is one batch and the caller commits it, so a crash loses nothing already committed and
never leaves half a record: the files row, its facets, its free text, the tree counts and the
change-feed entry are written together or not at all.

Publishers are serialised by a row lock on ``catalog_state`` (taken by the first statement, a
write, so SQLite takes its write lock at once instead of failing to upgrade a read transaction).
Under that lock sequence numbers and file ids are allocated by counting up.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, text, update
from sqlalchemy.orm import Session

from . import fulltext
from .models import (
    CatalogState,
    Change,
    FacetKey,
    FacetValue,
    File,
    FileFacet,
    FileHistory,
    table,
)
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

    def __init__(self, session: Session) -> None:
        t = table(CatalogState)
        session.execute(update(t).where(t.c.id == 1).values(last_seq=t.c.last_seq))
        row = session.execute(select(t).where(t.c.id == 1)).one()
        self.session = session
        self.seq: int = row.last_seq
        self.files: int = row.files
        self.bytes: int = row.bytes
        self.next_id = int(session.scalar(select(func.max(File.id))) or 0) + 1

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def save(self) -> None:
        t = table(CatalogState)
        self.session.execute(
            update(t)
            .where(t.c.id == 1)
            .values(last_seq=self.seq, files=self.files, bytes=self.bytes)
        )


class _Batch:
    """Rows and counter deltas collected for one batch, written with one statement per table."""

    def __init__(self) -> None:
        self.facet_rows: list[dict[str, int]] = []
        self.facet_deletes: list[dict[str, int]] = []
        self.value_deltas: Counter[int] = Counter()
        self.tree_files: Counter[str] = Counter()
        self.tree_leaves: Counter[str] = Counter()
        self.fts_docs: list[tuple[int, str]] = []
        self.fts_deletes: list[int] = []
        self.changes: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []

    def tree(self, name: str, delta: int) -> None:
        parts = name.split("/")  # escaped components never contain '/'
        for end in range(2, len(parts)):
            self.tree_files["/".join(parts[:end])] += delta
        self.tree_leaves["/".join(parts[:-1])] += delta

    def write(self, session: Session) -> None:
        if self.history:
            session.execute(insert(table(FileHistory)), self.history)
        if self.facet_deletes:
            t = table(FileFacet)
            session.execute(
                delete(t).where(t.c.value_id == bindparam("v"), t.c.file_id == bindparam("f")),
                self.facet_deletes,
            )
        if self.facet_rows:
            session.execute(insert(table(FileFacet)), self.facet_rows)
        _apply_value_deltas(session, self.value_deltas)
        _apply_tree_deltas(session, self.tree_files, self.tree_leaves)
        fulltext.delete(session, self.fts_deletes)
        fulltext.insert(session, self.fts_docs)
        if self.changes:
            session.execute(insert(table(Change)), self.changes)


def publish(session: Session, records: Sequence[Record]) -> PublishResult:
    """Insert new names, replace changed ones (keeping the old version in the history)."""
    by_name = {r.name: r for r in records}  # the last record of a name wins
    result = PublishResult()
    if not by_name:
        return result
    state = _State(session)
    existing = _existing(session, list(by_name))
    value_ids = _value_ids(session, by_name.values())
    batch = _Batch()
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    stamp = now()
    for record in by_name.values():
        fingerprint = record.fingerprint()
        old = existing.get(record.name)
        if old is not None and old["fingerprint"] == fingerprint:
            result.unchanged += 1
            continue
        seq = state.next_seq()
        ids = [value_ids[(k, v)] for k, v in record.facets.items() if v is not None]
        if old is None:
            file_id = state.next_id
            state.next_id += 1
            state.files += 1
            batch.tree(record.name, +1)
            result.inserted += 1
        else:
            file_id = old["id"]
            state.bytes -= old["size"] or 0
            batch.history.append(_history_row(old, seq, stamp))
            batch.fts_deletes.append(file_id)
            old_ids = _unpack(old["facet_ids"])
            batch.value_deltas.subtract(old_ids)
            batch.facet_deletes.extend({"v": v, "f": file_id} for v in old_ids)
            result.replaced += 1
        state.bytes += record.size or 0
        row = _file_row(
            record, file_id=file_id, ids=ids, fingerprint=fingerprint, seq=seq, stamp=stamp
        )
        (inserts if old is None else updates).append(row)
        batch.value_deltas.update(ids)
        batch.facet_rows.extend({"value_id": v, "file_id": file_id} for v in ids)
        batch.fts_docs.append(
            (file_id, fulltext.document(record.components, record.facets, record.metadata))
        )
        batch.changes.append(
            {
                "seq": seq,
                "op": "publish",
                "name": record.name,
                "version": record.version,
                "at": stamp,
            }
        )
    if inserts:
        session.execute(insert(table(File)), inserts)
    if updates:
        _update_files(session, updates)
    batch.write(session)
    state.save()
    result.last_seq = state.seq
    return result


def retract(session: Session, name: str) -> int | None:
    """Remove ``name`` (its last version goes to the history); the change's seq, or None."""
    state = _State(session)
    old = _existing(session, [name]).get(name)
    if old is None:
        return None
    seq = state.next_seq()
    stamp = now()
    batch = _Batch()
    batch.history.append(_history_row(old, seq, stamp))
    old_ids = _unpack(old["facet_ids"])
    batch.value_deltas.subtract(old_ids)
    batch.facet_deletes.extend({"v": v, "f": old["id"]} for v in old_ids)
    batch.fts_deletes.append(old["id"])
    batch.tree(name, -1)
    batch.changes.append({"seq": seq, "op": "retract", "name": name, "version": None, "at": stamp})
    session.execute(delete(table(File)).where(table(File).c.id == old["id"]))
    batch.write(session)
    state.files -= 1
    state.bytes -= old["size"] or 0
    state.save()
    return seq


def _existing(session: Session, names: list[str]) -> dict[str, Any]:
    columns = list(table(File).c)
    found: dict[str, Any] = {}
    for chunk in chunks(names):
        rows = session.execute(select(*columns).where(File.name.in_(chunk))).mappings()
        found.update((row["name"], dict(row)) for row in rows)
    return found


def _value_ids(session: Session, records: Iterable[Record]) -> dict[tuple[str, str], int]:
    """Ids of every (key, value) in the batch, creating the missing ones."""
    wanted: dict[str, set[str]] = {}
    for record in records:
        for key, value in record.facets.items():
            if value is not None:
                wanted.setdefault(key, set()).add(value)
    ids = _lookup_values(session, wanted)
    created: dict[str, set[str]] = {}
    for key, values in wanted.items():
        for value in values:
            if (key, value) not in ids:
                created.setdefault(key, set()).add(value)
    if created:
        session.execute(
            insert(table(FacetValue)),
            [{"key": k, "value": v, "count": 0} for k, vs in created.items() for v in vs],
        )
        known = set(session.scalars(select(FacetKey.key).where(FacetKey.key.in_(created))))
        new_keys = sorted(set(created) - known)
        if new_keys:
            session.execute(insert(table(FacetKey)), [{"key": k} for k in new_keys])
        ids.update(_lookup_values(session, created))
    return ids


def _lookup_values(session: Session, wanted: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    ids: dict[tuple[str, str], int] = {}
    for key, values in wanted.items():
        for chunk in chunks(sorted(values)):
            rows = session.execute(
                select(FacetValue.id, FacetValue.value).where(
                    FacetValue.key == key, FacetValue.value.in_(chunk)
                )
            )
            ids.update(((key, value), id_) for id_, value in rows)
    return ids


def _apply_value_deltas(session: Session, deltas: Counter[int]) -> None:
    rows = [{"i": i, "d": d} for i, d in deltas.items() if d]
    if rows:
        t = table(FacetValue)
        session.execute(
            update(t).where(t.c.id == bindparam("i")).values(count=t.c.count + bindparam("d")),
            rows,
        )


def _apply_tree_deltas(session: Session, files: Counter[str], leaves: Counter[str]) -> None:
    rows: list[dict[str, Any]] = [
        {
            "path": path,
            "parent": path.rsplit("/", 1)[0],
            "component": path.rsplit("/", 1)[1],
            "files": delta,
            "leaves": leaves.get(path, 0),
        }
        for path, delta in files.items()
        if delta or leaves.get(path, 0)
    ]
    if not rows:
        return
    session.execute(
        text(
            "INSERT INTO tree_nodes (path, parent, component, files, leaves) "
            "VALUES (:path, :parent, :component, :files, :leaves) "
            "ON CONFLICT (path) DO UPDATE SET files = tree_nodes.files + excluded.files, "
            "leaves = tree_nodes.leaves + excluded.leaves"
        ),
        rows,
    )
    emptied = [r["path"] for r in rows if r["files"] < 0]
    for chunk in chunks(emptied):
        session.execute(
            text("DELETE FROM tree_nodes WHERE files <= 0 AND path IN :paths").bindparams(
                bindparam("paths", expanding=True)
            ),
            {"paths": list(chunk)},
        )


def _update_files(session: Session, rows: list[dict[str, Any]]) -> None:
    t = table(File)
    columns = [c.name for c in t.c if c.name not in ("id", "name")]
    session.execute(
        update(t)
        .where(t.c.id == bindparam("b_id"))
        .values({c: bindparam(f"b_{c}") for c in columns}),
        [{f"b_{k}": v for k, v in row.items() if k != "name"} for row in rows],
    )


def _file_row(
    record: Record, *, file_id: int, ids: list[int], fingerprint: str, seq: int, stamp: str
) -> dict[str, Any]:
    return {
        "id": file_id,
        "name": record.name,
        "scheme": record.scheme,
        "filename": record.filename,
        "size": record.size,
        "sha256": record.sha256,
        "mtime": record.mtime,
        "version": record.version,
        "time_start": record.time_start,
        "time_end": record.time_end,
        "facets": record.facets,
        "facet_ids": ",".join(map(str, ids)),
        "corrections": record.corrections,
        "metadata": record.metadata,
        "fingerprint": fingerprint,
        "seq": seq,
        "published_at": stamp,
    }


def _history_row(old: dict[str, Any], seq: int, stamp: str) -> dict[str, Any]:
    kept = {k: v for k, v in old.items() if k not in ("id", "facet_ids", "fingerprint")}
    return {
        "name": old["name"],
        "version": old["version"],
        "record": kept,
        "seq": seq,
        "replaced_at": stamp,
    }


def _unpack(facet_ids: str) -> list[int]:
    return [int(i) for i in facet_ids.split(",")] if facet_ids else []
