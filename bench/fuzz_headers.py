"""The netCDF header reader on damaged files, for longer than the test suite's bounded run.

Every cut of every file of tests/translators/headerfuzz.py (classic, 64-bit offset, netCDF-4),
then random cuts, bit flips in the header and random bytes until ``--minutes`` are up. Prints one
line per outcome (``described`` or the MetadataError code) with its count; any other exception
is a bug: its case goes to stderr and the exit status is 1.

    .venv/bin/python bench/fuzz_headers.py [--minutes 10] [--seed 29]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "translators"))
import headerfuzz


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    seen: collections.Counter[str] = collections.Counter()
    failed = 0
    with tempfile.TemporaryDirectory() as folder:
        bases = headerfuzz.base_files(Path(folder))
        deadline = time.monotonic() + 60 * args.minutes
        cases = itertools.chain(
            headerfuzz.every_cut(bases), headerfuzz.random_cases(bases, random.Random(args.seed))
        )
        path = Path(folder) / "case.nc"
        for label, data in cases:
            if time.monotonic() >= deadline:
                break
            path.write_bytes(data)
            try:
                seen[headerfuzz.outcome(path, label)] += 1
            except AssertionError as exc:
                failed += 1
                print(f"fuzz_headers: {exc}", file=sys.stderr)
    for code, count in sorted(seen.items()):
        print(f"{code}\t{count}")
    print(f"bugs\t{failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
