"""``ndnsci native check|up|down|status``: the native data plane (NDN-DPDK) on this machine.

``check`` says whether this machine can run it and why not. Exit status: 0 ready, 1 this
machine cannot run it (each reason is printed), 3 it can but NDN-DPDK is not built yet (run
``make native``), 2 on a usage error.

``up`` reserves 2 MB hugepages and starts the NDN-DPDK forwarder and fetcher (``ndndpdk-svc``,
GraphQL on 127.0.0.1:3030 and :3031), linked to the local NDNd forwarder (NDN_CLIENT_TRANSPORT,
else the ``ndnsci forwarder start`` one) through a veth pair; it returns once everything
answers. Then ``ndnsci serve --engine ndn-dpdk ROOT`` serves files with NDN-DPDK's file server
and ``ndnsci fetch --engine ndn-dpdk`` fetches with its fetcher. ``down`` stops it all and
gives the hugepages back; ``status`` prints what runs (``--json`` for all the detail).
Exit status of up/down/status: 0 done (status: the plane is up), 1 failed (status: it is down).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ndnsci.cli._common import port_number


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "native",
        help="check, start, stop or query the native data plane (NDN-DPDK)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("action", choices=("check", "up", "down", "status"), help="what to do")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--socket",
        metavar="PATH",
        help="up: the NDNd forwarder to link to (default: NDN_CLIENT_TRANSPORT, else ndnsci's)",
    )
    p.add_argument("--no-ndnd", action="store_true", help="up: do not link to NDNd")
    p.add_argument(
        "--port", type=port_number, default=3030, help="up: first GraphQL port (3030, 3031, 3032)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import NdnError

    try:
        if args.action == "check":
            return _check(args)
        if args.action == "up":
            return _up(args)
        if args.action == "down":
            return _down()
        return _status(args)
    except NdnError as exc:
        print(f"ndnsci native {args.action}: {exc}", file=sys.stderr)
        return 1


def _check(args: argparse.Namespace) -> int:
    from ndnsci.native import check
    from ndnsci.native.layout import Layout

    report = check.run(Layout.for_machine().hugepages)
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        for finding in report.findings:
            mark = "ok" if finding.ok else ("--" if not finding.required else "NO")
            print(f"{mark:>3}  {finding.name:<11} {finding.detail}")
        verdict = {
            check.READY: "ready: `ndnsci native up` starts the plane",
            check.CANNOT_RUN: "this machine cannot run the native plane (see NO above)",
            check.NOT_BUILT: "this machine can run it; build it first: make native",
        }[report.status]
        print(verdict)
    return report.status


def _up(args: argparse.Namespace) -> int:
    from ndnsci.native.layout import Layout
    from ndnsci.native.plane import Plane
    from ndnsci.ndn import forwarder

    sock = None if args.no_ndnd else forwarder.socket_path(args.socket)
    if sock is not None and not forwarder.is_running(sock):
        print(
            f"ndnsci native up: no NDNd forwarder on {sock}: start one (`ndnsci forwarder "
            f"start`) or pass --no-ndnd",
            file=sys.stderr,
        )
        return 1
    layout = Layout.for_machine(base_port=args.port)
    state = Plane().up(sock, layout)
    print(f"native plane up: forwarder {layout.forwarder.url}, fetcher {layout.fetcher.url}")
    print(
        f"{layout.hugepages} hugepages of 2 MB, {layout.cpus} CPUs"
        + (f", linked to NDNd on {sock} (face {state.ndnd_face})" if sock else ""),
        file=sys.stderr,
    )
    return 0


def _down() -> int:
    from ndnsci.native.plane import Plane

    plane = Plane()
    if plane.load() is None:
        print("the native plane is not up", file=sys.stderr)
        return 0
    problems = plane.down()
    for problem in problems:
        print(f"ndnsci native down: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("native plane down; hugepages given back")
    return 0


def _status(args: argparse.Namespace) -> int:
    from ndnsci.native.plane import Plane

    status = Plane().status()
    if args.json:
        print(json.dumps(status, indent=1, default=str))
        return 0 if status["up"] else 1
    if not status["up"]:
        print("down")
        return 1
    print(f"up ({status['run']}), {status['hugepages']} hugepages")
    for role, info in status["instances"].items():
        print(f"  {role:<10} pid {info['pid']}  {info['graphql']}")
    fw = status.get("forwarder", {})
    roles: dict[str, int] = {}
    for worker in fw.get("workers", []):
        roles[worker.get("role") or "main"] = roles.get(worker.get("role") or "main", 0) + 1
    print("  forwarder lcores: " + ", ".join(f"{k} {v}" for k, v in sorted(roles.items())))
    for face in fw.get("faces", []):
        scheme = face["locator"].get("scheme")
        counters = face.get("counters") or {}
        print(
            f"  face {face['nid']:<5} {scheme:<6} rx {counters.get('rxFrames', 0)} frames, "
            f"tx {counters.get('txFrames', 0)} frames"
        )
    for entry in fw.get("fib", []):
        print(f"  fib {entry['name']} -> {', '.join(n['id'] for n in entry['nexthops'] if n)}")
    if status["ndnd"]["socket"]:
        print(f"  NDNd {status['ndnd']['socket']}: face {status['ndnd']['face']}")
    return 0
