"""tree_nodes without its path column

A node's path is its parent's path, '/' and its component: storing it too made a third of each
row, and a bulk publish creates several nodes per file. Nothing reads it by path (nodes are
keyed by (parent, component)).

Revision ID: 2026_11_22_tree_without_path
Revises: 2026_11_22_original_name
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_22_tree_without_path"
down_revision = "2026_11_22_original_name"
branch_labels = None
depends_on = None

CText = sa.String().with_variant(sa.String(collation="C"), "postgresql")


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_column("tree_nodes", "path")
        return
    _rebuild_sqlite(with_path=False)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.add_column("tree_nodes", sa.Column("path", CText))
        op.execute("UPDATE tree_nodes SET path = parent || '/' || component")
        op.alter_column("tree_nodes", "path", existing_type=CText, nullable=False)
        return
    _rebuild_sqlite(with_path=True)


def _rebuild_sqlite(*, with_path: bool) -> None:
    """Copy into a new WITHOUT ROWID table (one B-tree, rows in key order)."""
    op.execute("ALTER TABLE tree_nodes RENAME TO tree_nodes_old")
    path = [sa.Column("path", sa.String(), nullable=False)] if with_path else []
    op.create_table(
        "tree_nodes",
        *path,
        sa.Column("parent", sa.String(), nullable=False),
        sa.Column("component", sa.String(), nullable=False),
        sa.Column("files", sa.BigInteger(), nullable=False),
        sa.Column("leaves", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("parent", "component", name=op.f("pk_tree_nodes")),
        sqlite_with_rowid=False,
    )
    columns = "parent, component, files, leaves"
    source = f"parent || '/' || component, {columns}" if with_path else columns
    op.execute(
        f"INSERT INTO tree_nodes ({'path, ' if with_path else ''}{columns}) "
        f"SELECT {source} FROM tree_nodes_old ORDER BY parent, component"
    )
    op.execute("DROP TABLE tree_nodes_old")
