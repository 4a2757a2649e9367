"""``ndnsci up``: the whole system on this machine, with data published, until Ctrl-C.

Starts an NDN forwarder (or uses the one already running, and stops when that one stops), a
catalog with DIR published into it (default: a generated sample archive of CMIP5 and CMS files;
a DIR that does not exist is an error), a producer serving DIR's files under their catalog
names and a transfer agent running the catalog's transfer jobs (the portal's "Transfer to a
site", ``ndnsci transfer submit``) into WORKDIR/transfers; prints the portal's URL, where
transferred files land and commands that work; stops everything on Ctrl-C or SIGTERM.

``--check`` starts everything, runs one search and one fetch (verified), prints what they
gave and stops: exit status 0 when both worked (for scripts, CI and ``make demo``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ndnsci.cli._common import fail, port_number


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "up",
        help="run forwarder, catalog and producer with data published (the demo)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", metavar="DIR", help="directory to publish (default: the sample)")
    p.add_argument("--port", type=port_number, default=8000, help="catalog and portal port (8000)")
    p.add_argument(
        "--ws-port",
        type=int,
        default=9696,
        help="WebSocket port of the forwarder it starts (9696, which the portal expects; "
        "0: any free port); in use is an error",
    )
    p.add_argument("--workdir", metavar="DIR", help="logs and catalog database (default: temp)")
    p.add_argument(
        "--private-forwarder",
        action="store_true",
        help="start a forwarder of its own even if one runs at NDN_CLIENT_TRANSPORT",
    )
    p.add_argument("--check", action="store_true", help="search, fetch one file, then stop")
    p.set_defaults(func=run)


def default_data() -> Path:
    """The sample archive `ndnsci up` publishes: kept, so its files stay for a look."""
    from ndnsci.base.environment import settings

    return settings().share_dir / "sample"


def native_line() -> str:
    """One line: is the native plane (NDN-DPDK, NDNc) there, and how to turn it on. The stack
    never needs it (NDNd and ndnsci's own data plane carry the demo), so this only looks for
    the builds (``ndnsci native check`` tells whether the machine can run them)."""
    from ndnsci.native import install

    build = install.ndn_dpdk()
    if build is None:
        return (
            "ndnsci up: native plane not built (the demo uses ndnsci's own data plane through "
            "NDNd); to turn it on: `make native` (~40 min the first time; `ndnsci native check` "
            "says whether this machine can run it), then `ndnsci native up`"
        )
    return (
        f"ndnsci up: native plane built ({build.prefix}), not started by the demo; to turn it "
        "on: `ndnsci native up`, then fetch with `--transport ndn-dpdk` (docs/native.md)"
    )


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import NdnsciError
    from ndnsci.ndn.transport import transport_uri
    from ndnsci.site.stack import LocalStack

    if args.data and not Path(args.data).is_dir():
        # a typo would get the sample written into a new folder of that name, and published
        what = "not a directory" if Path(args.data).exists() else "no such directory"
        return fail("up", f"--data {args.data}: {what}")
    user_transport = transport_uri()  # before the stack points NDN_CLIENT_TRANSPORT at itself
    print(native_line(), file=sys.stderr)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stack = LocalStack(
        args.data or default_data(),
        port=args.port,
        workdir=args.workdir,
        forwarder="private" if args.private_forwarder else "shared",
        ws_port=args.ws_port,
        log=sys.stderr,
    )
    try:
        stack.start()
    except NdnsciError as exc:
        return fail("up", exc, 1)
    except KeyboardInterrupt:
        return 130
    try:
        _banner(stack, user_transport)
        return _check(stack) if args.check else _wait(stack, stop)
    except KeyboardInterrupt:
        return 0
    finally:
        print("ndnsci up: stopping", file=sys.stderr)
        stack.stop()


def _wait(stack: Any, stop: threading.Event) -> int:
    print("Press Ctrl-C to stop.", flush=True)
    while not stop.wait(1.0):
        dead = stack.dead()
        if dead:
            return fail("up", dead, 1)
    return 0


def _example(stack: Any) -> tuple[str, str]:
    """A query and a name that exist in what was published (for the printed commands)."""
    with stack.catalog() as catalog:
        found = catalog.search(scheme="cmip5", model="HadCM3", variable="tas")
        if len(found) == 0:
            found = catalog.search()
        if len(found) == 0:
            return "", ""
        first = found[0]
    facets = first.facets
    if first.scheme == "cmip5" and facets.get("model") and facets.get("variable"):
        query = f"model={facets['model']} variable={facets['variable']}"
    else:
        query = f"prefix={first.name.rsplit('/', 1)[0]}"
    return query, first.name


def _command() -> str:
    """How to type ndnsci in another terminal: its name when on PATH, else its script's path."""
    import os
    import shutil

    script = Path(sys.executable).parent / "ndnsci"
    found = shutil.which("ndnsci")
    if found and Path(found).resolve() == script.resolve():
        return "ndnsci"
    if script.exists():
        relative = os.path.relpath(script)
        return relative if not relative.startswith("..") else str(script)
    return f"{sys.executable} -m ndnsci"


def _banner(stack: Any, user_transport: str) -> None:
    query, name = _example(stack)
    ndnsci = _command()
    # the variables the commands need in a new shell: none with the default forwarder and port
    env = "" if stack.transport == user_transport else f"NDN_CLIENT_TRANSPORT={stack.transport} "
    if stack.port != 8000:
        env += f"NDNSCI_CATALOG={stack.catalog_url} "
    lines = [
        "",
        "ndnsci is up",
        f"  portal      {stack.portal_url}",
        f"  catalog     {stack.catalog_url}/api/v1/",
        f"  esg-search  {stack.catalog_url}/esg-search (ESGF clients; files over HTTP at /data/)",
        f"  forwarder   {stack.transport}"
        + (f" (WebSocket ws://127.0.0.1:{stack.ws_port})" if stack.ws_port else ""),
        f"  data        {stack.files} files from {stack.data}",
        f"  transfers   {stack.transfer_root} (each job's destination folder is made here"
        + ("; removed on stop: --workdir DIR keeps it)" if stack.temporary else ")"),
        f"  logs        {stack.workdir}",
        "",
        "Try, in another terminal:",
        f"  {env}{ndnsci} search {query}",
        f"  {env}{ndnsci} fetch --query '{query}' -o ndnsci-data",
        f"  {env}{ndnsci} fetch {name}",
        "",
        "Transfer jobs (the portal's Transfers page) need a token; make one with:",
        f"  {ndnsci} catalog token create $USER --db {stack.db_url}",
        "",
    ]
    print("\n".join(lines), flush=True)


def _check(stack: Any) -> int:
    """One search and one fetch through the running stack; 0 when both worked."""
    import tempfile

    from ndnsci.errors import NdnsciError
    from ndnsci.sdk.fetch import download

    query, _ = _example(stack)
    try:
        with stack.catalog() as catalog:
            found = catalog.query(query)
            print(f"check: search {query}: {len(found)} files")
            if len(found) == 0:
                return fail("up", "check failed: the search found nothing", 1)
            with tempfile.TemporaryDirectory(prefix="ndnsci-check-") as out:
                report = download(found[:1], out, progress=False)
    except NdnsciError as exc:
        return fail("up", f"check failed: {exc}", 1)
    for outcome in report.outcomes:
        print(f"check: fetch {outcome.name}: {outcome.status}, {outcome.size:,} bytes"
              + (f": {outcome.error}" if outcome.error else ", SHA-256 verified"))  # fmt: skip
    if not report.ok:
        return fail("up", "check failed: the fetch did not complete", 1)
    print("check: ok")
    return 0
