"""``ndnsci forwarder start|stop|status|path``: the local NDNd forwarder.

``start`` builds NDNd if needed (deploy/forwarder/build.sh), renders deploy/forwarder/ndnd.yml
and runs it in the background on the socket every ndnsci command uses by default
(``$XDG_RUNTIME_DIR/ndnsci/nfd.sock`` or ``/tmp/ndnsci-<uid>/nfd.sock``; NDN_CLIENT_TRANSPORT
or --socket choose another). The log, pid file and rendered config sit beside the socket.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "forwarder",
        help="start, stop or query the local NDNd forwarder",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("start", "stop", "status", "path"), help="what to do")
    p.add_argument("--socket", metavar="PATH", help="Unix socket of the forwarder")
    p.add_argument(
        "--cs-capacity",
        type=int,
        metavar="N",
        help="content store capacity in Data packets, all threads together (2 x 65535)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import ForwarderError
    from ndnsci.ndn import forwarder

    sock = forwarder.socket_path(args.socket)
    try:
        if args.action == "path":
            print(forwarder.binary())
        elif args.action == "start":
            pid = forwarder.start(sock, args.cs_capacity)
            print(f"ndnd running (pid {pid}); export NDN_CLIENT_TRANSPORT=unix://{sock}")
        elif args.action == "stop":
            if not forwarder.stop(sock):
                print(f"no forwarder started by ndnsci on {sock}", file=sys.stderr)
                return 1
            print("ndnd stopped")
        else:
            for key, value in forwarder.status(sock).items():
                print(f"{key:>22}: {value}")
            print(f"{'socket':>22}: {sock}")
    except ForwarderError as exc:
        print(f"ndnsci forwarder: {exc}", file=sys.stderr)
        return 1
    return 0
