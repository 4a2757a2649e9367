"""Run the Alembic migrations programmatically (``ndnsci catalog migrate``, tests, ``serve``)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

SCRIPT_LOCATION = "ndnsci_catalog:migrations"


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(slug)s")
    if url is not None:
        # '%' is ConfigParser interpolation syntax: a password may contain one
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(url: str | None = None, *, connection: Connection | None = None) -> None:
    """Bring the database at ``url`` (or on ``connection``) to the newest schema."""
    command.upgrade(alembic_config(url, connection), "head")


def schema_behind(url: str) -> tuple[str | None, str] | None:
    """None when the database at ``url`` is at the newest schema, else (its revision, None for
    an empty database; the newest one)."""
    from ndnsci_catalog.database import make_engine

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()
    return None if current == head else (current, head)
