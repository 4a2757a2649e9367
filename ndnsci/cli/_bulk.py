"""The bulk side of ``ndnsci fetch``: ``--query`` and ``--manifest`` (see ``ndnsci fetch -h``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ndnsci.cli._common import fail


def run(args: argparse.Namespace, options: Any) -> int:
    from ndnsci._fetch import Interrupted, download
    from ndnsci.errors import CatalogError, TransportError

    try:
        items = _from_query(args) if args.query else _from_manifest(args.manifest)
    except CatalogError as exc:
        return fail("fetch", exc)
    except OSError as exc:
        return fail("fetch", f"cannot read the manifest: {exc}")
    if not items:
        print("ndnsci fetch: nothing to fetch: no file matches", file=sys.stderr)
        return 1
    interactive = sys.stderr.isatty() and not args.quiet
    try:
        report = download(
            items,
            args.output,
            parallel=args.parallel,
            resume=not args.restart,
            progress="rich" if interactive else False,
            layout=args.layout,
            options=options,
        )
    except TransportError as exc:
        return fail("fetch", exc)  # no forwarder: the message says how to start one
    except Interrupted as exc:
        _print_report(exc.report, args)
        print(
            "ndnsci fetch: interrupted; run the same command again to continue "
            "(complete files are kept, partial ones resume)",
            file=sys.stderr,
        )
        return 130
    _print_report(report, args)
    return 0 if report.ok else 1


def _from_query(args: argparse.Namespace) -> list[Any]:
    from ndnsci._client import Catalog, Query

    with Catalog(args.catalog) as catalog:
        return catalog.manifest(Query.parse(args.query))


def _from_manifest(path: str) -> list[Any]:
    from ndnsci._manifest import parse

    if path == "-":
        return list(parse(sys.stdin))
    with open(path, encoding="utf-8") as f:
        return list(parse(f))


def _print_report(report: Any, args: argparse.Namespace) -> None:
    lines = [json.dumps(o.to_dict()) + "\n" for o in report.outcomes]
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            f.writelines(lines)
    if args.json:
        sys.stdout.writelines(lines)
    for outcome in report.failed:
        print(f"FAILED {outcome.name}\n    {outcome.error}", file=sys.stderr)
    print(f"ndnsci fetch: {report.summary()}", file=sys.stderr)
