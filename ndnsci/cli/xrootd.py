"""``ndnsci xrootd up|down|status``: an XRootD server that reads files by NDN name.

``up`` starts Debian's XRootD server with NDNc's NDN storage plugin (``make native`` builds it;
deploy/xrootd/xrootd-ndn.cfg) on the NDN-DPDK forwarder (``ndnsci native up`` first). With the
prefix /CMS the CMS logical file name is the path:

    xrdcp root://HOST:1094//store/mc/.../F.root .     reads /CMS/store/mc/.../F.root

from whichever producer serves it: ``ndnsci serve --engine ndn-dpdk`` on the forwarder, or any
producer NDNd reaches (``ndnsci serve``), through the plane's link to NDNd. Engines: ndn-dpdk
only; ``--engine ndnd`` is refused (the plugin talks to a forwarder over memif only, which NDNd
does not have). ``--local-root DIR`` serves a local folder with XRootD's own storage instead,
same settings (the bench's baseline; no plane needed).

Started by root, the server runs as the user ``xrootd`` (XRootD refuses root); its folder, log
and state are in ``$NDNSCI_XROOTD_RUN`` (else /run/ndnsci/xrootd). ``down`` stops it and deletes
the plugin's face from the forwarder; ``ndnsci native down`` stops it too. ``status`` prints
what runs (``--json`` for all the detail). XRootD's files carry no checksum over NDN: compare
with the catalog's SHA-256 (``ndnsci search --json``) to verify a copy (docs/xrootd.md).

Exit status: 0 done (status: a server is up), 1 failed (status: none is up), 2 on a usage
error (an unsupported engine, a setting out of range).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ndnsci.cli._common import port_number


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "xrootd",
        help="start, stop or query an XRootD server that reads files over NDN (CMS LFNs)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("up", "down", "status"), help="what to do")
    p.add_argument("--port", type=port_number, default=1094, help="up: the xroot port (1094)")
    p.add_argument(
        "--engine",
        choices=("ndn-dpdk", "ndnd"),
        default="ndn-dpdk",
        help="up: the forwarder the plugin reads through (ndn-dpdk; ndnd is not supported)",
    )
    p.add_argument("--prefix", default="/CMS", help="up: NDN prefix put before each path (/CMS)")
    p.add_argument(
        "--cc", choices=("aimd", "fixed"), default="aimd", help="up: window control (aimd)"
    )
    p.add_argument(
        "--window",
        type=int,
        default=1024,
        help="up: Interests in flight for the whole server (aimd: the largest window) (1024)",
    )
    p.add_argument(
        "--lifetime", type=int, default=4000, metavar="MS", help="up: Interest lifetime (4000)"
    )
    p.add_argument("--local-root", metavar="DIR", help="up: serve DIR from the disk instead")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import NdnError

    try:
        if args.action == "up":
            return _up(args)
        if args.action == "down":
            return _down(args)
        return _status(args)
    except NdnError as exc:
        print(f"ndnsci xrootd {args.action}: {exc}", file=sys.stderr)
        return 1


def _up(args: argparse.Namespace) -> int:
    from ndnsci.native.xrootd import NDND_REFUSAL, Settings, XrootdServer

    if args.engine == "ndnd" and not args.local_root:
        print(f"ndnsci xrootd up: --engine ndnd: {NDND_REFUSAL}", file=sys.stderr)
        return 2
    settings = Settings(
        port=args.port,
        prefix=args.prefix,
        cc=args.cc,
        window=args.window,
        lifetime_ms=args.lifetime,
        local_root=args.local_root,
    )
    try:
        settings.check()
    except ValueError as exc:
        print(f"ndnsci xrootd up: {exc}", file=sys.stderr)
        return 2
    server = XrootdServer()
    state = server.up(settings)
    if args.json:
        print(json.dumps(server.status(), indent=1))
        return 0
    where = (
        f"the local folder {args.local_root}"
        if args.local_root
        else f"NDN under {args.prefix} through the NDN-DPDK forwarder {state.gqlserver}"
    )
    print(state.url)
    print(
        f"xrootd up (pid {state.pid}, user {state.user}): reads {where}; log {state.log}",
        file=sys.stderr,
    )
    return 0


def _down(args: argparse.Namespace) -> int:
    from ndnsci.native.xrootd import XrootdServer

    server = XrootdServer()
    if server.load() is None:
        print("no XRootD server is up", file=sys.stderr)
        return 0
    problems = server.down()
    for problem in problems:
        print(f"ndnsci xrootd down: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("xrootd down", file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    from ndnsci.native.xrootd import XrootdServer

    status = XrootdServer().status()
    if args.json:
        print(json.dumps(status, indent=1))
    elif not status["up"]:
        print("down")
    else:
        print(f"up {status['url']} (pid {status['pid']}, {status['engine']})")
        settings = status["settings"]
        print(
            f"  prefix {settings['prefix']}, {settings['cc']} window {settings['window']}, "
            f"lifetime {settings['lifetime_ms']} ms; faces {', '.join(status['faces']) or '-'}"
        )
        print(f"  log {status['log']}")
    return 0 if status["up"] else 1
