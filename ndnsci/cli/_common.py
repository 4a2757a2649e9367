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
