"""``ndnsci keys``: the Ed25519 publisher key that signs what ``ndnsci serve`` publishes.

Keys are stored under the user's configuration folder (``$NDNSCI_CONFIG_DIR``, else
``$XDG_CONFIG_HOME/ndnsci``, else ``~/.config/ndnsci``), mode 0600, never in a repository.
Consumers pin a publisher with ``ndnsci fetch --trust <key id>``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "keys",
        help="create and show the publisher key",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="generate a new Ed25519 publisher key")
    create.add_argument("--name", default="default", help="key name (default)")
    create.add_argument("--force", action="store_true", help="replace an existing key")
    show = sub.add_parser("show", help="print the key id, public key and file")
    show.add_argument("--name", default="default", help="key name (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import PublisherKeyError
    from ndnsci.ndn import keys

    try:
        key = (
            keys.create(args.name, args.force) if args.action == "create" else keys.load(args.name)
        )
    except PublisherKeyError as exc:
        print(f"ndnsci keys: {exc}", file=sys.stderr)
        return 1
    print(f"key id:     {key.key_id}")
    print(f"public key: {key.public.hex()}")
    print(f"file:       {keys.key_path(args.name)}")
    return 0
