"""``ndnsci testbed``: an emulated multi-site NDN testbed on this machine (root needed).

    ndnsci testbed up [--topology default] [--duration 3600]     build it, keep it until Ctrl-C
    ndnsci testbed run EXPERIMENT... [--json] [--out DIR] [--quick]
    ndnsci testbed down [ID...]                                   remove testbeds (default: all)
    ndnsci testbed list

Each node of the topology (deploy/testbed/*.toml) gets its own network namespace and NDNd;
links are veth pairs with tbf for the rate and a user-space delay element for the delay.
EXPERIMENT is link, sweep, caching, cachehit, fairness, federation or all: each runs on a
testbed built for the run and removed after it, and writes bench/results/testbed-EXPERIMENT.json
(every raw point) and .png. ``--json`` prints each result as one JSON line on stdout.
``federation`` publishes --records N catalog records (100000; --quick 5000) at one site and
times their arrival at a site across the WAN, over NDN and over HTTP (docs/testbed.md).

Everything a testbed starts stops with it: at the end, on Ctrl-C or SIGTERM, on failure, at
the time limit (--timeout, --duration), and, if its builder is killed outright, with the
builder (its namespaces are then removed by ``ndnsci testbed down``).

Exit status: 0 done, 1 an experiment failed, 2 usage error or not root, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ndnsci.cli._common import fail

EXPERIMENT_NAMES = ("link", "sweep", "caching", "cachehit", "fairness", "federation")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "testbed",
        help="an emulated multi-site NDN testbed (network namespaces; root)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = p.add_subparsers(dest="testbed_command", metavar="COMMAND", required=True)
    up = commands.add_parser("up", help="build a testbed and keep it until Ctrl-C")
    _topology_option(up)
    up.add_argument(
        "--duration", type=float, default=3600, metavar="S", help="take it down after S (3600)"
    )
    up.set_defaults(func=_up)

    run = commands.add_parser("run", help="run experiments on a testbed of their own")
    run.add_argument(
        "experiments", nargs="+", metavar="EXPERIMENT", choices=(*EXPERIMENT_NAMES, "all")
    )
    _topology_option(run)
    run.add_argument("--json", action="store_true", help="print each result as a JSON line")
    run.add_argument(
        "--out", metavar="DIR", help="results folder (bench/results; --quick: bench/results/quick)"
    )
    run.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    run.add_argument("--repeats", type=int, help="sweep repeats (2)")
    run.add_argument(
        "--records",
        type=int,
        metavar="N",
        help="federation: records published (100000; --quick 5000)",
    )
    run.add_argument(
        "--timeout", type=float, default=1800, metavar="S", help="stop everything after S (1800)"
    )
    run.add_argument("--no-plot", action="store_true", help="JSON only, no PNG")
    run.set_defaults(func=_run)

    down = commands.add_parser("down", help="remove testbeds (all of them without ID)")
    down.add_argument("ids", nargs="*", metavar="ID", help="e.g. nsci-12345")
    down.set_defaults(func=_down)

    listing = commands.add_parser("list", help="the testbeds that exist, as JSON lines")
    listing.set_defaults(func=_list)


def _topology_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topology",
        default="default",
        metavar="NAME|FILE",
        help="a bundled topology (default, small) or a .toml file (default)",
    )


# --- up ----------------------------------------------------------------------------------------


def _up(args: argparse.Namespace) -> int:
    from ndnsci.errors import TestbedError
    from ndnsci.testbed.bed import Testbed, require_root
    from ndnsci.testbed.topology import bundled, load

    try:
        require_root()
        topo = load(bundled(args.topology))
    except TestbedError as exc:
        return fail("testbed", exc)
    try:
        with _interruptible(args.duration), Testbed(topo) as bed:
            print(json.dumps(_describe(bed)), flush=True)
            _hints(bed)
            while True:
                time.sleep(1)
                bed.check_alive()
    except _TimeUp:
        return 0
    except KeyboardInterrupt:
        return 130
    except TestbedError as exc:
        return fail("testbed", exc, 1)


def _describe(bed: Any) -> dict[str, Any]:
    return {
        "id": bed.id,
        "topology": bed.topo.name,
        "namespaces": {node: bed.ns(node) for node in bed.topo.nodes},
        "transports": {node: bed.transport(node) for node in bed.topo.nodes},
        "addresses": {
            node: [link.address(node) for link in bed.topo.links_of(node)]
            for node in bed.topo.nodes
        },
    }


def _hints(bed: Any) -> None:
    consumer = sorted(bed.topo.nodes)[0]
    servers = [n for n in bed.topo.role("server") if n.serve]
    lines = [f"testbed {bed.id} is up; Ctrl-C (or `ndnsci testbed down {bed.id}`) removes it"]
    if servers:
        lines.append(
            f"  ip netns exec {bed.ns(consumer)} env NDN_CLIENT_TRANSPORT="
            f"{bed.transport(consumer)} {Path(sys.executable).parent / 'ndnsci'} fetch --ls "
            f"{servers[0].serve}"
        )
    for line in lines:
        print(line, file=sys.stderr, flush=True)


# --- run ---------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from ndnsci.errors import NdnsciError, TestbedError
    from ndnsci.testbed.bed import Testbed, require_root
    from ndnsci.testbed.topology import bundled, load

    names = list(EXPERIMENT_NAMES) if "all" in args.experiments else args.experiments
    try:
        require_root()
        topo = load(bundled(args.topology))
    except TestbedError as exc:
        return fail("testbed", exc)
    opts = _options(args)
    out = Path(args.out) if args.out else _default_out(args.quick)
    failed = 0
    try:
        with _interruptible(args.timeout), Testbed(topo) as bed:
            for name in names:
                failed += not _run_one(bed, name, opts, out, args)
    except _TimeUp:
        return fail("testbed", f"time limit of {args.timeout:.0f} s reached; all stopped", 1)
    except KeyboardInterrupt:
        print("ndnsci testbed: interrupted; all stopped", file=sys.stderr)
        return 130
    except NdnsciError as exc:
        return fail("testbed", exc, 1)
    return 1 if failed else 0


def _options(args: argparse.Namespace) -> Any:
    from ndnsci.testbed.experiments import Options

    def log(text: str) -> None:
        print(f"ndnsci testbed: {text}", file=sys.stderr, flush=True)

    opts = Options.quick(log=log) if args.quick else Options(log=log)
    if args.repeats:
        opts.repeats = args.repeats
    if args.records:
        opts.federation_records = args.records
    return opts


def _default_out(quick: bool) -> Path:
    from ndnsci.ndn.forwarder import repo_dir

    repo = repo_dir()
    base = repo / "bench" / "results" if repo is not None else Path("testbed-results")
    return base / "quick" if quick else base


def _run_one(bed: Any, name: str, opts: Any, out: Path, args: argparse.Namespace) -> bool:
    from ndnsci.errors import TestbedError
    from ndnsci.testbed import experiments, plots

    started = time.monotonic()
    print(f"ndnsci testbed: {name} ...", file=sys.stderr, flush=True)
    try:
        result = experiments.EXPERIMENTS[name](bed, opts)
        bed.check_alive()
    except TestbedError as exc:
        print(f"ndnsci testbed: {name} failed: {exc}", file=sys.stderr, flush=True)
        return False
    result["experiment"] = name
    result["topology"] = bed.topo.name
    result["quick"] = args.quick
    result["seconds"] = round(time.monotonic() - started, 1)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"testbed-{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    written = [str(path)]
    if not args.no_plot:
        written.append(str(plots.save(name, result, out / f"testbed-{name}.png")))
    print(f"ndnsci testbed: {name} done in {result['seconds']} s: {', '.join(written)}",
          file=sys.stderr, flush=True)  # fmt: skip
    if args.json:
        print(json.dumps(result), flush=True)
    return True


# --- down, list --------------------------------------------------------------------------------


def _down(args: argparse.Namespace) -> int:
    from ndnsci.errors import TestbedError
    from ndnsci.testbed import netns
    from ndnsci.testbed.bed import require_root

    try:
        require_root()
    except TestbedError as exc:
        return fail("testbed", exc)
    try:
        found = netns.records()
        if args.ids:
            unknown = sorted(set(args.ids) - {r.id for r in found})
            if unknown:
                return fail(
                    "testbed", f"no testbed {', '.join(unknown)} (see `ndnsci testbed list`)"
                )
            found = [r for r in found if r.id in args.ids]
        for record in found:
            removed = netns.take_down(record)
            print(f"ndnsci testbed: {record.id} down ({len(removed)} namespaces)", file=sys.stderr)
            for name in removed:
                print(name)
    except TestbedError as exc:
        return fail("testbed", exc, 1)
    return 0


def _list(args: argparse.Namespace) -> int:
    from ndnsci.errors import TestbedError
    from ndnsci.testbed import netns

    try:
        for record in netns.records():
            print(json.dumps({"id": record.id, "topology": record.topology,
                              "owner_pid": record.owner_pid, "running": record.owner_alive,
                              "namespaces": record.namespaces}))  # fmt: skip
    except TestbedError as exc:
        return fail("testbed", exc, 1)
    return 0


# --- time limits and signals -------------------------------------------------------------------


class _TimeUp(Exception):
    """The run's time limit: raised in the main thread, so the testbed comes down."""


@contextlib.contextmanager
def _interruptible(seconds: float) -> Iterator[None]:
    """SIGTERM acts as Ctrl-C; SIGALRM after ``seconds`` raises _TimeUp."""

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    def on_alarm(signum: int, frame: Any) -> None:
        raise _TimeUp

    previous = signal.signal(signal.SIGTERM, on_term), signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGALRM, previous[1])
