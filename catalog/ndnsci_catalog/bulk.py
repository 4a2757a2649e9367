"""Raw DBAPI writes for publishing: the bulk path under :mod:`ndnsci_catalog.ingest`.

A batch of thousands of records must cost tens of microseconds per record, so rows are plain
tuples prepared in Python and written through the driver in the caller's transaction:
``executemany`` on SQLite (in-process, so per-row statements are cheap), ``COPY`` and set-based
statements on PostgreSQL (one round trip per table instead of one per row). SQLAlchemy's
compiled statements cost more per row than the database does, and are kept for everything else.

Statements are constants; every value is a bound parameter or a COPY row, never SQL text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import msgspec
from sqlalchemy import Connection

from ndnsci_catalog.fulltext import pg_vector

#: the columns of ``files`` that come from the record (prepared before the lock is taken)
RECORD_COLUMNS = (
    "name", "scheme", "filename", "original", "original_path", "size", "sha256", "mtime",
    "version", "time_start", "time_end", "facets", "corrections", "metadata",
)  # fmt: skip
#: the columns of ``files`` a publish writes, in this order: the record's, then those known
#: under the lock (``site``: the record's origin, docs/federation.md)
FILE_COLUMNS = (*RECORD_COLUMNS, "id", "packed", "seq", "published_at", "site")
JSON_COLUMNS = ("facets", "corrections", "metadata")
CHANGE_COLUMNS = ("seq", "op", "name", "version", "at", "file_id", "site")
HISTORY_COLUMNS = ("name", "version", "record", "seq", "replaced_at")
TREE_COLUMNS = ("parent", "component", "files", "leaves")
CHUNK = 500
#: SQLite page cache of a publishing connection (KiB): the name index of a million files
#: (~150 MB) stays cached, instead of being re-read from the OS for each batch's random names
PUBLISH_CACHE_KIB = 262_144
#: checkpoint the WAL of a publishing connection once it holds 1 GB (65,536 pages of 16 KB)
#: instead of every 1,000 pages: a page rewritten by several batches is copied to the
#: database once, and fsync runs far less often. The checkpoint runs in a thread of its own
#: (:func:`checkpoint_in_background`), so the writer goes on writing batches meanwhile
CHECKPOINT_WAL_BYTES = 1 << 30
#: a commit checkpoints the WAL itself from 2 GB on (in 16 KB pages)
FALLBACK_CHECKPOINT_PAGES = 2 * CHECKPOINT_WAL_BYTES // 16384
#: passes of one checkpoint at most: each copies what the writer committed during the last one
CHECKPOINT_PASSES = 100
#: a WAL restarted after a checkpoint is cut back to this size (else it stays at its largest
#: and its size says nothing of what is left to copy)
WAL_SIZE_LIMIT = 64 << 20


# ``files.packed``: what the facet index loads of a file besides its scheme, in one short column
# (two Python objects per row instead of seven: that is most of the load time), little-endian:
# id, seq, size, time_start and time_end (int64; times as YYYYMMDDhhmmss, NULLs as the
# sentinels below), then the ids of the file's facet values (int32)
NO_SIZE = -1
#: a missing time never overlaps: no start is after every end, no end before every start
NO_START = 2**63 - 1
NO_END = -(2**63)
HEAD = struct.Struct("<qqqqq")


def time_code(value: str) -> int:
    """``'1850-01-16T12:00:00'`` (normalised, fixed width) -> ``18500116120000``."""
    return int(value[0:4] + value[5:7] + value[8:10] + value[11:13] + value[14:16] + value[17:19])


def unpack_ids(packed: bytes | memoryview | None) -> list[int]:
    """The facet value ids of a ``files.packed`` column."""
    body = bytes(packed or b"")[HEAD.size :]
    return list(struct.unpack(f"<{len(body) // 4}i", body))


#: ``json.dumps(value, separators=(",", ":"))`` without building an encoder per call
encode_json = json.JSONEncoder(separators=(",", ":")).encode


def dump_json(value: Any) -> str | None:
    return None if value is None else encode_json(value)


def flat_json_encoder() -> Callable[[Mapping[str, str | None]], str]:
    """:func:`dump_json` of a flat object of strings (or nulls), such as a record's validated
    facets, in a quarter of its time: msgspec's encoder, whose text is json's exactly when it
    is printable ASCII with nothing escaped (the usual facets); anything else is json's."""
    encode = msgspec.json.Encoder().encode
    plain = _stdlib_flat_encoder()

    def dump(value: Mapping[str, str | None]) -> str:
        try:
            text = encode(value)
        except (UnicodeEncodeError, TypeError):  # a lone surrogate, a key not a string
            return plain(value)
        if text.isascii() and b"\\" not in text and b"\x7f" not in text:
            return text.decode("ascii")
        return plain(value)

    return dump


