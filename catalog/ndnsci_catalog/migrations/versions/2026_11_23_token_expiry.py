"""token expiry: tokens.expires_at

A publish token may be given a time after which it is refused (``ndnsci catalog token create
NAME --expires 90d``); existing tokens never expire (NULL), as before.

Revision ID: 2026_11_23_token_expiry
Revises: 2026_11_23_federation
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "2026_11_23_token_expiry"
down_revision = "2026_11_23_federation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tokens", sa.Column("expires_at", sa.String(32)))


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("expires_at")
