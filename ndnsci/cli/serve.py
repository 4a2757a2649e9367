"""``ndnsci serve ROOT``: serve a directory tree over NDN under a prefix.

Every file ``ROOT/a/b.nc`` is ``<prefix>/a/b.nc``; ``<prefix>/a/32=ls`` lists a directory.
The producer registers its prefix with the forwarder (NDN_CLIENT_TRANSPORT, else the one
``ndnsci forwarder start`` runs), reconnects if the forwarder restarts, and runs until
interrupted. Metadata is signed with the publisher key (``ndnsci keys create``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from typing import Any

DEFAULT_PREFIX = "/ndnsci/files"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve a directory tree over NDN",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("root", metavar="ROOT", help="directory to serve")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help=f"NDN name prefix ({DEFAULT_PREFIX})")
    p.add_argument(
        "--segment-size", type=int, default=8000, help="content bytes per segment (8000)"
    )
    p.add_argument("--key", default="default", help="publisher key name (see `ndnsci keys`)")
    p.add_argument(
        "--unsigned",
        action="store_true",
        help="sign metadata with DigestSha256 only (no publisher key needed)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log every refused request")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..ndn import keys, name
    from ..ndn.errors import NdnError
    from ..ndn.producer import Producer

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s ndnsci serve: %(message)s",
    )
    try:
        key = None if args.unsigned else _load_key(keys, args.key)
        producer = Producer(
            args.root, name.from_uri(args.prefix), segment_size=args.segment_size, key=key
        )
    except (NdnError, ValueError, OSError) as exc:
        print(f"ndnsci serve: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(
        f"serving {args.root} as {args.prefix} "
        f"(metadata signed by {'key ' + key.key_id if key else 'DigestSha256'})",
        file=sys.stderr,
    )
    with contextlib.suppress(KeyboardInterrupt):
        producer.serve_forever(stop)
    return 0


def _load_key(keys: Any, name: str) -> Any:
    from ..ndn.errors import PublisherKeyError

    try:
        return keys.load(name)
    except PublisherKeyError as exc:
        if name != keys.DEFAULT_NAME or keys.key_path(name).exists():
            raise
        print(f"ndnsci serve: {exc}; metadata will be DigestSha256 only", file=sys.stderr)
        return None
