"""The ``ndnsci`` command line.

Each sub-command lives in its own module exposing ``register(subparsers)``; heavy libraries are
imported inside the command that needs them, so ``ndnsci --help`` stays fast.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import TYPE_CHECKING, Any

from ndnsci import __version__
from ndnsci.cli._common import UsageError, database_failure, formatter
from ndnsci.errors import missing

if TYPE_CHECKING:  # argparse is imported by build_parser: `ndnsci fetch NAME` runs without it
    import argparse
    from collections.abc import Sequence

# sub-command -> module, in the order ``ndnsci --help`` lists them
COMMANDS = {
    "translate": "ndnsci.cli.translate",
    "inspect": "ndnsci.cli.inspect",
    "scan": "ndnsci.cli.scan",
    "catalog": "ndnsci.cli.catalog",
    "gateway": "ndnsci.cli.gateway",
    "publish": "ndnsci.cli.publish",
    "forwarder": "ndnsci.cli.forwarder",
    "serve": "ndnsci.cli.serve",
    "search": "ndnsci.cli.search",
    "fetch": "ndnsci.cli.fetch",
    "transfer": "ndnsci.cli.transfer",
    "keys": "ndnsci.cli.keys",
    "sample": "ndnsci.cli.sample",
    "up": "ndnsci.cli.up",
    "site": "ndnsci.cli.site",
    "testbed": "ndnsci.cli.testbed",
    "native": "ndnsci.cli.native",
    "xrootd": "ndnsci.cli.xrootd",
}

# an optional module a command may need -> the extra of `pip install 'ndnsci[extra]'` that brings it
EXTRAS = {
    "ndnsci_catalog": "server",
    "fastapi": "server",
    "sqlalchemy": "server",
    "uvicorn": "server",
    "alembic": "server",
    "psycopg": "postgres",
    "netCDF4": "netcdf",
    "cftime": "netcdf",
    "xarray": "xarray",
    "ndn": "ndn",
    "pandas": "analysis",
    "intake_esm": "intake",
    "matplotlib": "testbed",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or just the sub-command ``only`` (what ``main`` runs: loading
    every command's module would cost a ``ndnsci fetch`` ~50 ms before its first Interest)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="ndnsci",
        description="Find science data by what it is and fetch it over Named Data Networking.",
        formatter_class=formatter(),
    )
    parser.add_argument("--version", action="version", version=f"ndnsci {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command, module in COMMANDS.items():
        if only is None or command == only:
            importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ndnsci`` console script; returns the process exit code."""
    # What is loaded by now lives as long as the process: the collector stops walking it (each
    # collection, then three more at exit), which saves `ndnsci fetch NAME` ~10 M of its
    # ~175 M instructions; frozen here first, then again once the command's module is loaded
    # (~1.9 M of the fetch's 110 M), and by `ndnsci fetch` once the data plane is (~1.4 M).
    # Collection goes on as before for what the command allocates.
    gc.freeze()
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and words[0] in COMMANDS else None
    args = _plain_args(command, words) or build_parser(only=command).parse_args(words)
    gc.freeze()
    try:
        code: int = args.func(args)
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").partition(".")[0])
        if extra is None:
            raise
        print(missing(exc.name or "", extra, f"ndnsci {args.command}"), file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"ndnsci {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``ndnsci translate ... | head``): not an error of ours
        sys.stderr.close()
        return 0
    except Exception as exc:
        failure = database_failure(exc)
        if failure is None:
            raise
        print(f"ndnsci {args.command}: {failure}", file=sys.stderr)
        return 1
    return code


def _plain_args(command: str | None, words: list[str]) -> Any:
    """The command's arguments read without argparse when it can read them (``parse_plain``:
    ``ndnsci fetch``), else None: argparse reads everything else, errors and --help included."""
    if command is None:
        return None
    parse = getattr(importlib.import_module(COMMANDS[command]), "parse_plain", None)
    return None if parse is None else parse(words[1:])
