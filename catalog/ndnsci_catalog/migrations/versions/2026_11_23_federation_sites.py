"""federation: origin site of every record, the site identity and trust list, signed change
batches, conflicts

Existing rows keep ``site`` NULL: they are this catalog's own, published before it had a name;
``ndnsci catalog site init`` stamps them (docs/federation.md).

Revision ID: 2026_11_23_federation
Revises: 2026_11_22_tree_without_path
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_23_federation"
down_revision = "2026_11_22_tree_without_path"
branch_labels = None
depends_on = None

CText = sa.String().with_variant(sa.String(collation="C"), "postgresql")
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    # plain ADD COLUMN (nullable, no default): SQLite needs no table copy, PostgreSQL no rewrite
    op.add_column("files", sa.Column("site", sa.String(64), nullable=True))
    op.add_column("changes", sa.Column("site", sa.String(64), nullable=True))
    op.create_table(
        "sites",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("prefix", CText, nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False),
        sa.Column("local", sa.Boolean(), nullable=False),
        sa.Column("added_at", sa.String(32), nullable=False),
        sa.Column("boot", sa.BigInteger(), nullable=False),
        sa.Column("applied", sa.BigInteger(), nullable=False),
        sa.Column("covered_seq", sa.BigInteger(), nullable=False),
        sa.Column("refused", sa.BigInteger(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("name", name="pk_sites"),
        sa.UniqueConstraint("prefix", name="uq_sites_prefix"),
    )
    op.create_table(
        "change_batches",
        sa.Column("number", Id, autoincrement=False, nullable=False),
        sa.Column("first_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("changes", sa.Integer(), nullable=False),
        sa.Column("envelope", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("number", name="pk_change_batches"),
    )
    op.create_table(
        "conflicts",
        sa.Column("id", Id, nullable=False),
        sa.Column("name", CText, nullable=False),
        sa.Column("held_by", sa.String(64), nullable=True),
        sa.Column("claimed_by", sa.String(64), nullable=True),
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_conflicts"),
    )
    op.create_index("ix_conflicts_name", "conflicts", ["name"])


def downgrade() -> None:
    op.drop_index("ix_conflicts_name", table_name="conflicts")
    op.drop_table("conflicts")
    op.drop_table("change_batches")
    op.drop_table("sites")
    with op.batch_alter_table("changes") as batch:
        batch.drop_column("site")
    with op.batch_alter_table("files") as batch:
        batch.drop_column("site")
