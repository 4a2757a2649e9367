"""Transfer jobs through each engine: a job of N files run by the site's agent, same run.

One private NDNd forwarder, a catalog (SQLite) with N random CMS files published, and:

    python job:   the agent (``ndnsci.site.transfers.Agent``, P workers) fetching every file
                  with ndnsci's own engine from ``ndnsci serve ROOT --catalog URL``
    native job:   the same job through NDN-DPDK's fetcher (engine ``auto``, which picks it) from
                  ``ndnsci serve --engine ndn-dpdk ROOT --catalog URL`` on a native plane
                  brought up on that NDNd (``--native``: root, hugepages, ``make native``)
    one file:     one of the files through NDN-DPDK's fetcher alone (``fetch_file``, engine
                  ``ndn-dpdk``): the single-file rate the job is compared with

Each job is timed from its submission to its end (every file in place, verified against the
catalog's SHA-256); rounds alternate the engines; medians of ``--rounds``. Printed: MB/s per
row, ``native job / python job`` and ``native job / one native file``. Only one producer serves
the names at a time (the python one is stopped while the native rows run): both would answer
for /CMS through NDNd otherwise.

    .venv/bin/python bench/transfer_jobs.py --files 20 --mib 256 --rounds 3 --native
    .venv/bin/python bench/transfer_jobs.py --files 10 --mib 32 --rounds 1    # python only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CLI = [sys.executable, "-m", "ndnsci"]


def lfn(number: int) -> str:
    guid = f"{number:08X}-0000-4000-8000-{number:012X}"
    return f"store/data/Run2018D/EGamma/MINIAOD/bench-v1/{number % 4}0000/{guid}.root"


def write_random(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    chunk = os.urandom(1 << 20)
    with path.open("wb") as out:
        left = size
        while left > 0:
            out.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
            chunk = chunk[1:] + chunk[:1]  # not one repeated MiB (no compression anywhere)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_log(path: Path, text: str, timeout: float, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited:\n{path.read_text()[-3000:]}")
        time.sleep(0.2)
    raise RuntimeError(f"{proc.args}: no {text!r} within {timeout} s:\n{path.read_text()[-3000:]}")


class Site:
    def __init__(self, tmp: Path, files: int, size: int) -> None:
        from ndnsci.ndn import forwarder

        self.tmp = tmp
        self.root = tmp / "origin"
        self.names = [f"/CMS/{lfn(n)}" for n in range(files)]
        self.size = size
        self.procs: list[subprocess.Popen[bytes]] = []
        print(f"writing {files} files of {size >> 20} MiB", file=sys.stderr, flush=True)
        for n in range(files):
            write_random(self.root / lfn(n), size)
        self.sock = tmp / "fw" / "nfd.sock"
        self.env = {
            **os.environ,
            "NDN_CLIENT_TRANSPORT": f"unix://{self.sock}",
            "NDNSCI_FW_UDP_PORT": str(free_port()),
            "NDNSCI_FW_WS_PORT": str(free_port()),
            "NDNSCI_CONFIG_DIR": str(tmp / "config"),
            "NDNSCI_NATIVE_RUN": str(tmp / "native"),
            "XDG_STATE_HOME": str(tmp / "state"),
        }
        os.environ.update({k: self.env[k] for k in ("NDN_CLIENT_TRANSPORT", "NDNSCI_NATIVE_RUN")})
        forwarder.start(self.sock, extra_env=self.env)
        self.db = f"sqlite:///{tmp / 'catalog.db'}"
        print("publishing", file=sys.stderr, flush=True)
        self.run("publish", str(self.root), "--db", self.db)
        self.token = self.run("catalog", "token", "create", "bench", "--db", self.db).strip()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.catalog = self.spawn(
            "catalog", "catalog", "serve", "--db", self.db, "--port", str(port)
        )
        wait_log(tmp / "catalog.log", "Uvicorn running", 60, self.catalog)
        self.plane: Any = None
        self.producer: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> str:
        out = subprocess.run(
            [*CLI, *args], capture_output=True, text=True, env=self.env, check=False
        )
        if out.returncode not in (0, 1):
            raise RuntimeError(f"ndnsci {' '.join(args)}: {out.stderr[-2000:]}")
        return out.stdout

    def spawn(self, label: str, *args: str) -> subprocess.Popen[bytes]:
        log = (self.tmp / f"{label}.log").open("ab")
        proc = subprocess.Popen([*CLI, *args], stderr=log, stdout=log, env=self.env)
        self.procs.append(proc)
        return proc

    def serve(self, engine: str) -> None:
        """The names served by one producer: ndnsci's own, or NDN-DPDK's file server."""
        self.unserve()
        label = f"serve-{engine}"
        (self.tmp / f"{label}.log").unlink(missing_ok=True)
        args = ["serve", str(self.root), "--catalog", self.url, "--engine", engine]
        self.producer = self.spawn(label, *args)
        wait_log(self.tmp / f"{label}.log", "serving", 300, self.producer)
        time.sleep(1.0)  # the routes settle

    def unserve(self) -> None:
        if self.producer is not None and self.producer.poll() is None:
            self.producer.terminate()
            self.producer.wait(30)
        self.producer = None

    def native_up(self) -> None:
        from ndnsci.base.processes import die_with_parent
        from ndnsci.native.layout import Layout
        from ndnsci.native.plane import Plane

        self.plane = Plane(self.tmp / "native")
        self.plane.up(self.sock, Layout.for_machine(base_port=free_port()), preexec=die_with_parent)

    def job(self, destination: str, engine: str, parallel: int) -> tuple[float, dict[str, int]]:
        """Seconds from submission to the job's end, and the engines that moved its files."""
        import ndnsci
        from ndnsci.site.transfers import Agent

        catalog = ndnsci.Catalog(self.url, token=self.token)
        out = self.tmp / "transfers"
        shutil.rmtree(out / destination, ignore_errors=True)
        started = time.monotonic()
        job = catalog.transfer(self.names, destination, engine=engine)
        Agent(self.db, out, parallel=parallel, name=f"bench-{destination}").run(until_idle=True)
        seconds = time.monotonic() - started
        status = job.status()
        if status.state != "done":
            failed = [(f.name, f.error) for f in job.files("failed")]
            raise RuntimeError(f"{destination}: {status.summary()} {failed[:3]}")
        shutil.rmtree(out / destination, ignore_errors=True)
        return seconds, dict(status.engines)

    def one_native(self) -> float:
        from ndnsci.sdk.fetch import fetch_file
        from ndnsci.sdk.manifest import ManifestEntry

        out = self.tmp / "one"
        shutil.rmtree(out, ignore_errors=True)
        entry = ManifestEntry(self.names[0], "one.root", self.size, None)
        started = time.monotonic()
        got = fetch_file(entry, out, transport="ndn-dpdk", catalog=False)
        seconds = time.monotonic() - started
        if got.size != self.size:
            raise RuntimeError(f"one native file: {got.size} bytes")
        return seconds

    def close(self) -> None:
        from ndnsci.ndn import forwarder

        self.unserve()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(30)
        if self.plane is not None:
            problems = self.plane.down()
            if problems:
                print(f"native plane down: {problems}", file=sys.stderr)
        forwarder.stop(self.sock)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=4, help="the agent's workers")
    parser.add_argument("--native", action="store_true", help="the native rows (NDN-DPDK)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ndnsci-bench-jobs-", dir="/tmp"))
    site = Site(tmp, args.files, args.mib << 20)
    total = args.files * (args.mib << 20)
    times: dict[str, list[float]] = {"python job": [], "native job": [], "one native file": []}
    engines: dict[str, dict[str, int]] = {}
    try:
        if args.native:
            site.native_up()
        for round_ in range(args.rounds):
            site.serve("python")
            seconds, used = site.job(f"python-{round_}", "python", args.parallel)
            times["python job"].append(seconds)
            engines["python job"] = used
            print(f"round {round_ + 1}: python job {total / seconds / 1e6:.0f} MB/s", flush=True)
            if args.native:
                site.serve("ndn-dpdk")
                seconds, used = site.job(f"native-{round_}", "auto", args.parallel)
                times["native job"].append(seconds)
                engines["native job"] = used
                one = site.one_native()
                times["one native file"].append(one)
                print(
                    f"round {round_ + 1}: native job {total / seconds / 1e6:.0f} MB/s "
                    f"({used}), one native file {site.size / one / 1e6:.0f} MB/s",
                    flush=True,
                )
    finally:
        site.close()
        shutil.rmtree(tmp, ignore_errors=True)
    sizes = {"python job": total, "native job": total, "one native file": args.mib << 20}
    rates = {k: sizes[k] / statistics.median(v) / 1e6 for k, v in times.items() if v}
    print(f"\n{args.files} x {args.mib} MiB, {args.parallel} workers, medians of {args.rounds}:")
    for label, rate in rates.items():
        print(f"  {label:16} {rate:8.1f} MB/s  {engines.get(label, '')}")
    if "native job" in rates:
        print(f"  native job / python job:      {rates['native job'] / rates['python job']:.2f}x")
        print(
            f"  native job / one native file: {rates['native job'] / rates['one native file']:.2f}x"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"rates": rates, "engines": engines, "args": vars(args)}, default=str)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
