"""Run the Alembic migrations programmatically (``ndnsci catalog migrate``, tests, ``serve``)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection

SCRIPT_LOCATION = "ndnsci.catalog:migrations"


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
