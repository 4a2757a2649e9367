"""initial schema: files, facets, name tree, free text, change feed, history, tokens

Revision ID: 2026_11_22_initial
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_22_initial"
down_revision = None
branch_labels = None
depends_on = None

CText = sa.String().with_variant(sa.String(collation="C"), "postgresql")
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("id", Id, primary_key=True),
        sa.Column("name", CText, nullable=False),
        sa.Column("scheme", sa.String(64), nullable=False),
        sa.Column("filename", sa.String()),
        sa.Column("size", sa.BigInteger()),
        sa.Column("sha256", sa.String(64)),
        sa.Column("mtime", sa.Float()),
        sa.Column("version", sa.String()),
        sa.Column("time_start", sa.String(32)),
        sa.Column("time_end", sa.String(32)),
        sa.Column("facets", sa.JSON(), nullable=False),
        sa.Column("facet_ids", sa.String(), nullable=False),
        sa.Column("corrections", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON()),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("published_at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_files")),
        sa.UniqueConstraint("name", name=op.f("uq_files_name")),
    )
    op.create_table(
        "facet_values",
        sa.Column("id", Id, primary_key=True),
        sa.Column("key", CText, nullable=False),
        sa.Column("value", CText, nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_facet_values")),
        sa.UniqueConstraint("key", "value", name=op.f("uq_facet_values_key")),
    )
    op.create_index("ix_facet_values_key_count", "facet_values", ["key", "count"])
    op.create_table(
        "facet_keys",
        sa.Column("key", CText, nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_facet_keys")),
    )
    op.create_table(
        "file_facets",
        sa.Column("value_id", Id, nullable=False),
        sa.Column("file_id", Id, nullable=False),
        sa.PrimaryKeyConstraint("value_id", "file_id", name=op.f("pk_file_facets")),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "tree_nodes",
        sa.Column("path", CText, nullable=False),
        sa.Column("parent", CText, nullable=False),
        sa.Column("component", CText, nullable=False),
        sa.Column("files", sa.BigInteger(), nullable=False),
        sa.Column("leaves", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("path", name=op.f("pk_tree_nodes")),
    )
    op.create_index("ix_tree_nodes_parent_component", "tree_nodes", ["parent", "component"])
    op.create_table(
        "changes",
        sa.Column("seq", Id, primary_key=True, autoincrement=False),
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("name", CText, nullable=False),
        sa.Column("version", sa.String()),
        sa.Column("at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_changes")),
    )
    op.create_table(
        "file_history",
        sa.Column("id", Id, primary_key=True),
        sa.Column("name", CText, nullable=False),
        sa.Column("version", sa.String()),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("replaced_at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_file_history")),
    )
    op.create_index("ix_file_history_name", "file_history", ["name"])
    state = op.create_table(
        "catalog_state",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("files", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_state")),
    )
    op.bulk_insert(state, [{"id": 1, "last_seq": 0, "files": 0, "bytes": 0}])
    op.create_table(
        "tokens",
        sa.Column("id", Id, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("name", name=op.f("uq_tokens_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_tokens_token_hash")),
    )
    _create_fulltext()


def _create_fulltext() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # documents are pre-tokenised by ndnsci_catalog.fulltext (same tokens on both backends)
        op.execute(
            "CREATE VIRTUAL TABLE files_fts "
            "USING fts5(doc, tokenize='unicode61 remove_diacritics 0')"
        )
    else:
        op.execute("CREATE TABLE files_fts (file_id BIGINT PRIMARY KEY, doc TSVECTOR NOT NULL)")
        op.execute("CREATE INDEX ix_files_fts_doc ON files_fts USING GIN (doc)")


def downgrade() -> None:
    op.execute("DROP TABLE files_fts")
    for table in (
        "tokens",
        "catalog_state",
        "file_history",
        "changes",
        "tree_nodes",
        "file_facets",
        "facet_keys",
        "facet_values",
        "files",
    ):
        op.drop_table(table)
