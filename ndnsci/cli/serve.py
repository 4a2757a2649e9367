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
import signal
import sys
import threading
from typing import Any

from ndnsci.site.serve import DEFAULT_PREFIX


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
    from ndnsci.site import serve

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s ndnsci serve: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per catalog request
    stop = threading.Event()
    options = serve.ServeOptions(
        root=args.root,
        prefix=args.prefix,
        catalog=args.catalog,
        refresh=args.refresh,
        scheme=args.scheme,
        segment_size=args.segment_size,
        key=args.key,
        unsigned=args.unsigned,
        engine=args.engine,
    )
    errors = (NdnError, CatalogError, ValueError, OSError)
    if args.engine == "ndn-dpdk":  # it says what it serves; any failure is the command's
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        try:
            with contextlib.suppress(KeyboardInterrupt):
                serve.start(options, stop, _warn).serve_forever(stop)
        except errors as exc:
            return _failed(exc)
        return 0
    try:
        service = serve.start(options, stop, _warn)
    except errors as exc:
        return _failed(exc)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: _print_counters(service))
    signer = "key " + service.key.key_id if service.key else "DigestSha256"
    print(f"serving {service.what} (metadata signed by {signer})", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        service.serve_forever(stop)
    stop.set()
    return 0


def _failed(exc: Exception) -> int:
    print(f"ndnsci serve: {exc}", file=sys.stderr)
    return 2


def _warn(message: str) -> None:
    print(f"ndnsci serve: {message}", file=sys.stderr)


def _print_counters(service: Any) -> None:
    import json

    print(f"ndnsci serve: counters {json.dumps(service.stats)}", file=sys.stderr, flush=True)