def _stdlib_flat_encoder() -> Callable[[Mapping[str, str | None]], str]:
    """json's C encoder made once, with no cycle check (a flat object has no containers in it
    to repeat): without json's per-call setup, a third of the time of one."""
    if c_make_encoder is None:  # a Python without json's C accelerator
        return encode_json
    encode = c_make_encoder(None, None, encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


def load_json(value: Any) -> Any:
    """A JSON column as the driver returns it (text on SQLite; text or parsed on PostgreSQL)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def writer(connection: Connection) -> Writer:
    if connection.dialect.name == "sqlite":
        return Writer(connection)
    return PostgresWriter(connection)


class Writer:
    """SQLite: ``executemany`` with ``?`` parameters; also the base for PostgreSQL."""

    mark = "?"
    #: a batch whose probed names are all new is written without looking each name up
    #: (:func:`ndnsci_catalog.ingest.publish`): on SQLite, the lookup is ~6% of the write
    optimistic = True

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql(f"PRAGMA cache_size = -{PUBLISH_CACHE_KIB}")
            # no checkpoint inside a commit: the thread of checkpoint_in_background does it,
            # unless the WAL grows past twice its mark (the thread cannot keep up)
            connection.exec_driver_sql(f"PRAGMA wal_autocheckpoint = {FALLBACK_CHECKPOINT_PAGES}")
            connection.exec_driver_sql(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
            ((_, _, path),) = self.all("PRAGMA database_list")[:1]
            if path:  # not an in-memory database
                checkpoint_in_background(path)

    def sql(self, statement: str) -> str:
        return statement.replace("?", self.mark)

    def many(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.connection.exec_driver_sql(self.sql(statement), list(rows))

    def all(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.connection.exec_driver_sql(self.sql(statement), tuple(params)).all())

    # -- reads ------------------------------------------------------------------------------

    def existing(self, names: list[str]) -> dict[str, dict[str, Any]]:
        """The current rows of those of ``names`` that are published."""
        select = ", ".join(FILE_COLUMNS)
        found: dict[str, dict[str, Any]] = {}
        for rows in self._in_list(f"SELECT {select} FROM files WHERE name", names):
            for row in rows:
                record = dict(zip(FILE_COLUMNS, row, strict=True))
                for column in JSON_COLUMNS:
                    record[column] = load_json(record[column])
                found[record["name"]] = record
        return found

    def any_published(self, names: list[str]) -> bool:
        """Is any of ``names`` (a few) published?"""
        marks = ", ".join("?" for _ in names)
        return bool(names) and bool(
            self.all(f"SELECT 1 FROM files WHERE name IN ({marks}) LIMIT 1", names)
        )

    def value_ids(self, key: str, values: list[str]) -> dict[str, int]:
        ids: dict[str, int] = {}
        sql = "SELECT value, id FROM facet_values WHERE key = ? AND value"
        for rows in self._in_list(sql, values, key):
            ids.update(rows)
        return ids

    def _in_list(self, select: str, items: list[str], *first: Any) -> Iterable[list[Any]]:
        """Rows of ``select`` (ending in a column) whose column is one of ``items``."""
        # one JSON array parameter: one statement per batch whatever its size
        yield self.all(select + " IN (SELECT value FROM json_each(?))", (*first, json.dumps(items)))

    # -- writes -----------------------------------------------------------------------------

    def insert_values(self, rows: list[tuple[str, str]]) -> None:
        self.many("INSERT INTO facet_values (key, value) VALUES (?, ?)", rows)

    def insert_files(self, rows: list[tuple[Any, ...]]) -> None:
        self._insert("files", FILE_COLUMNS, rows)

    def insert_new_files(self, rows: list[tuple[Any, ...]]) -> int:
        """Insert the rows whose name is not published (as :meth:`insert_files`); how many."""
        if not rows:
            return 0
        statement = _insert_sql("files", FILE_COLUMNS) + " ON CONFLICT (name) DO NOTHING"
        inserted = self.connection.exec_driver_sql(self.sql(statement), list(rows))
        return int(inserted.rowcount)

    def delete_files_from(self, first_id: int) -> None:
        """Delete the files rows from ``first_id`` on (those a batch has just inserted)."""
        self.many("DELETE FROM files WHERE id >= ?", [(first_id,)])

    def update_files(self, rows: list[tuple[Any, ...]]) -> None:
        """Replace whole rows by id (``rows`` as for :meth:`insert_files`)."""
        kept = [i for i, c in enumerate(FILE_COLUMNS) if c not in ("id", "name")]
        assignments = ", ".join(f"{FILE_COLUMNS[i]} = ?" for i in kept)
        at_id = FILE_COLUMNS.index("id")
        self.many(
            f"UPDATE files SET {assignments} WHERE id = ?",
            [(*(row[i] for i in kept), row[at_id]) for row in rows],
        )

    def delete_file(self, file_id: int) -> None:
        self.many("DELETE FROM files WHERE id = ?", [(file_id,)])

    def insert_changes(self, rows: list[tuple[Any, ...]]) -> None:
        self._insert("changes", CHANGE_COLUMNS, rows)

    def insert_changes_of_files_from(self, first_id: int) -> None:
        """A ``publish`` change for each files row from ``first_id`` on (those a batch has just
        inserted, ids and seqs in one order), read from the rows: no tuple per row to make and
        bind again (the change feed was 8% of an optimistic write)."""
        self.many(
            f"INSERT INTO changes ({', '.join(CHANGE_COLUMNS)}) "
            "SELECT seq, 'publish', name, version, published_at, id, site FROM files "
            "WHERE id >= ? ORDER BY id",
            [(first_id,)],
        )

    def insert_history(self, rows: list[tuple[Any, ...]]) -> None:
        self._insert("file_history", HISTORY_COLUMNS, rows)

    def insert_fulltext(self, docs: list[tuple[int, str]]) -> None:
        self.many("INSERT INTO files_fts (rowid, doc) VALUES (?, ?)", docs)

    def delete_fulltext(self, rows: list[tuple[int, str]]) -> None:
        """Remove the free text of (id, document) rows. The FTS5 table is contentless (no copy
        of the documents: migration ``2026_11_27_contentless_fulltext``): a row is removed by
        giving its document again, exactly as it was inserted."""
        self.many("INSERT INTO files_fts (files_fts, rowid, doc) VALUES ('delete', ?, ?)", rows)

    def add_tree_counts(self, rows: list[tuple[str, str, int, int]]) -> None:
        """Add (files, leaves) to each (parent, component), creating nodes; drop the nodes left
        empty. ``rows`` hold one row per node."""
        self.many(
            "INSERT INTO tree_nodes (parent, component, files, leaves) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (parent, component) DO UPDATE SET "
            "files = tree_nodes.files + excluded.files, "
            "leaves = tree_nodes.leaves + excluded.leaves",
            rows,
        )
        emptied = [(r[0], r[1]) for r in rows if r[2] < 0]
        self.many(
            "DELETE FROM tree_nodes WHERE parent = ? AND component = ? AND files <= 0", emptied
        )

    def _insert(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        self.many(_insert_sql(table, columns), rows)


def _insert_sql(table: str, columns: Sequence[str]) -> str:
    marks = ", ".join("?" for _ in columns)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"


#: the checkpoint thread of each SQLite database file (while it runs)
checkpoints: dict[str, threading.Thread] = {}
_checkpoints_lock = threading.Lock()


def checkpoint_in_background(path: str) -> None:
    """Copy the WAL of the SQLite database ``path`` into it, in a thread and on a connection
    of their own, once the WAL holds CHECKPOINT_WAL_BYTES, unless a checkpoint is running.

    A PASSIVE checkpoint takes no lock a writer or reader waits for: the publisher goes on
    committing batches to the WAL while the pages committed before are copied (the copy and
    its fsync, seconds for a GB, used to stall the commit that crossed the mark). A failed
    checkpoint is tried again at the next batch; nothing is lost, the WAL holds the data."""
    try:
        if os.stat(path + "-wal").st_size < CHECKPOINT_WAL_BYTES:
            return
    except OSError:
        return
    with _checkpoints_lock:
        if path in checkpoints:
            return
        thread = checkpoints[path] = threading.Thread(
            target=_checkpoint, args=(path,), name="ndnsci-checkpoint", daemon=True
        )
    thread.start()


def _checkpoint(path: str) -> None:
    """Copy until every frame of the WAL is in the database: only then does the writer start
    the WAL over (a pass copies what was committed when it began, and the writer commits on;
    a WAL never started over grows to the size of all that was written, and every page read
    looks through more of it)."""
    try:
        with closing(sqlite3.connect(path, timeout=30, isolation_level=None)) as connection:
            for _ in range(CHECKPOINT_PASSES):
                _, frames, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if copied >= frames:
                    break
    except sqlite3.Error:
        pass  # tried again at the next batch
    finally:
        with _checkpoints_lock:
            del checkpoints[path]


class PostgresWriter(Writer):
    """PostgreSQL: COPY for the big inserts, set-based statements fed by COPY for the rest."""

    mark = "%s"
    #: names are looked up first, always: one set-based statement per batch
    optimistic = False

    def __init__(self, connection: Connection) -> None:
        super().__init__(connection)
        self.raw: Any = connection.connection.driver_connection
        self._temp = False

    def _in_list(self, select: str, items: list[str], *first: Any) -> Iterable[list[Any]]:
        for start in range(0, len(items), 10_000):
            yield self.all(select + " = ANY(?)", (*first, items[start : start + 10_000]))

    def _copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        with (
            self.raw.cursor() as cursor,
            cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def _insert(self, table: str, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self._copy(table, columns, rows)

    def insert_fulltext(self, docs: list[tuple[int, str]]) -> None:
        if docs:
            self._copy("files_fts", ("file_id", "doc"), ((i, pg_vector(d)) for i, d in docs))

    def delete_fulltext(self, rows: list[tuple[int, str]]) -> None:
        ids = [file_id for file_id, _ in rows]
        self.many("DELETE FROM files_fts WHERE file_id = ANY(?)", [(ids,)] if ids else [])

    def _temp_tables(self) -> None:
        """Per-connection scratch tables, emptied at every commit."""
        if self._temp:
            return
        for statement in (
            'CREATE TEMP TABLE IF NOT EXISTS tmp_tree (parent TEXT COLLATE "C", '
            'component TEXT COLLATE "C", files BIGINT, leaves BIGINT) ON COMMIT DELETE ROWS',
        ):
            self.connection.exec_driver_sql(statement)
        self._temp = True

    def add_tree_counts(self, rows: list[tuple[str, str, int, int]]) -> None:
        if not rows:
            return
        self._temp_tables()
        self._copy("tmp_tree", TREE_COLUMNS, rows)
        self.connection.exec_driver_sql(
            "INSERT INTO tree_nodes (parent, component, files, leaves) "
            "SELECT parent, component, files, leaves FROM tmp_tree "
            "ORDER BY parent, component ON CONFLICT (parent, component) DO UPDATE SET "
            "files = tree_nodes.files + excluded.files, "
            "leaves = tree_nodes.leaves + excluded.leaves"
        )
        self.connection.exec_driver_sql(
            "DELETE FROM tree_nodes n USING tmp_tree t "
            "WHERE n.parent = t.parent AND n.component = t.component AND t.files < 0 "
            "AND n.files <= 0"
        )
        self.connection.exec_driver_sql("TRUNCATE tmp_tree")
