"""``ndnsci search [FACET=VALUE ...]``: find published files in a catalog.

    ndnsci search model=HadCM3 variable=tas,pr experiment!=rcp45 --start 1990 --end 1999
    ndnsci search --q "sea surface" --json > found.jsonl      # a manifest for `ndnsci fetch`
    ndnsci search scheme=cms --csv
    ndnsci search model=HadCM3 --facets                       # value counts instead of files

Filters: ``FACET=A,B`` keeps files whose facet is A or B; several facets must all match;
``FACET!=A`` drops A. Names go to stdout, one per line (``--json``: one JSON object per file,
which ``ndnsci fetch --manifest`` reads; ``--csv``: a table with a column per facet); the count
goes to stderr. Exit status: 0 when files were found, 1 when none, 2 on an error (an unknown
facet lists the valid ones).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from ndnsci.cli._common import catalog_option, count, fail


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "search",
        help="find published files by facets and text",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("filters", nargs="*", metavar="FACET=VALUE", help="facet filters")
    p.add_argument("--q", metavar="TEXT", help="free text")
    p.add_argument("--prefix", metavar="NAME", help="NDN name prefix, e.g. /CMIP5/output1/MOHC")
    p.add_argument("--start", metavar="TIME", help="time coverage overlaps from (1990, 1990-06)")
    p.add_argument("--end", metavar="TIME", help="time coverage overlaps until")
    p.add_argument("--limit", type=count, metavar="N", help="at most N files (default: all)")
    output = p.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON object per file")
    output.add_argument("--csv", action="store_true", help="CSV with a column per facet")
    output.add_argument("--facets", action="store_true", help="value counts of every facet")
    catalog_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import CatalogError, UnknownFacetError
    from ndnsci.sdk.client import Catalog, Query

    try:
        query = Query.parse(" ".join(args.filters))
        extra = Query.build({}, q=args.q, prefix=args.prefix, start=args.start, end=args.end)
        query = Query(query.params + extra.params)
        with Catalog(args.catalog) as catalog:
            found = catalog.query(query)
            if args.facets:
                return _print_facets(found.facets)
            count = _print_files(found, args)
    except UnknownFacetError as exc:
        return fail("search", exc.args[0])
    except CatalogError as exc:
        return fail("search", exc)
    print(f"{count} of {len(found)} files match {query}", file=sys.stderr)
    return 0 if count else 1


def _print_files(found: Any, args: argparse.Namespace) -> int:
    files = found if args.limit is None else found[: max(0, args.limit)]
    out = sys.stdout
    count = 0
    if args.csv:
        # every scheme has its own facets: the columns are their union, in order of appearance
        rows = [
            {**{k: v for k, v in f.to_dict().items() if k != "facets"}, **f.facets} for f in files
        ]
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        writer = csv.DictWriter(out, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
        return len(rows)
    for f in files:
        out.write((json.dumps({**f.to_dict(), "path": f.path}) if args.json else f.name) + "\n")
        count += 1
    return count


def _print_facets(counts: dict[str, dict[str, int]]) -> int:
    for facet, values in counts.items():
        if values:
            shown = ", ".join(f"{value} ({n})" for value, n in values.items())
            print(f"{facet}: {shown}")
    return 0
