"""``ndnsci transfer``: jobs that copy files to a folder at a site, run by the site's agent.

    ndnsci transfer submit ucla/tas --query "model=HadGEM2-ES&variable=tas" --wait
    ndnsci transfer submit cms/run2 /CMS/store/data/... /CMS/store/data/...   # names
    ndnsci search model=HadCM3 --json | ndnsci transfer submit hadcm3 --manifest -
    ndnsci transfer list
    ndnsci transfer status 3 [--files failed] [--watch] [--json]
    ndnsci transfer cancel 3            ndnsci transfer retry 3
    ndnsci transfer agent --db URL --root /srv/transfers [--parallel 4]

A job is submitted to a catalog (``--catalog`` or ``$NDNSCI_CATALOG``, with ``--token`` or
``$NDNSCI_TOKEN``); the site's agent, which reads the same catalog database, fetches each file
over NDN into ``ROOT/DESTINATION/<its DRS path>``, verified against the catalog's SHA-256,
through the job's engine (``auto``: NDN-DPDK where the native plane reaches the name). A job
survives restarts of the agent and of the machine; a failed file is retried with back-off,
then listed with its reason (``status N --files failed``).

Results go to stdout (``--json``: one JSON object), progress and logs to stderr. Exit status:
0 done (or submitted, without --wait), 1 a job that failed or was cancelled, 2 an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ndnsci.cli._common import catalog_option, count, fail

ENGINES = ("auto", "python", "ndn-dpdk")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "transfer",
        help="transfer jobs to a site (submit, list, status, cancel, retry, agent)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    submit = commands.add_parser("submit", help="a new job: names, --query or --manifest")
    submit.add_argument("destination", help="a folder below the site's transfer root")
    submit.add_argument("names", nargs="*", metavar="NAME", help="NDN names")
    given = submit.add_mutually_exclusive_group()
    given.add_argument("--query", metavar="Q", help="a search, e.g. 'model=HadCM3&variable=tas'")
    given.add_argument(
        "--manifest", metavar="FILE", help="names from a manifest or `search --json` ('-': stdin)"
    )
    submit.add_argument("--engine", choices=ENGINES, default="auto", help="default: auto")
    submit.add_argument("--wait", action="store_true", help="follow the job to its end")
    _common(submit)

    listing = commands.add_parser("list", help="the newest jobs")
    listing.add_argument("--owner", help="the jobs of one token name")
    listing.add_argument("--limit", type=count, default=20, metavar="N", help="default: 20")
    _common(listing)

    status = commands.add_parser("status", help="one job")
    status.add_argument("job", type=_job_id, metavar="ID")
    status.add_argument(
        "--files",
        nargs="?",
        const="all",
        metavar="STATE",
        help="list its files (of one state: pending, running, done, failed, cancelled)",
    )
    status.add_argument("--watch", action="store_true", help="follow the job to its end")
    _common(status)

    for action, text in (
        ("cancel", "stop a job"),
        ("retry", "try failed and cancelled files again"),
    ):
        one = commands.add_parser(action, help=text)
        one.add_argument("job", type=_job_id, metavar="ID")
        _common(one)

    agent = commands.add_parser("agent", help="run the jobs of a catalog database")
    agent.add_argument("--db", metavar="URL", help="the catalog's database (default: $NDNSCI_DB)")
    agent.add_argument("--root", required=True, metavar="DIR", help="where destinations are")
    agent.add_argument("--parallel", type=_parallel, default=4, metavar="N", help="default: 4")
    agent.add_argument("--name", metavar="NAME", help="the agent's name (default: host:pid)")
    agent.add_argument(
        "--until-idle", action="store_true", help="stop once no job has work left (scripts)"
    )
    agent.add_argument(
        "--retry-delay", type=float, default=None, metavar="S", help="first back-off (5 s)"
    )
    p.set_defaults(func=run)


def _common(parser: argparse.ArgumentParser) -> None:
    catalog_option(parser)
    parser.add_argument("--token", help="the catalog's token (default: $NDNSCI_TOKEN)")
    parser.add_argument("--json", action="store_true", help="JSON on stdout")


def _job_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 2**62:
        raise argparse.ArgumentTypeError(f"{text!r} is not a job number (see `transfer list`)")
    return value


def _parallel(text: str) -> int:
    value = count(text)
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 to 256 workers")
    return value


def run(args: argparse.Namespace) -> int:
    if args.action == "agent":
        return _agent(args)
    from ndnsci.errors import CatalogError
    from ndnsci.sdk.client import Catalog

    try:
        with Catalog(args.catalog, token=args.token) as catalog:
            return ACTIONS[args.action](catalog, args)
    except CatalogError as exc:
        return fail(f"transfer {args.action}", exc)
    except KeyboardInterrupt:
        print("interrupted: the job goes on at the site", file=sys.stderr)
        return 130


def _submit(catalog: Any, args: argparse.Namespace) -> int:
    from ndnsci.sdk.client import Query

    what: Any
    if args.query is not None:
        if args.names:
            return fail("transfer submit", "give names or --query, not both")
        what = Query.parse(args.query)
    elif args.manifest is not None:
        if args.names:
            return fail("transfer submit", "give names or --manifest, not both")
        what = _manifest_names(args.manifest)
        if isinstance(what, str):
            return fail("transfer submit", what)
    elif args.names:
        what = list(args.names)
    else:
        return fail("transfer submit", "nothing to transfer: give names, --query or --manifest")
    job = catalog.transfer(what, args.destination, engine=args.engine)
    status = job.status()
    print(f"submitted {status.summary()}", file=sys.stderr)
    if args.wait:
        return _follow(job, args)
    _print(status, args)
    return 0


def _manifest_names(path: str) -> list[str] | str:
    """The names of a manifest (JSON lines, or one name per line); a problem as a string."""
    from ndnsci.sdk.manifest import read_manifest

    try:
        entries = read_manifest("/dev/stdin" if path == "-" else path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    except ValueError as exc:
        return f"{path}: {exc}"
    names = [e.name for e in entries]
    return names or f"{path}: no names in it"


def _list(catalog: Any, args: argparse.Namespace) -> int:
    found = catalog.transfers(owner=args.owner, limit=args.limit)
    if args.json:
        print(json.dumps([_as_dict(s) for s in found]))
    else:
        for status in found:
            print(f"{status.summary()}  -> {status.destination}")
    if not found:
        print("no transfer jobs", file=sys.stderr)
    return 0


def _status(catalog: Any, args: argparse.Namespace) -> int:
    from ndnsci.sdk.transfer import Transfer

    job = Transfer(catalog, args.job)
    if args.watch:
        return _follow(job, args)
    status = job.status()
    if args.files is not None:
        state = None if args.files == "all" else args.files
        files = job.files(state)
        if args.json:
            print(json.dumps({**_as_dict(status), "file_list": [f.__dict__ for f in files]}))
        else:
            print(status.summary())
            for f in files:
                reason = f"  ({f.error})" if f.error else ""
                print(f"{f.state:9} {f.attempts} {f.engine or '-':16} {f.name}{reason}")
        return _exit(status)
    _print(status, args)
    return _exit(status)


def _cancel(catalog: Any, args: argparse.Namespace) -> int:
    _print(catalog.cancel_transfer(args.job), args)
    return 0


def _retry(catalog: Any, args: argparse.Namespace) -> int:
    _print(catalog.retry_transfer(args.job), args)
    return 0


def _follow(job: Any, args: argparse.Namespace) -> int:
    def show(status: Any) -> None:
        print(status.summary(), file=sys.stderr)

    status = job.wait(poll=2.0, progress=show)
    _print(status, args)
    if status.counts.get("failed"):
        for f in job.files("failed"):
            print(f"failed: {f.name}: {f.error}", file=sys.stderr)
    return _exit(status)


def _exit(status: Any) -> int:
    return 0 if status.state in ("done", "queued", "running") else 1


def _as_dict(status: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in asdict(status).items()}


def _print(status: Any, args: argparse.Namespace) -> None:
    print(json.dumps(_as_dict(status)) if args.json else status.summary())


ACTIONS = {
    "submit": _submit,
    "list": _list,
    "status": _status,
    "cancel": _cancel,
    "retry": _retry,
}


def _agent(args: argparse.Namespace) -> int:
    import logging
    import signal

    from ndnsci.cli._common import database_url
    from ndnsci_catalog.migrate import schema_behind

    url = database_url(args.db)
    try:
        behind = schema_behind(url)
    except Exception as exc:  # unreachable or not a catalog: one line
        return fail("transfer agent", f"cannot open the catalog database: {exc}".splitlines()[0])
    if behind is not None:
        return fail(
            "transfer agent",
            f"the catalog database has schema {behind[0] or '(none)'}, this version needs "
            f"{behind[1]}: run `ndnsci catalog migrate --db URL` (or start its catalog) first",
        )
    from ndnsci.site.transfers import Agent

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    options: dict[str, Any] = {"parallel": args.parallel, "name": args.name}
    if args.retry_delay is not None:
        options["retry_first"] = max(0.0, args.retry_delay)
    try:
        agent = Agent(url, args.root, **options)
    except OSError as exc:
        return fail("transfer agent", exc)
    signal.signal(signal.SIGTERM, lambda *_: agent.close())
    print(f"transfer agent {agent.name}: jobs of {_shown(url)} into {args.root}", file=sys.stderr)
    try:
        report = agent.run(until_idle=args.until_idle)
    except OSError as exc:
        return fail("transfer agent", exc)
    print(report.summary(), file=sys.stderr)
    return 0


def _shown(url: str) -> str:
    return url.rsplit("@", maxsplit=1)[-1] if "@" in url else url
