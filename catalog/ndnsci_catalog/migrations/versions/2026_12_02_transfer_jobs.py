"""transfer jobs: transfer_jobs, transfer_files and replicas

A job copies a selection of files to a folder at a site; the site's transfer agent runs it
(:mod:`ndnsci_catalog.transfers`); ``replicas`` records the verified copies jobs made. The
tables are new: nothing to carry over.

Revision ID: 2026_12_02_transfer_jobs
Revises: 2026_11_28_fulltext_hash
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_12_02_transfer_jobs"
down_revision = "2026_11_28_fulltext_hash"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TEXT = sa.String().with_variant(sa.String(collation="C"), "postgresql")


def upgrade() -> None:
    op.create_table(
        "transfer_jobs",
        sa.Column("id", _ID, nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("destination", sa.String(1024), nullable=False),
        sa.Column("engine", sa.String(32), nullable=False),
        sa.Column("selection", sa.JSON(), nullable=False),
        sa.Column("cancelled", sa.Boolean(), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("updated", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_transfer_jobs"),
    )
    op.create_table(
        "transfer_files",
        sa.Column("id", _ID, nullable=False),
        sa.Column("job_id", sa.BigInteger(), nullable=False),
        sa.Column("name", _TEXT, nullable=False),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("size", sa.BigInteger()),
        sa.Column("sha256", sa.String(64)),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("bytes_done", sa.BigInteger(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("engine", sa.String(32)),
        sa.Column("error", sa.String()),
        sa.Column("retry_at", sa.Float()),
        sa.Column("agent", sa.String(200)),
        sa.Column("lease_until", sa.Float()),
        sa.Column("started", sa.Float()),
        sa.Column("finished", sa.Float()),
        sa.PrimaryKeyConstraint("id", name="pk_transfer_files"),
        sa.UniqueConstraint("job_id", "name", name="uq_transfer_files_job_id"),
    )
    op.create_index("ix_transfer_files_job_id", "transfer_files", ["job_id"])
    op.create_index("ix_transfer_files_state", "transfer_files", ["state"])
    op.create_table(
        "replicas",
        sa.Column("id", _ID, nullable=False),
        sa.Column("name", _TEXT, nullable=False),
        sa.Column("site", sa.String(64)),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("size", sa.BigInteger()),
        sa.Column("sha256", sa.String(64)),
        sa.Column("job_id", sa.BigInteger()),
        sa.Column("created", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_replicas"),
        sa.UniqueConstraint("name", "path", name="uq_replicas_name"),
    )
    op.create_index("ix_replicas_name", "replicas", ["name"])


def downgrade() -> None:
    op.drop_table("replicas")
    op.drop_table("transfer_files")
    op.drop_table("transfer_jobs")
