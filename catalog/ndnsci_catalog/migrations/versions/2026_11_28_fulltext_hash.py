"""free text on SQLite: a publish batch's new terms held in memory until its commit

An FTS5 table keeps the terms of the documents inserted in a transaction in an in-memory hash
and writes them to its index as a new segment whenever the hash passes ``hashsize`` (1 MB by
default), so a 50,000-record publish wrote dozens of small segments that FTS5 then merged.
At 32 MB a batch's terms are written about once, at its commit: 7.5 -> 6.4 µs per document
at 1M documents (docs/catalog.md, "Figures"), for at most 32 MB more memory during a publish.
The setting is kept in the table's own configuration (``files_fts_config``), so nothing is
rebuilt. PostgreSQL's tsvector table is unchanged.

Revision ID: 2026_11_28_fulltext_hash
Revises: 2026_11_27_contentless_fulltext
Create Date: 2026-11-28
"""

from __future__ import annotations

from alembic import op

revision = "2026_11_28_fulltext_hash"
down_revision = "2026_11_27_contentless_fulltext"
branch_labels = None
depends_on = None

#: bytes of new terms files_fts holds in memory before writing them to its index
HASH_BYTES = 32 << 20
#: FTS5's default
DEFAULT_HASH_BYTES = 1 << 20


def upgrade() -> None:
    _hash(HASH_BYTES)


def downgrade() -> None:
    _hash(DEFAULT_HASH_BYTES)


def _hash(size: int) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(f"INSERT INTO files_fts (files_fts, rank) VALUES ('hashsize', {int(size)})")
