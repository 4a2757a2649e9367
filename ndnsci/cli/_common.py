"""Helpers shared by the commands that talk to a catalog."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ndnsci.base.environment import terminal_columns

if TYPE_CHECKING:  # argparse is imported where a parser is built (not by `ndnsci fetch NAME`)
    import argparse
    from collections.abc import Callable

CATALOG_OPTION: tuple[tuple[str, ...], dict[str, Any]] = (
    ("--catalog",),
    {
        "metavar": "URL",
        "help": "catalog URL (default: $NDNSCI_CATALOG, else http://127.0.0.1:8000)",
    },
)


def catalog_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    flags, kwargs = CATALOG_OPTION
    parser.add_argument(*flags, **kwargs)


def formatter(
    kind: type[argparse.HelpFormatter] | None = None,
) -> Callable[..., argparse.HelpFormatter]:
    """A ``formatter_class``: argparse's ``kind`` at the terminal's width, read without shutil
    and once (argparse makes a formatter for every argument it adds: reading the width each time
    cost a fetch ~0.7 M instructions; DEVELOPERS.md "Start-up budget")."""
    import argparse

    width = terminal_columns() - 2
    cls = kind or argparse.HelpFormatter

    def make(prog: str) -> argparse.HelpFormatter:
        return cls(prog, width=width)

    return make


def fail(command: str, message: object, code: int = 2) -> int:
    """Print ``ndnsci COMMAND: message`` on stderr (no traceback) and return ``code``."""
    print(f"ndnsci {command}: {message}", file=sys.stderr)
    return code


class UsageError(Exception):
    """A bad argument: ``main`` prints it as one line, ``ndnsci COMMAND: message``, exit 2."""


_DB_FORMS = "give a SQLite file's path, sqlite:///PATH or postgresql://USER@HOST/NAME"


def database_url(given: str | None) -> str:
    """The database of ``--db`` (``given``), else of ``$NDNSCI_DB``, else the user's SQLite
    catalog, as a SQLAlchemy URL: a plain path is a SQLite file. Only the user's own catalog
    has its folder made; any other SQLite file's folder must exist.

    Raises UsageError: not a database URL, a SQLite file in no folder, a directory.
    """
    from ndnsci_catalog.config import Settings, default_db_url

    text = given or Settings().db
    if not given and text == default_db_url():
        return text
    return _checked_db_url(text, "--db" if given else "$NDNSCI_DB")


def _checked_db_url(text: str, source: str) -> str:
    from pathlib import Path

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    shown = repr(text[:200]) if "@" not in text else "(a URL with credentials)"
    if not text.strip():
        raise UsageError(f"{source} is empty: {_DB_FORMS}")
    url_text = text if "://" in text else f"sqlite:///{Path(text).expanduser().absolute()}"
    try:
        url = make_url(url_text)
        url.get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError):
        raise UsageError(f"{source} {shown} is not a database URL: {_DB_FORMS}") from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        database = str(url.database)
        if not database.startswith("file:"):
            path = Path(database).expanduser()
            if path.is_dir():
                raise UsageError(f"{source} {shown} is a directory, not a SQLite file")
            if not path.parent.is_dir():
                raise UsageError(
                    f"{source} {shown}: no folder {path.parent} for the SQLite file "
                    "(create it first)"
                )
    return url_text


def database_failure(exc: BaseException) -> str | None:
    """One line for a database's refusal (SQLAlchemy's errors: not a database, cannot
    connect, permission denied...), or None for any other exception."""
    errors = sys.modules.get("sqlalchemy.exc")
    if errors is None or not isinstance(exc, errors.SQLAlchemyError):
        return None
    cause = getattr(exc, "orig", None) or exc
    first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
    return f"the database refused: {first[:300]}"


def port_number(text: str) -> int:
    """argparse ``type=`` of a TCP/UDP port: 0-65535 (0: any free one)."""
    import argparse

    if not text.isdigit() or len(text) > 5 or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text[:20]!r}")
    return int(text)


def count(text: str) -> int:
    """argparse ``type=`` of a count: a whole number from 0 to a billion."""
    import argparse

    if not text.isdigit() or len(text) > 10 or int(text) > 10**9:
        raise argparse.ArgumentTypeError(f"not a count (0 to 1000000000): {text[:20]!r}")
    return int(text)


def http_url(text: str) -> str:
    """argparse ``type=`` of an http:// or https:// URL with a host."""
    import argparse
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"not an http(s)://HOST URL: {text[:100]!r}")
    return text
