"""``ndnsci serve ROOT``: serve a directory tree over NDN under a prefix.

Every file ``ROOT/a/b.nc`` is ``<prefix>/a/b.nc``; ``<prefix>/a/32=ls`` lists a directory.

``ndnsci serve ROOT --catalog URL`` serves instead every file below ROOT that the catalog
publishes, under its catalog name (``/CMIP5/...``, ``/CMS/store/...``): ROOT is walked, each
file named as ``ndnsci publish`` names it, and the names the catalog holds (with the same size)
are served; nothing else is. The catalog's change feed is polled (``--refresh``) and ROOT walked
again when something was published or retracted.

The producer registers its prefixes with the forwarder (NDN_CLIENT_TRANSPORT, else the one
``ndnsci forwarder start`` runs), reconnects if the forwarder restarts, and runs until
interrupted. Metadata is signed with the publisher key (``ndnsci keys create``). On SIGUSR1
it prints what it answered so far on stderr: ``ndnsci serve: counters {"interests": N,
"segments": N, "metadata": N, "nacks": N}`` (the testbed checks with it that a cache, not the
producer, served a fetch).

``--engine ndn-dpdk`` serves the same names with NDN-DPDK's file server instead (the native
plane must be up: ``ndnsci native up``); its Data carry no signature, so a consumer checks the
files against the catalog's SHA-256 (``ndnsci fetch`` does). See docs/native.md.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from typing import Any

DEFAULT_PREFIX = "/ndnsci/files"
log = logging.getLogger("ndnsci.serve")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve a directory tree (or a catalog's files) over NDN",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("root", metavar="ROOT", help="directory to serve")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help=f"NDN name prefix ({DEFAULT_PREFIX})")
    p.add_argument(
        "--catalog",
        metavar="URL",
        help="serve the files below ROOT that this catalog publishes, under their catalog names",
    )
    p.add_argument(
        "--refresh",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --catalog: how often to look for newly published files (5)",
    )
    p.add_argument("--scheme", default="auto", help="with --catalog: naming scheme (auto)")
    p.add_argument(
        "--segment-size", type=int, default=8000, help="content bytes per segment (8000)"
    )
    p.add_argument("--key", default="default", help="publisher key name (see `ndnsci keys`)")
    p.add_argument(
        "--unsigned",
        action="store_true",
        help="sign metadata with DigestSha256 only (no publisher key needed)",
    )
    p.add_argument(
        "--engine",
        choices=("python", "ndn-dpdk"),
        default="python",
        help="who serves: ndnsci's producer (python) or NDN-DPDK's file server (ndn-dpdk)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log every refused request")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import CatalogError, NdnError

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s ndnsci serve: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per catalog request
    stop = threading.Event()
    if args.engine == "ndn-dpdk":
        return _native(args, stop)
    try:
        key = None if args.unsigned else _load_key(args.key)
        if args.catalog:
            producer, what = _catalog_producer(args, key, stop)
        else:
            producer, what = _tree_producer(args, key), f"{args.root} as {args.prefix}"
    except (NdnError, CatalogError, ValueError, OSError) as exc:
        print(f"ndnsci serve: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: _print_counters(producer))
    print(
        f"serving {what} (metadata signed by {'key ' + key.key_id if key else 'DigestSha256'})",
        file=sys.stderr,
    )
    with contextlib.suppress(KeyboardInterrupt):
        producer.serve_forever(stop)
    stop.set()
    return 0


def _print_counters(producer: Any) -> None:
    import json

    print(f"ndnsci serve: counters {json.dumps(producer.stats)}", file=sys.stderr, flush=True)


def _native(args: argparse.Namespace, stop: threading.Event) -> int:
    from ndnsci.errors import CatalogError, NdnError
    from ndnsci.native import serve

    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        if args.catalog:
            from ndnsci.sdk.client import Catalog
            from ndnsci.site.published import PublishedFiles

            if not os.path.isdir(args.root):
                raise NotADirectoryError(f"not a directory: {args.root}")
            published = PublishedFiles(
                args.root, Catalog(args.catalog), args.scheme, os.cpu_count() or 1
            )
            with contextlib.suppress(KeyboardInterrupt):
                serve.serve_catalog(published, args.refresh, stop)
        else:
            with contextlib.suppress(KeyboardInterrupt):
                serve.serve_tree(args.root, args.prefix, stop)
    except (NdnError, CatalogError, ValueError, OSError) as exc:
        print(f"ndnsci serve: {exc}", file=sys.stderr)
        return 2
    return 0


def _tree_producer(args: argparse.Namespace, key: Any) -> Any:
    from ndnsci.ndn import name
    from ndnsci.ndn.producer import Producer

    return Producer(args.root, name.from_uri(args.prefix), segment_size=args.segment_size, key=key)


def _catalog_producer(args: argparse.Namespace, key: Any, stop: threading.Event) -> Any:
    from ndnsci.ndn.producer import MappedProducer
    from ndnsci.sdk.client import Catalog
    from ndnsci.site.published import PublishedFiles

    if not os.path.isdir(args.root):
        raise NotADirectoryError(f"not a directory: {args.root}")
    published = PublishedFiles(args.root, Catalog(args.catalog), args.scheme, os.cpu_count() or 1)
    scan = published.scan()
    log.info("%s", scan.summary())
    for path, reason in scan.unnamed:
        log.debug("not served: %s: %s", path, reason)
    producer = MappedProducer(args.root, scan.table, segment_size=args.segment_size, key=key)
    watcher = threading.Thread(
        target=_follow, args=(published, producer, args.refresh, stop), daemon=True
    )
    watcher.start()
    return producer, f"{len(scan.table)} files of {args.catalog} from {args.root}"


def _follow(published: Any, producer: Any, every: float, stop: threading.Event) -> None:
    """Rescan ROOT whenever the catalog's change feed moves (errors are logged, not fatal)."""
    from ndnsci.errors import CatalogError

    while not stop.wait(max(every, 0.1)):
        try:
            if published.changed():
                scan = published.scan()
                producer.update(scan.table)
                log.info("catalog changed: %s", scan.summary())
        except (CatalogError, OSError) as exc:
            log.warning("cannot follow the catalog: %s; serving the files known so far", exc)


def _load_key(name: str) -> Any:
    from ndnsci.errors import PublisherKeyError
    from ndnsci.ndn import keys

    try:
        return keys.load(name)
    except PublisherKeyError as exc:
        if name != keys.DEFAULT_NAME or keys.key_path(name).exists():
            raise
        print(f"ndnsci serve: {exc}; metadata will be DigestSha256 only", file=sys.stderr)
        return None
