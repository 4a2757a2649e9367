"""contentless free text on SQLite: files_fts keeps no copy of the documents

The FTS5 table stored each file's document twice: in its index and in a content table of its
own (a third of a bulk load's free-text work, ~50 bytes of every 77 in its pages). The index is
all a search reads (``SELECT rowid ... MATCH``); a publish that replaces or retracts a file
gives the old document again to remove it, made from the files row as published
(``ingest._old_document``). PostgreSQL's tsvector table is unchanged.

The upgrade copies the documents into a contentless table; the downgrade makes them again
from the files rows (the contentless table cannot give them back).

Revision ID: 2026_11_27_contentless_fulltext
Revises: 2026_11_23_token_expiry
Create Date: 2026-11-27
"""

from __future__ import annotations

import json

from alembic import op

revision = "2026_11_27_contentless_fulltext"
down_revision = "2026_11_23_token_expiry"
branch_labels = None
depends_on = None

#: documents are pre-tokenised by ndnsci_catalog.fulltext (the same tokens on both backends)
TOKENIZE = "tokenize='unicode61 remove_diacritics 0'"
#: rows per statement of the downgrade
CHUNK = 10_000


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(f"CREATE VIRTUAL TABLE files_fts_new USING fts5(doc, {TOKENIZE}, content='')")
    op.execute("INSERT INTO files_fts_new (rowid, doc) SELECT rowid, doc FROM files_fts")
    op.execute("DROP TABLE files_fts")
    op.execute("ALTER TABLE files_fts_new RENAME TO files_fts")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    from ndnsci_catalog import fulltext
    from ndnsci_catalog.records import name_components

    op.execute(f"CREATE VIRTUAL TABLE files_fts_old USING fts5(doc, {TOKENIZE})")
    raw = op.get_bind().connection.driver_connection
    assert raw is not None
    rows = raw.execute(
        "SELECT id, name, facets, metadata, original, original_path FROM files ORDER BY id"
    )
    while chunk := rows.fetchmany(CHUNK):
        docs = [
            (file_id, fulltext.document(
                name_components(name), json.loads(facets) or {},
                json.loads(metadata) if metadata is not None else None, original, path,
            ))
            for file_id, name, facets, metadata, original, path in chunk
        ]  # fmt: skip
        raw.executemany("INSERT INTO files_fts_old (rowid, doc) VALUES (?, ?)", docs)
    op.execute("DROP TABLE files_fts")
    op.execute("ALTER TABLE files_fts_old RENAME TO files_fts")
