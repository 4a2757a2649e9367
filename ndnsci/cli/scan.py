"""``ndnsci scan``: translate every file under a directory and summarise what would be published.

A data-centre operator runs it before publishing: how many files get a name, which correction
rules were needed, which files cannot be named and why, the facet values found, and the name
collisions: different files that would get one name (``ndnsci publish`` keeps the first and
reports the others). With ``--metadata`` files are named exactly as ``ndnsci publish`` names
them (headers read, ``ndnsci/sdk/describe.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from typing import Any

from ndnsci.cli._common import fail
from ndnsci.cli.translate import make_converter
from ndnsci.sdk.describe import walk
from ndnsci_translators import Translation
from ndnsci_translators.registry import AUTO

TOP_VALUES = 6


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "scan",
        help="summarise how the files under a directory translate into NDN names",
        description=__doc__,
    )
    p.add_argument("roots", nargs="+", metavar="DIR", help="directories to walk")
    p.add_argument("--scheme", default=AUTO, help="naming scheme (default: auto)")
    p.add_argument(
        "--metadata", action="store_true", help="read netCDF global attributes of each file"
    )
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=run, reverse=False)


def run(args: argparse.Namespace) -> int:
    import os

    for root in args.roots:
        if not os.path.exists(root):  # a typo is not "Scanned 0 files"
            return fail("scan", f"{root}: no such file or directory")
    convert = make_converter(args)
    started = time.perf_counter()
    results = [convert(path) for root in args.roots for path in walk(root)]
    summary = summarise(results)
    summary["collisions"] = collisions(results)
    summary["seconds"] = round(time.perf_counter() - started, 3)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary, args.roots)
    return 1 if summary["failed"] or summary["collisions"] else 0


def collisions(results: list[Translation]) -> list[dict[str, Any]]:
    """Names two or more different files translate to, with every file's path, in order."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for r in results:
        if r.ok and r.name is not None:
            by_name[r.name].append(r.input)
    return [{"name": name, "sources": paths} for name, paths in by_name.items() if len(paths) > 1]


def summarise(results: list[Translation]) -> dict[str, Any]:
    schemes: Counter[str] = Counter()
    facets: dict[str, Counter[str]] = defaultdict(Counter)
    rules: Counter[str] = Counter()
    examples: dict[str, str] = {}
    failures = []
    for r in results:
        if not r.ok:
            assert r.error is not None
            failures.append({"input": r.input, **r.error.to_dict()})
            continue
        schemes[r.scheme or "?"] += 1
        for key, value in r.facets.items():
            if value is not None:
                facets[key][value] += 1
        for c in r.corrections:
            rules[c.rule] += 1
            examples.setdefault(c.rule, f"{r.input}: {c.message}")
    return {
        "files": len(results),
        "named": len(results) - len(failures),
        "corrected": sum(1 for r in results if r.ok and r.corrections),
        "failed": len(failures),
        "schemes": dict(schemes),
        "facets": {key: dict(counter.most_common()) for key, counter in facets.items()},
        "corrections": {
            rule: {"count": n, "example": examples[rule]} for rule, n in rules.most_common()
        },
        "failures": failures,
    }


def print_summary(summary: dict[str, Any], roots: list[str]) -> None:
    out = sys.stdout
    out.write(
        f"Scanned {summary['files']} files under {', '.join(roots)} in {summary['seconds']} s\n"
        f"  named: {summary['named']} ({summary['corrected']} after corrections), "
        f"could not be named: {summary['failed']}, "
        f"name collisions: {len(summary['collisions'])}\n"
        f"  schemes: {_counts(summary['schemes'])}\n"
    )
    if summary["facets"]:
        out.write("\nFacets (distinct values: most common)\n")
        for key, values in summary["facets"].items():
            if key in ("activity", "mip_era", "filename"):
                continue
            top = dict(list(values.items())[:TOP_VALUES])
            more = " ..." if len(values) > TOP_VALUES else ""
            out.write(f"  {key:<16} {len(values):>4}: {_counts(top)}{more}\n")
    if summary["corrections"]:
        out.write("\nCorrection rules applied\n")
        for rule, info in summary["corrections"].items():
            out.write(f"  {rule:<28} {info['count']:>5}  e.g. {info['example']}\n")
    if summary["failures"]:
        out.write("\nCould not be named\n")
        for f in summary["failures"]:
            out.write(f"  {f['input']}\n    {f['code']}: {f['message']}\n")
    if summary["collisions"]:
        out.write(
            f"\nName collisions ({len(summary['collisions'])}): one name for two or more files "
            "(`ndnsci publish` publishes the first and reports the others; --replace: the last)\n"
        )
        for c in summary["collisions"]:
            out.write(f"  {c['name']}\n" + "".join(f"    {p}\n" for p in c["sources"]))


def _counts(values: dict[str, int]) -> str:
    return ", ".join(f"{value} ({n})" for value, n in values.items())
