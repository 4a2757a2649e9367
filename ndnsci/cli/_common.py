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
    and once (argparse makes a formatter for every argument it adds: reading the width each time
    cost a fetch ~0.7 M instructions; DEVELOPERS.md "Start-up budget")."""
    width = terminal_columns() - 2

    def make(prog: str) -> argparse.HelpFormatter:
        return kind(prog, width=width)

    return make


def fail(command: str, message: object, code: int = 2) -> int:
    """Print ``ndnsci COMMAND: message`` on stderr (no traceback) and return ``code``."""
    print(f"ndnsci {command}: {message}", file=sys.stderr)
    return code
