"""Alembic environment: runs on the connection the caller passes, or on ``sqlalchemy.url``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from ndnsci_catalog.database import make_engine
from ndnsci_catalog.models import Base

config = context.config
target_metadata = Base.metadata


def run(connection: Connection) -> None:
    # render_as_batch: SQLite alters tables by copying them; later migrations need it
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    run(connection)
else:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        run(conn)
        conn.commit()
    engine.dispose()
