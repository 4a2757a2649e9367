"""Helpers shared by the commands that talk to a catalog."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from ndnsci._settings import terminal_columns


def catalog_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        metavar="URL",
        help="catalog URL (default: $NDNSCI_CATALOG, else http://127.0.0.1:8000)",
    )


def formatter(
    kind: type[argparse.HelpFormatter] = argparse.HelpFormatter,
) -> Callable[..., argparse.HelpFormatter]:
    """A ``formatter_class``: argparse's ``kind`` at the terminal's width, read without shutil
    (DEVELOPERS.md "Start-up budget": the parsers a fetch builds use it)."""

    def make(prog: str) -> argparse.HelpFormatter:
        return kind(prog, width=terminal_columns() - 2)

    return make


def fail(command: str, message: object, code: int = 2) -> int:
    """Print ``ndnsci COMMAND: message`` on stderr (no traceback) and return ``code``."""
    print(f"ndnsci {command}: {message}", file=sys.stderr)
    return code
