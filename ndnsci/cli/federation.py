"""``ndnsci catalog site|trust|federate|mirror|conflicts``: the catalog as a site of a federation.

    ndnsci catalog site init NAME [--prefix /NAME] [--key default]  # name this catalog's site
    ndnsci catalog site show                     # this site and the trusted ones (JSON lines)
    ndnsci catalog trust add SITE KEY [--prefix /SITE]   # accept SITE's changes signed by KEY
    ndnsci catalog trust remove SITE
    ndnsci catalog federate [--link SITE=udp4://HOST:PORT] ...   # over NDN
    ndnsci catalog mirror --from URL [--follow]  # the HTTP fallback
    ndnsci catalog seal [--follow]               # sign this site's changes for HTTP mirrors
    ndnsci catalog conflicts                     # names two sites published (JSON lines)

KEY is a site's raw Ed25519 public key in hex, as ``ndnsci keys show`` prints it at that site;
get it from the site out of band. Design: docs/federation.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from ndnsci.cli._common import count, fail


def register(commands: Any, db_option: Any, db_url: Any) -> None:
    """Add the federation's actions to ``ndnsci catalog``: ``db_option`` adds ``--db`` to a
    parser, ``db_url(args)`` resolves it (both ``ndnsci catalog``'s own)."""

    def with_db(parser: argparse.ArgumentParser) -> None:
        db_option(parser)
        parser.set_defaults(db_url=db_url)

    site = commands.add_parser("site", help="name this catalog's site, show the sites")
    site_commands = site.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    init = site_commands.add_parser("init", help="name this catalog's site (once)")
    init.add_argument("name", help="the site's name, e.g. kisti")
    init.add_argument("--prefix", help="the site's NDN prefix (default: /NAME)")
    init.add_argument("--key", default="default", help="the publisher key that signs for it")
    with_db(init)
    init.set_defaults(func=run_site_init)
    show = site_commands.add_parser("show", help="this site and the trusted sites, as JSON")
    with_db(show)
    show.set_defaults(func=run_site_show)

    trust = commands.add_parser("trust", help="the sites whose changes this catalog accepts")
    trust_commands = trust.add_subparsers(dest="trust_command", metavar="ACTION", required=True)
    add = trust_commands.add_parser("add", help="trust SITE's changes signed by KEY")
    add.add_argument("site", help="the site's name")
    add.add_argument("key", help="the site's Ed25519 public key, hex (`ndnsci keys show`)")
    add.add_argument("--prefix", help="the site's NDN prefix (default: /SITE)")
    with_db(add)
    add.set_defaults(func=run_trust_add)
    remove = trust_commands.add_parser("remove", help="stop accepting SITE's changes")
    remove.add_argument("site")
    with_db(remove)
    remove.set_defaults(func=run_trust_remove)

    federate = commands.add_parser(
        "federate", help="publish this site's changes and apply the trusted sites' over NDN"
    )
    with_db(federate)
    federate.add_argument("--key", default="default", help="the site's key (default)")
    federate.add_argument("--group", help="the sync group prefix (default /ndnsci/catalog/sync)")
    federate.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="SITE=URI",
        help="a face to SITE's forwarder (udp4://host:port); SITE's prefix and the sync group "
        "are routed over it (repeatable; not needed where the network has routes)",
    )
    federate.add_argument("--interval", type=float, default=0.5, help="seconds between looks")
    federate.add_argument(
        "--sync-interval", type=float, default=30.0, help="periodic Sync Interest (seconds)"
    )
    federate.add_argument(
        "--relink-interval",
        type=float,
        default=30.0,
        help="seconds between two settings of the links and checks of the routes (a restarted "
        "forwarder has lost them)",
    )
    federate.add_argument(
        "--batch-changes",
        type=int,
        default=2000,
        metavar="N",
        help="changes per signed batch (default 2000)",
    )
    federate.add_argument(
        "--no-data-routes",
        action="store_true",
        help="do not route other sites' file names to them",
    )
    federate.add_argument("-v", "--verbose", action="store_true")
    federate.set_defaults(func=run_federate)

    mirror = commands.add_parser("mirror", help="apply another site's changes over HTTP")
    mirror.add_argument("--from", dest="source", required=True, metavar="URL")
    mirror.add_argument("--follow", action="store_true", help="keep following (Ctrl-C stops)")
    mirror.add_argument("--interval", type=float, default=5.0, help="seconds between polls")
    with_db(mirror)
    mirror.set_defaults(func=run_mirror)

    seal = commands.add_parser(
        "seal",
        help="sign this site's new changes into batches for the sites that mirror it over HTTP "
        "(what `federate` does, without NDN)",
    )
    seal.add_argument("--key", default="default", help="the site's key (default)")
    seal.add_argument("--follow", action="store_true", help="keep sealing (Ctrl-C stops)")
    seal.add_argument("--interval", type=float, default=0.5, help="seconds between looks")
    seal.add_argument(
        "--batch-changes", type=int, default=2000, metavar="N",
        help="changes per signed batch (default 2000)",
    )  # fmt: skip
    with_db(seal)
    seal.set_defaults(func=run_seal)

    conflicts = commands.add_parser("conflicts", help="names two sites published (JSON lines)")
    conflicts.add_argument("--limit", type=count, default=1000)
    with_db(conflicts)
    conflicts.set_defaults(func=run_conflicts)


