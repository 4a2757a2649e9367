"""Helpers shared by the commands that talk to a catalog."""

from __future__ import annotations

import argparse
import sys


def catalog_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        metavar="URL",
        help="catalog URL (default: $NDNSCI_CATALOG, else http://127.0.0.1:8000)",
    )


def fail(command: str, message: object, code: int = 2) -> int:
    """Print ``ndnsci COMMAND: message`` on stderr (no traceback) and return ``code``."""
    print(f"ndnsci {command}: {message}", file=sys.stderr)
    return code
