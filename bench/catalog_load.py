"""Catalog under load: search latency and shed share with many clients and a publish running.

For each backend, a catalog of --files records (real CMIP5 rows, tests/catalog/corpus.py) is
served by a real ``ndnsci catalog serve``; the same portal-like searches are asked over HTTP
(tests/catalog/loadtest.py) first by one client alone, then by --clients clients for --seconds
while ``ndnsci publish --catalog`` sends --publish more records. Prints one figure per line
(``<backend> <figure>: <value> <unit>``): search p50/p95 and searches answered per second alone
and under load, the loaded / alone ratios (the peer: the same server and catalog with one
client, measured in the same run), the share of 503s (refused with Retry-After, the server
shedding load), the worst /health latency, the publish time, and the time SIGTERM takes to
stop the server.

    .venv/bin/python bench/catalog_load.py [--backends sqlite postgresql] [--clients 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from ndnsci_catalog.migrate import upgrade  # noqa: E402
from tests.catalog.corpus import many_records  # noqa: E402
from tests.catalog.loadtest import LoadResult, populate, run_load  # noqa: E402


def database(backend: str, tmp: Path, pg: Any, name: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp / f'{name}.db'}"
    return str(pg.create_database(name))


def measure(backend: str, args: argparse.Namespace, tmp: Path, pg: Any) -> None:
    records = list(many_records(args.files + args.publish))
    served, published = records[: args.files], records[args.files :]
    runs: dict[str, LoadResult] = {}
    for label, clients, more in (("alone", 1, []), ("loaded", args.clients, published)):
        url = database(backend, tmp, pg, f"load_{label}")
        upgrade(url)
        populate(url, served)
        runs[label] = run_load(url, served, more, clients=clients, seconds=args.seconds,
                               workdir=tmp)  # fmt: skip
        if runs[label].errors:
            print(f"{backend} {label}: {len(runs[label].errors)} errors, e.g. "
                  f"{runs[label].errors[0]}", flush=True)  # fmt: skip
    report(backend, args, runs["alone"], runs["loaded"])


def report(backend: str, args: argparse.Namespace, alone: LoadResult, loaded: LoadResult) -> None:
    def line(figure: str, value: float, unit: str) -> None:
        print(f"{backend} {figure}: {value:,.2f} {unit}", flush=True)

    loaded_label = f"{args.clients} clients" + (" + publish" if args.publish else "")
    for label, run in (("1 client", alone), (loaded_label, loaded)):
        line(f"search p50, {label}", statistics.median(run.latencies) * 1000, "ms")
        line(f"search p95, {label}", run.percentile(0.95) * 1000, "ms")
        line(f"searches answered/s, {label}", len(run.latencies) / args.seconds, "/s")
    line("search p50 loaded / alone", statistics.median(loaded.latencies)
         / statistics.median(alone.latencies), "x")  # fmt: skip
    line("search p95 loaded / alone", loaded.percentile(0.95) / alone.percentile(0.95), "x")
    line("searches answered/s loaded / alone", len(loaded.latencies) / len(alone.latencies), "x")
    line("503 share under load", loaded.shed_share() * 100, "%")
    print(f"{backend} errors other than 503 under load: {len(loaded.errors)}", flush=True)
    line("/health worst under load", loaded.worst_health() * 1000, "ms")
    if args.publish:
        line(f"publish of {args.publish} records under load", loaded.publish_seconds, "s")
    line("SIGTERM to exit under load", loaded.stop_seconds, "s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--files", type=int, default=29_000)
    parser.add_argument("--publish", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}", flush=True)
    pg = None
    if "postgresql" in args.backends:
        from tests.catalog.pgserver import PostgresServer

        pg = PostgresServer()
        pg.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for backend in args.backends:
                measure(backend, args, Path(tmp), pg)
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    main()
