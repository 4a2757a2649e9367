"""``ndnsci fetch``: retrieve files over NDN, verified, into a directory.

    ndnsci fetch NAME ... [-o DIR]                       files by NDN name
    ndnsci fetch --query 'model=HadCM3 variable=tas' [-o DIR] [--parallel K] [--layout drs|flat]
    ndnsci fetch --manifest FILE [-o DIR] ...            the files of a manifest (- for stdin)

Every file is discovered through its RDR metadata, fetched with a window of Interests in
flight, checked (segment digests, the publisher's signature), hashed on disk and compared with
the publisher's signed SHA-256 and the catalog's, then renamed into place. A NAME is looked up
in the catalog when one is known (--catalog or $NDNSCI_CATALOG): a file the catalog holds must
have its size and SHA-256, or it is refused and removed. Two
fetches of one file into one directory never mix: the second waits for the first.

NAMEs land flat in DIR and are fetched again unless ``--resume`` (which also continues a
partial download). Bulk downloads (``--query``, asked from the catalog at --catalog or
$NDNSCI_CATALOG, or ``--manifest``: the JSON lines of the catalog's manifests or of ``ndnsci
search --json``) fetch K files at once into DIR, in the DRS directory layout by default, and
are resumable across runs: complete files are kept after a checksum check (remembered in
DIR/.ndnsci-fetch.jsonl), partial ones continue (``--restart``: fetch everything again).
Transient failures are retried with back-off; Ctrl-C stops within ~0.1 s and the same command
(with ``--resume`` for NAMEs) continues.

stdout carries the results (a line per file, or JSON with ``--json``); progress bars go to
stderr when it is a terminal (``--progress``).

Exit status: 0 when every file arrived and verified, 1 when one failed, 2 on a usage or
catalog error, 130 when interrupted.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeAlias

from ndnsci.cli._common import CATALOG_OPTION, fail, formatter

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    Option: TypeAlias = tuple[str | None, tuple[str, ...], dict[str, Any]]  # (group, flags, kwargs)


def options() -> list[Option]:
    """The command's arguments, once: :func:`register` gives them to argparse, :func:`parse_plain`
    reads the plain command lines with them."""
    from ndnsci.sdk.progress import PROGRESS_CHOICES

    bulk = "bulk downloads"
    return [
        (None, ("names",), {"nargs": "*", "metavar": "NAME",
                            "help": "NDN names, e.g. /ndnsci/files/a.nc"}),
        (bulk, ("--query",), {"metavar": "FILTERS", "help": "the files of a catalog search"}),
        (bulk, ("--manifest",), {"metavar": "FILE",
                                 "help": "the files of a manifest (- for stdin)"}),
        (bulk, ("--report",), {"metavar": "FILE",
                               "help": "write every file's outcome as JSON lines"}),
        (bulk, ("--restart",), {"action": "store_true",
                                "help": "fetch everything again (no skip, no resume)"}),
        (bulk, *CATALOG_OPTION),
        (None, ("-o", "--output"), {"default": ".", "metavar": "DIR",
                                    "help": "output directory (.)"}),
        (None, ("--layout",), {
            "choices": ("drs", "flat"),
            "help": "drs: DIR/<name's path> (default for --query, --manifest); flat: every file "
            "in DIR (default for NAMEs)",
        }),
        (None, ("--cc",), {"choices": ("fixed", "aimd", "cubic"), "default": "aimd",
                           "help": "window control (aimd)"}),
        (None, ("--window",), {"type": int, "default": 64,
                               "help": "(initial) Interests in flight (64)"}),
        (None, ("--max-window",), {"type": int, "default": 1024,
                                   "help": "window cap for aimd/cubic"}),
        (None, ("--lifetime",), {"type": int, "default": 4000, "metavar": "MS",
                                 "help": "Interest lifetime (4000 ms)"}),
        (None, ("--parallel",), {"type": int, "metavar": "K",
                                 "help": "files at once (1 for NAMEs, 4 for bulk)"}),
        (None, ("--retries",), {"type": int, "default": 2, "metavar": "N",
                                "help": "tries again after a timeout (2)"}),
        (None, ("--resume",), {"action": "store_true",
                               "help": "NAMEs: skip complete files, continue partial ones"}),
        (None, ("--segment-digests",), {
            "choices": ("auto", "always"), "default": "auto",
            "help": "auto: leave each segment's digest to the file's published SHA-256 (checked "
            "on disk; on a mismatch the file is fetched again, every segment checked); always: "
            "check every segment as it arrives",
        }),
        (None, ("--trust",), {"metavar": "KEYID",
                              "help": "require metadata signed by this key id"}),
        (None, ("--engine", "--transport"), {
            "dest": "transport", "default": "auto", "metavar": "NAME",
            "help": "data plane to fetch with: auto (default: per file, NDN-DPDK's fetcher "
            "where `ndnsci native up` runs and serves the name, else ndnsci's own), python, "
            "ndn-dpdk, ndnc (docs/native.md)",
        }),
        (None, ("--progress",), {
            "choices": PROGRESS_CHOICES, "default": "auto",
            "help": "auto: bars on stderr when it is a terminal (default); bars; text; none",
        }),
        (None, ("--quiet", "-q"), {"action": "store_true",
                                   "help": "no progress (--progress none)"}),
        (None, ("--json",), {"action": "store_true",
                             "help": "one JSON line per file on stdout"}),
        (None, ("--ls",), {"action": "store_true",
                           "help": "list the directories NAME instead"}),
    ]  # fmt: skip


def register(subparsers: Any) -> None:
    import argparse

    p = subparsers.add_parser(
        "fetch",
        help="fetch files by NDN name, catalog query or manifest",
        description=__doc__,
        formatter_class=formatter(argparse.RawDescriptionHelpFormatter),
    )
    groups: dict[str | None, Any] = {None: p}  # the parser, and its groups in order
    for group, flags, kwargs in options():
        if group not in groups:
            groups[group] = p.add_argument_group(group)
        groups[group].add_argument(*flags, **kwargs)
    p.set_defaults(func=run)


def parse_plain(words: list[str]) -> SimpleNamespace | None:
    """The arguments of ``ndnsci fetch WORDS`` as argparse gives them, read without it (argparse,
    with gettext and locale, cost a fetch ~20 M instructions before its first byte; DEVELOPERS.md
    "Start-up budget"); None unless every word is plain: an option by its exact name, its value
    the next word (not empty, not starting with "-", valid for its type and choices), the NAMEs
    in one run. argparse reads what is not plain, and says what is wrong with it."""
    from types import SimpleNamespace

    values: dict[str, Any] = {"command": "fetch"}
    by_flag: dict[str, tuple[str, dict[str, Any]]] = {}
    for _, flags, kwargs in options():
        if not flags[0].startswith("-"):
            continue  # NAMEs
        dest = kwargs.get("dest") or next(
            (f for f in flags if f.startswith("--")), flags[0]
        ).lstrip("-").replace("-", "_")
        values[dest] = kwargs.get("default", False if kwargs.get("action") else None)
        by_flag.update(dict.fromkeys(flags, (dest, kwargs)))
    names: list[str] | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word and not word.startswith("-"):
            if names is not None:
                return None  # a second run of NAMEs: argparse refuses it
            end = i
            while end < len(words) and words[end] and not words[end].startswith("-"):
                end += 1
            names, i = words[i:end], end
            continue
        if word not in by_flag:
            return None
        dest, kwargs = by_flag[word]
        if kwargs.get("action") == "store_true":
            values[dest], i = True, i + 1
            continue
        raw = words[i + 1] if i + 1 < len(words) else ""
        if not raw or raw.startswith("-"):
            return None
        try:
            value = kwargs.get("type", str)(raw)
        except ValueError:
            return None
        if value not in kwargs.get("choices", (value,)):
            return None
        values[dest], i = value, i + 2
    return SimpleNamespace(names=names or [], **values, func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import CatalogError
    from ndnsci.sdk.transports import FetchOptions

    sources = sum(bool(x) for x in (args.names, args.query, args.manifest))
    if sources != 1:
        return fail("fetch", "give NAMEs, --query FILTERS or --manifest FILE (one of them)")
    if args.ls:
        return _list(args.names)
    parallel = args.parallel or (1 if args.names else 4)
    if args.window < 1 or parallel < 1 or args.lifetime < 10 or args.retries < 0:
        return fail("fetch", "--window, --parallel >= 1, --retries >= 0 and --lifetime >= 10")
    options = FetchOptions(
        cc=args.cc,
        window=args.window,
        max_window=max(args.max_window, args.window),
        lifetime_ms=args.lifetime,
        trust_key=args.trust,
        segment_digests=args.segment_digests,
    )
    try:
        items = args.names or (_from_query(args) if args.query else _from_manifest(args.manifest))
    except OSError as exc:
        return fail("fetch", f"cannot read the manifest: {exc}")
    except CatalogError as exc:
        return fail("fetch", exc)
    if not items:
        print("ndnsci fetch: nothing to fetch: no file matches", file=sys.stderr)
        return 1
    return _download(args, items, parallel, options)


def _download(args: argparse.Namespace, items: list[Any], parallel: int, options: Any) -> int:
    import gc

    from ndnsci.errors import CatalogError, TransportError
    from ndnsci.sdk.fetch import download
    from ndnsci.sdk.report import Interrupted
    from ndnsci.sdk.transports import UnknownTransportError, get_transport

    by_name = bool(args.names)
    try:
        # the data plane's modules, loaded now (download() would) to be frozen with the others:
        # the collector does not walk them at each collection and at exit (cli.main)
        get_transport(args.transport)
        gc.freeze()
        report = download(
            items,
            args.output,
            parallel=parallel,
            resume=args.resume if by_name else not args.restart,
            progress="none" if args.quiet else args.progress,
            layout=args.layout or ("flat" if by_name else "drs"),
            retries=args.retries,
            options=options,
            transport=args.transport,
            catalog=args.catalog,  # NAMEs: checked against its records ($NDNSCI_CATALOG too)
        )
    except CatalogError as exc:
        return fail("fetch", f"cannot check the names with the catalog: {exc}")
    except (TransportError, UnknownTransportError) as exc:
        return fail("fetch", exc)  # no forwarder: the message says how to start one
    except OSError as exc:
        return fail("fetch", f"cannot write to {args.output}: {exc.strerror or exc}")
    except Interrupted as exc:
        _print_report(exc.report, args)
        again = "the same command again" + ("" if not by_name or args.resume else " with --resume")
        print(
            f"ndnsci fetch: interrupted; run {again} to continue (complete files are kept, "
            f"partial ones resume)",
            file=sys.stderr,
        )
        return 130
    _print_report(report, args)
    return 0 if report.ok else 1


def _from_query(args: argparse.Namespace) -> list[Any]:
    from ndnsci.sdk.client import Catalog, Query

    with Catalog(args.catalog) as catalog:
        return catalog.manifest(Query.parse(args.query))


def _from_manifest(path: str) -> list[Any]:
    from ndnsci.sdk.manifest import parse

    if path == "-":
        return list(parse(sys.stdin))
    with open(path, encoding="utf-8") as f:
        return list(parse(f))


def _list(names: list[str]) -> int:
    from ndnsci.errors import NdnError
    from ndnsci.sdk.transports import list_directory

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


def _print_report(report: Any, args: argparse.Namespace) -> None:
    """Results on stdout (a line per NAME, or JSON), failures and the summary on stderr."""
    if args.report or args.json:
        import json  # after the fetch, and only for JSON (with re and enum, ~20 M instructions)

        lines = [json.dumps(o.to_dict()) + "\n" for o in report.outcomes]
        if args.report:
            with open(args.report, "w", encoding="utf-8") as f:
                f.writelines(lines)
        if args.json:
            sys.stdout.writelines(lines)
    elif args.names:
        for outcome in report.outcomes:
            if outcome.ok:
                print(_describe(outcome))
    for outcome in report.outcomes:
        for warning in outcome.warnings:
            print(f"  warning: {outcome.name}: {warning}", file=sys.stderr)
    for outcome in report.failed:
        print(f"ndnsci fetch: FAILED {outcome.name}\n    {outcome.error}", file=sys.stderr)
    if not args.names or len(report.outcomes) > 1:
        print(f"ndnsci fetch: {report.summary()}", file=sys.stderr)


def _describe(o: Any) -> str:
    if o.status == "skipped":
        return f"{o.path}: {o.size:,} bytes, already complete, sha256 {o.checksum}"
    resumed = f", {o.resumed_segments} segments resumed" if o.resumed_segments else ""
    return (
        f"{o.path}: {o.size:,} bytes in {o.seconds:.2f} s ({o.mbps:.1f} MB/s), "
        f"{o.retransmissions} retransmissions ({o.timeouts} timeouts, {o.nacks} Nacks, "
        f"{o.rejected} rejected), sha256 {o.checksum}, signer {o.signer}, "
        f"engine {o.engine}{resumed}"
    )
