"""``ndnsci fetch``: retrieve files over NDN, verified, into a directory.

    ndnsci fetch NAME ... [-o DIR]                       files by NDN name
    ndnsci fetch --query 'model=HadCM3 variable=tas' [-o DIR] [--parallel K] [--layout drs|flat]
    ndnsci fetch --manifest FILE [-o DIR] ...            the files of a manifest (- for stdin)

Each file is discovered through its RDR metadata, fetched with a window of Interests in flight,
checked (segment digests, the publisher's signature, the whole-file SHA-256) and renamed into
place; ``--resume`` continues an interrupted download.

Bulk downloads (``--query``, asked from the catalog at --catalog or $NDNSCI_CATALOG, or
``--manifest``: the JSON lines of the catalog's manifests or of ``ndnsci search --json``)
fetch K files at once into DIR, in the DRS directory layout by default. They are resumable
across runs: complete files are kept after a checksum check (remembered in
DIR/.ndnsci-fetch.jsonl), partial ones continue; Ctrl-C stops cleanly and the same command
continues. A report lists every failed file and why.

Exit status: 0 when every file arrived and verified, 1 when one failed, 2 on a usage or
catalog error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ndnsci.cli._common import catalog_option, fail


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fetch",
        help="fetch files by NDN name",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="NDN names, e.g. /ndnsci/files/a.nc")
    bulk = p.add_argument_group("bulk downloads")
    bulk.add_argument("--query", metavar="FILTERS", help="the files of a catalog search")
    bulk.add_argument("--manifest", metavar="FILE", help="the files of a manifest (- for stdin)")
    bulk.add_argument(
        "--layout",
        choices=("drs", "flat"),
        default="drs",
        help="drs: DIR/<name's path> (default); flat: every file in DIR",
    )
    bulk.add_argument("--report", metavar="FILE", help="write every file's outcome as JSON lines")
    bulk.add_argument(
        "--restart", action="store_true", help="fetch everything again (no skip, no resume)"
    )
    catalog_option(bulk)
    p.add_argument("-o", "--output", default=".", metavar="DIR", help="output directory (.)")
    p.add_argument(
        "--cc",
        choices=("fixed", "aimd", "cubic"),
        default="aimd",
        help="window control (aimd)",
    )
    p.add_argument("--window", type=int, default=64, help="(initial) Interests in flight (64)")
    p.add_argument("--max-window", type=int, default=1024, help="window cap for aimd/cubic")
    p.add_argument(
        "--lifetime", type=int, default=4000, metavar="MS", help="Interest lifetime (4000 ms)"
    )
    p.add_argument(
        "--parallel", type=int, metavar="K", help="files at once (1 for NAMEs, 4 for bulk)"
    )
    p.add_argument("--resume", action="store_true", help="continue partial downloads")
    p.add_argument("--trust", metavar="KEYID", help="require metadata signed by this key id")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="one JSON summary line per file")
    p.add_argument("--ls", action="store_true", help="list the directories NAME instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.ndn.consumer import FetchOptions

    sources = sum(bool(x) for x in (args.names, args.query, args.manifest))
    if sources != 1:
        return fail("fetch", "give NAMEs, --query FILTERS or --manifest FILE (one of them)")
    if args.ls:
        return _list(args.names)
    args.parallel = args.parallel or (1 if args.names else 4)
    if args.window < 1 or args.parallel < 1 or args.lifetime < 10:
        return fail("fetch", "--window, --parallel >= 1 and --lifetime >= 10")
    opts = FetchOptions(
        cc=args.cc,
        window=args.window,
        max_window=max(args.max_window, args.window),
        lifetime_ms=args.lifetime,
        resume=args.resume,
        trust_key=args.trust,
    )
    if not args.names:
        from ndnsci.cli import _bulk

        return _bulk.run(args, opts)
    os.makedirs(args.output, exist_ok=True)
    started = time.monotonic()
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    with progress, ThreadPoolExecutor(max_workers=args.parallel) as pool:
        outcomes = list(pool.map(lambda n: _fetch_one(n, args.output, opts, progress), args.names))
    return _summary(outcomes, time.monotonic() - started, args.json)


def _list(names: list[str]) -> int:
    from ndnsci.errors import NdnError
    from ndnsci.ndn.consumer import list_directory

    failed = 0
    for name in names:
        try:
            entries = list_directory(name)
        except NdnError as exc:
            print(f"ndnsci fetch: {name}: {exc}", file=sys.stderr)
            failed += 1
            continue
        for entry, is_dir in entries:
            print(f"{name.rstrip('/')}/{entry}{'/' if is_dir else ''}")
    return 1 if failed else 0


def _fetch_one(name: str, out_dir: str, opts: Any, progress: _Progress) -> tuple[str, Any]:
    from ndnsci.errors import NdnError
    from ndnsci.ndn.consumer import fetch

    task = progress.add(name)
    try:
        result = fetch(name, out_dir, opts, lambda done, total: progress.update(task, done, total))
    except (NdnError, OSError) as exc:
        progress.fail(task)
        return name, exc
    progress.finish(task)
    return name, result


def _summary(outcomes: list[tuple[str, Any]], seconds: float, as_json: bool) -> int:
    import json

    from ndnsci.ndn.consumer import FetchResult

    failed = 0
    total = 0
    for name, outcome in outcomes:
        if not isinstance(outcome, FetchResult):
            failed += 1
            if as_json:
                print(json.dumps({"name": name, "error": str(outcome)}))
            print(f"ndnsci fetch: FAILED {name}: {outcome}", file=sys.stderr)
            continue
        total += outcome.size
        if as_json:
            fields = {k: v for k, v in vars(outcome).items()}
            print(json.dumps({**fields, "mbps": round(outcome.mbps, 2)}))
            continue
        print(
            f"{outcome.path}: {outcome.size:,} bytes in {outcome.seconds:.2f} s "
            f"({outcome.mbps:.1f} MB/s), {outcome.retransmissions} retransmissions "
            f"({outcome.timeouts} timeouts, {outcome.nacks} Nacks, {outcome.rejected} rejected), "
            f"sha256 {outcome.checksum}, signer {outcome.signer}"
            + (f", {outcome.resumed_segments} segments resumed" if outcome.resumed_segments else "")
        )
        for warning in outcome.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
    if len(outcomes) > 1 and not as_json:
        rate = total / seconds / 1e6 if seconds > 0 else 0.0
        print(f"{len(outcomes) - failed}/{len(outcomes)} files, {total:,} bytes, {rate:.1f} MB/s")
    return 1 if failed else 0


class _Progress:
    """rich progress bars, one per file and a total; a no-op when stderr is not a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.lock = threading.Lock()
        self.bar: Any = None
        self.totals: dict[int, int] = {}
        self.done: dict[int, int] = {}
        self.overall: Any = None

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                transient=False,
            )
            self.bar.start()
            self.overall = self.bar.add_task("total", total=0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def add(self, name: str) -> int:
        if self.bar is None:
            return 0
        short = name if len(name) <= 50 else "..." + name[-47:]
        task: int = self.bar.add_task(short, total=None)
        return task

    def update(self, task: int, done: int, total: int) -> None:
        if self.bar is None:
            return
        with self.lock:
            self.totals[task] = total
            self.done[task] = done
            self.bar.update(task, completed=done, total=total)
            self.bar.update(
                self.overall, completed=sum(self.done.values()), total=sum(self.totals.values())
            )

    def finish(self, task: int) -> None:
        if self.bar is not None:
            self.bar.update(task, completed=self.totals.get(task, 0))

    def fail(self, task: int) -> None:
        if self.bar is not None:
            self.bar.update(task, description="[failed]", refresh=True)
