"""``ndnsci sample DIR``: write a small sample archive to try ndnsci without a download.

CMIP5 netCDF files (three models, two experiments, four variables, monthly, real CF time axes
and CMIP5 global attributes) in the DRS layout under DIR/cmip5/, and CMS files (random bytes)
named by logical file names under DIR/store/. Publish and serve it::

    ndnsci sample /tmp/sample
    ndnsci up --data /tmp/sample        # or: ndnsci publish /tmp/sample; ndnsci serve ...
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ndnsci.cli._common import count, fail


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sample",
        help="write a small CMIP5 + CMS sample archive",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dest", metavar="DIR", help="where to write it (created if needed)")
    p.add_argument(
        "--big-mib", type=count, default=32, metavar="N", help="size of the large CMS file (32)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import MissingDependencyError
    from ndnsci.sdk.sample import make_sample

    try:
        sample = make_sample(args.dest, big_mib=max(0, args.big_mib))
    except (MissingDependencyError, OSError) as exc:
        return fail("sample", exc)
    for path in sample.files:
        print(path)
    print(
        f"{len(sample.cmip5)} CMIP5 and {len(sample.cms)} CMS files, {sample.size:,} bytes "
        f"in {args.dest}",
        file=sys.stderr,
    )
    return 0
