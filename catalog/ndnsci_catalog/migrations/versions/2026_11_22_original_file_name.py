"""original file name: files.original and files.original_path

The translator's input (the file name or path before corrections) was dropped at publish; the
portal shows the original file name (KISTI showed the original CMIP5 name). ``original`` is the
last component of that input; ``original_path`` the path below the directory ``ndnsci publish``
walked. Existing rows were published without it: their original is their canonical file name
(the best that is known), their path unknown.

Revision ID: 2026_11_22_original_name
Revises: 2026_11_22_facet_index
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_22_original_name"
down_revision = "2026_11_22_facet_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("files", sa.Column("original", sa.String()))
    op.add_column("files", sa.Column("original_path", sa.String()))
    op.execute("UPDATE files SET original = filename WHERE filename IS NOT NULL")
    bind = op.get_bind()
    files = sa.table("files", sa.column("id"), sa.column("name"), sa.column("original"))
    unnamed = bind.execute(sa.select(files.c.id, files.c.name).where(files.c.original.is_(None)))
    for file_id, name in unnamed.all():  # no filename: the last name component, as publish does
        bind.execute(
            files.update().where(files.c.id == file_id).values(original=name.rsplit("/", 1)[-1])
        )
    with op.batch_alter_table("files") as batch:
        batch.alter_column("original", existing_type=sa.String(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("files") as batch:
        batch.drop_column("original_path")
        batch.drop_column("original")