def _session(args: argparse.Namespace) -> Any:
    from ndnsci_catalog.database import make_engine, make_sessionmaker
    from ndnsci_catalog.migrate import upgrade

    url = args.db_url(args)
    upgrade(url)
    return make_sessionmaker(make_engine(url))()


def run_site_init(args: argparse.Namespace) -> int:
    from ndnsci.errors import PublisherKeyError
    from ndnsci.ndn import keys
    from ndnsci_catalog import sites

    try:
        key = keys.load(args.key)
    except PublisherKeyError as exc:
        return fail("catalog site init", exc)
    with _session(args) as session:
        try:
            site = sites.init_local(session, args.name, args.prefix or f"/{args.name}",
                                    key.public.hex())  # fmt: skip
        except sites.SiteError as exc:
            return fail("catalog site init", exc)
        session.commit()
        stamped = 0
        while count := sites.stamp_unnamed(session):
            session.commit()
            stamped += count
    print(json.dumps(site.to_dict()))
    print(f"site {site.name} ({site.prefix}), key {key.key_id}; {stamped} records published "
          "before it had a name are now its own", file=sys.stderr)  # fmt: skip
    return 0


def run_site_show(args: argparse.Namespace) -> int:
    from ndnsci_catalog import sites

    with _session(args) as session:
        every = sites.all_sites(session)
    for site in every:
        print(json.dumps(site.to_dict()))
    return 0


def run_trust_add(args: argparse.Namespace) -> int:
    from ndnsci_catalog import sites

    with _session(args) as session:
        try:
            site = sites.trust(session, args.site, args.prefix or f"/{args.site}", args.key)
        except sites.SiteError as exc:
            return fail("catalog trust add", exc)
        session.commit()
    print(json.dumps(site.to_dict()))
    return 0


def run_trust_remove(args: argparse.Namespace) -> int:
    from ndnsci_catalog import sites

    with _session(args) as session:
        removed = sites.untrust(session, args.site)
        session.commit()
    if not removed:
        return fail("catalog trust remove", f"{args.site!r} is not a trusted site", 1)
    return 0


def run_seal(args: argparse.Namespace) -> int:
    from ndnsci_catalog.federation.mirror import seal

    code, count = _until_stopped(args, "seal", lambda url, stop: seal(
        url, args.key, follow=args.follow, interval=args.interval,
        limit=max(1, args.batch_changes), stop=stop,
    ))  # fmt: skip
    if count is not None:
        print(json.dumps({"batches": count}))
    return code


def _until_stopped(
    args: argparse.Namespace, command: str, work: Callable[[str, threading.Event], int]
) -> tuple[int, int | None]:
    """``work(db_url, stop)`` on an upgraded catalog, SIGTERM setting ``stop``: the exit code,
    and what ``work`` returned (None when it failed or was interrupted)."""
    from ndnsci.errors import NdnsciError
    from ndnsci_catalog.migrate import upgrade

    _logging(False, command)
    url = args.db_url(args)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        upgrade(url)
        return 0, work(url, stop)
    except KeyboardInterrupt:
        return 130, None
    except NdnsciError as exc:
        return fail(f"catalog {command}", exc), None


def run_conflicts(args: argparse.Namespace) -> int:
    from ndnsci_catalog import sites

    with _session(args) as session:
        for conflict in sites.conflicts(session, args.limit):
            print(json.dumps(conflict))
    return 0


def _logging(verbose: bool, command: str) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format=f"%(asctime)s ndnsci catalog {command}: %(message)s",
        stream=sys.stderr,
    )
    for noisy in ("httpx", "alembic"):  # not a line per request, nor per migration check
        logging.getLogger(noisy).setLevel(logging.WARNING)


def run_federate(args: argparse.Namespace) -> int:
    from ndnsci.errors import NdnsciError
    from ndnsci_catalog.federation.names import DEFAULT_GROUP
    from ndnsci_catalog.federation.service import Federation, Options
    from ndnsci_catalog.migrate import upgrade

    _logging(args.verbose, "federate")
    links = []
    for link in args.link:
        site, sep, uri = link.partition("=")
        if not sep or not site or not uri:
            return fail("catalog federate", f"--link {link!r}: give SITE=URI")
        links.append((site, uri))
    options = Options(
        db=args.db_url(args), key=args.key, group=args.group or DEFAULT_GROUP, links=links,
        interval=args.interval, sync_interval=args.sync_interval,
        relink_interval=args.relink_interval,
        batch_changes=max(1, args.batch_changes),
        data_routes=not args.no_data_routes,
    )  # fmt: skip
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        upgrade(options.db)
        federation = Federation(options)
        with contextlib.suppress(KeyboardInterrupt):
            federation.run(stop)
    except NdnsciError as exc:
        return fail("catalog federate", exc)
    return 0


def run_mirror(args: argparse.Namespace) -> int:
    from ndnsci_catalog.federation.mirror import mirror

    code, count = _until_stopped(args, "mirror", lambda url, stop: mirror(
        url, args.source, follow=args.follow, interval=args.interval, stop=stop
    ))  # fmt: skip
    if count is None:
        return code
    print(f"ndnsci catalog mirror: {count} batches applied from {args.source}", file=sys.stderr)
    if count == 0 and not args.follow:
        print(f"ndnsci catalog mirror: {args.source} has no batch this catalog lacks; a site "
              "signs its changes into batches with `ndnsci catalog federate` or "
              "`ndnsci catalog seal`", file=sys.stderr)  # fmt: skip
    return 0
