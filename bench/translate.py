"""Translation throughput: real corpus paths through the Python API and through the CLI.

Prints one figure per line. Targets (issue 2): >= 100,000 CMIP5 paths/s through the Python API on
one core; the CLI streams 400,000 paths in under 10 s. The "split+json floor" line is what the
same loop costs with no translation at all (split the path, dump a dict), for scale.

    .venv/bin/python bench/translate.py [--repeat N]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ndnsci_translators import get_translator, translate

CORPORA = Path(__file__).parents[1] / "tests" / "data" / "corpora"


def corpus(file: str, column: str) -> list[str]:
    with open(CORPORA / file, newline="") as f:
        return [row[column] for row in csv.DictReader(f, delimiter="\t")]


def rate(func, items: list[str], repeat: int) -> float:
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        for item in items:
            func(item)
        best = max(best, len(items) / (time.perf_counter() - start))
    return best


def floor(item: str) -> str:
    return json.dumps({"parts": item.split("/")})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cli-lines", type=int, default=400_000)
    args = parser.parse_args()

    sets = {
        "cmip5": corpus("cmip5_paths.tsv", "path"),
        "cmip6": corpus("cmip6_paths.tsv", "path"),
        "cms": corpus("cms_lfns.tsv", "lfn"),
    }
    for scheme, items in sets.items():
        translator = get_translator(scheme)
        direct = rate(translator.translate, items, args.repeat)
        auto = rate(translate, items, args.repeat)
        print(f"api {scheme} scheme={scheme}: {direct:,.0f} paths/s ({len(items)} real paths)")
        print(f"api {scheme} scheme=auto: {auto:,.0f} paths/s")
    print(f"api split+json floor: {rate(floor, sets['cmip5'], args.repeat):,.0f} paths/s")

    cmip5 = sets["cmip5"]
    lines = (cmip5 * (args.cli_lines // len(cmip5) + 1))[: args.cli_lines]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    ndnsci = Path(sys.executable).with_name("ndnsci")
    try:
        with open(f.name) as stdin:
            start = time.perf_counter()
            proc = subprocess.run(
                [str(ndnsci), "translate", "--stdin", "--json"],
                stdin=stdin,
                stdout=subprocess.PIPE,
                check=False,
            )
            seconds = time.perf_counter() - start
    finally:
        os.unlink(f.name)
    emitted = proc.stdout.count(b"\n")
    print(f"cli translate --json {len(lines):,} paths: {seconds:.2f} s ({emitted:,} lines out)")
    print(f"cli translate --json: {len(lines) / seconds:,.0f} paths/s")


if __name__ == "__main__":
    main()
