"""The query mix of issue 28 on an existing (large) catalog: p50/p95/p99 per query kind.

Runs ``ndnsci catalog serve`` on ``--db`` (already published, e.g. by ``bench/catalog.py`` or
``ndnsci publish --records FILE --catalog URL``) and times, over HTTP:

- start-up: seconds until ``/api/v1/health`` answers (the server loads the facet index before
  it serves, so this is also the index load), and the first search after it;
- one client, ``--queries`` per kind in turn: facet search with counts and two facets fixed
  (``2facets``), one facet (``1facet``), a free-text word (``text``), autocomplete one component
  deep (``auto1``: ``/CMIP6/<partial>``) and at a random depth (``auto``), one level of the
  tree at a random depth (``tree``), a file's metadata (``file``), the ESGF API with
  ``facets=*`` and one facet fixed, Dataset and File searches (``esgf``, ``esgf-file``), deep
  paging (``deep``: ``offset`` 5M, or half the catalog if smaller), and the landing page
  (``landing``, no filter);
- the intake-esm export: the first ``--export`` rows of ``/export/intake-esm/cmip6.csv``
  streamed (seconds);
- ``--clients`` concurrent clients (asyncio + httpx, this process) drawing kinds from the mix for
  ``--seconds``: per kind p50/p95/p99, 503s and other errors, the worst ``/health``;
  ``--publish FILE`` publishes those records over HTTP meanwhile (``ndnsci publish --catalog``).

The queries are drawn from ``--sample`` (a JSON list of published records, e.g. the reservoir
sample bench/catalog.py keeps). Prints one figure per line with the load average.

    .venv/bin/python bench/catalog_scale.py --db sqlite:////tmp/x.db --sample sample.json
        [--queries 100] [--clients 20] [--seconds 60] [--publish more.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from bench.catalog import NDNSCI, Server, _cpu_of  # noqa: E402

CMIP6_FACETS = ["source_id", "experiment_id", "variable_id", "table_id", "institution_id",
                "member_id"]  # fmt: skip
ESGF_FACETS = ["source_id", "experiment_id", "variable_id", "table_id"]


def load_avg() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def requests_of(sample: list[dict[str, Any]], rng: random.Random, total: int) -> dict[str, Any]:
    """Per kind, a function giving (path, params) of one request."""
    cmip6 = [r for r in sample if r["scheme"] == "cmip6"]

    def facets2() -> tuple[str, Any]:
        a = rng.choice(cmip6)
        k1, k2 = rng.sample(CMIP6_FACETS, 2)
        return "/api/v1/search", {k1: a["facets"][k1], k2: a["facets"][k2]}

    def facets1() -> tuple[str, Any]:
        k = rng.choice(CMIP6_FACETS)
        return "/api/v1/search", {k: rng.choice(cmip6)["facets"][k]}

    def text() -> tuple[str, Any]:
        r = rng.choice(cmip6)
        return "/api/v1/search", {"q": r["facets"][rng.choice(["source_id", "variable_id"])]}

    def auto1() -> tuple[str, Any]:
        parts = rng.choice(sample)["name"].split("/")
        return "/api/v1/autocomplete", {"prefix": f"/{parts[1]}/{parts[2][: rng.randint(0, 3)]}"}

    def auto() -> tuple[str, Any]:
        parts = rng.choice(sample)["name"].split("/")
        depth = rng.randint(1, len(parts) - 2)
        partial = parts[depth + 1][: rng.randint(0, 3)]
        return "/api/v1/autocomplete", {"prefix": "/".join(parts[: depth + 1]) + "/" + partial}

    def tree() -> tuple[str, Any]:
        parts = rng.choice(sample)["name"].split("/")
        depth = rng.randint(0, len(parts) - 2)
        return "/api/v1/tree", {"path": "/".join(parts[: depth + 1]) or "/"}

    def file() -> tuple[str, Any]:
        return "/api/v1/files" + quote(rng.choice(sample)["name"]), {}

    def esgf(kind: str) -> Any:
        def make() -> tuple[str, Any]:
            k = rng.choice(ESGF_FACETS)
            return "/esg-search/search", {
                "project": "CMIP6", k: rng.choice(cmip6)["facets"][k], "facets": "*",
                "format": "application/solr+json", "type": kind, "limit": 10,
            }  # fmt: skip

        return make

    def deep() -> tuple[str, Any]:
        offset = min(5_000_000, total // 2) + rng.randint(0, 1000)
        return "/api/v1/search", {"offset": offset, "limit": 50, "sort": "name"}

    def landing() -> tuple[str, Any]:
        return "/api/v1/search", {}

    return {"2facets": facets2, "1facet": facets1, "text": text, "auto1": auto1, "auto": auto,
            "tree": tree, "file": file, "esgf": esgf("Dataset"), "esgf-file": esgf("File"),
            "deep": deep, "landing": landing}  # fmt: skip


def figure(label: str, value: float, unit: str) -> None:
    print(f"{label}: {value:,.1f} {unit} (load {load_avg()})", flush=True)


def sequential(root: str, makers: dict[str, Any], n: int, pid: int) -> None:
    """One client, ``n`` requests per kind; with the server's CPU time per request (user +
    system, from /proc: what the load average does not inflate as much as wall time)."""
    with httpx.Client(base_url=root, timeout=120) as client:
        for kind, make in makers.items():
            latencies = []
            cpu = _cpu_of(pid)
            for _ in range(n):
                path, params = make()
                started = time.perf_counter()
                response = client.get(path, params=params)
                latencies.append(time.perf_counter() - started)
                assert response.status_code == 200, (kind, path, params, response.text[:300])
            cpu_ms = (_cpu_of(pid) - cpu) * 1000 / n
            print(f"1 client {kind}: p50 {pct(latencies, 0.5):.1f} p95 {pct(latencies, 0.95):.1f} "
                  f"p99 {pct(latencies, 0.99):.1f} max {max(latencies) * 1000:.1f} ms, server "
                  f"CPU {cpu_ms:.1f} ms/request (n={n}, load {load_avg()})",
                  flush=True)  # fmt: skip


def export(root: str, rows: int) -> None:
    started = time.perf_counter()
    got = 0
    path = "/api/v1/export/intake-esm/cmip6.csv"
    with httpx.Client(base_url=root, timeout=120) as client, client.stream("GET", path) as answer:
        assert answer.status_code == 200
        for _line in answer.iter_lines():
            got += 1
            if got > rows:
                break
    figure(f"intake-esm export, first {got - 1:,} rows streamed", time.perf_counter() - started,
           "s")  # fmt: skip


async def concurrent(root: str, makers: dict[str, Any], clients: int, seconds: float) -> None:
    kinds = list(makers)
    latencies: dict[str, list[float]] = {k: [] for k in kinds}
    shed: dict[str, int] = {k: 0 for k in kinds}
    errors: list[str] = []
    health: list[float] = []
    until = time.monotonic() + seconds

    async def one(http: httpx.AsyncClient, rng: random.Random) -> None:
        while time.monotonic() < until:
            kind = rng.choice(kinds)
            path, params = makers[kind]()
            started = time.monotonic()
            try:
                response = await http.get(path, params=params)
            except httpx.HTTPError as exc:
                errors.append(f"{kind}: {type(exc).__name__} {exc}")
                continue
            if response.status_code == 503:
                shed[kind] += 1
            elif response.status_code != 200:
                errors.append(f"{kind}: {response.status_code} {response.text[:200]}")
            else:
                latencies[kind].append(time.monotonic() - started)

    async def probe(http: httpx.AsyncClient) -> None:
        while time.monotonic() < until:
            started = time.monotonic()
            with contextlib.suppress(httpx.HTTPError):
                await http.get("/api/v1/health")
            health.append(time.monotonic() - started)
            await asyncio.sleep(0.5)

    limits = httpx.Limits(max_connections=clients + 2)
    async with httpx.AsyncClient(base_url=root, timeout=60, limits=limits) as http:
        await asyncio.gather(probe(http), *(one(http, random.Random(i)) for i in range(clients)))
    every = [x for k in kinds for x in latencies[k]]
    print(f"{clients} clients all kinds: p50 {pct(every, 0.5):.1f} p95 {pct(every, 0.95):.1f} "
          f"p99 {pct(every, 0.99):.1f} ms, {len(every) / seconds:.1f} answers/s, "
          f"503s {sum(shed.values())}, errors {len(errors)} (load {load_avg()})",
          flush=True)  # fmt: skip
    for kind in kinds:
        if latencies[kind]:
            v = latencies[kind]
            print(f"{clients} clients {kind}: p50 {pct(v, 0.5):.1f} p95 {pct(v, 0.95):.1f} "
                  f"p99 {pct(v, 0.99):.1f} ms (n={len(v)}, 503s {shed[kind]})",
                  flush=True)  # fmt: skip
    for e in errors[:5]:
        print("error:", e, flush=True)
    if health:
        figure(f"{clients} clients /health worst", max(health) * 1000, "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True)
    parser.add_argument("--sample", required=True, type=Path)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--kinds", help="comma-separated kinds (default: all)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--export", type=int, default=100_000)
    parser.add_argument("--publish", type=Path, help="JSON lines published during the load")
    parser.add_argument("--token", help="publish token (with --publish)")
    args = parser.parse_args()
    sample = json.loads(args.sample.read_text())
    print(f"cpus: {os.cpu_count()}, load {load_avg()}", flush=True)
    server = Server(args.db)
    try:
        started = time.perf_counter()
        figure("start-up: time to the first /health 200", server.wait(), "s")
        server.wait_index()
        figure("start-up: time to the first search answered (facet index loaded)",
               time.perf_counter() - started, "s")  # fmt: skip
        with httpx.Client(timeout=30) as c:
            total = c.get(server.base + "/search", params={"limit": 0}).json()["total"]
        print(f"files: {total:,}", flush=True)
        makers = requests_of(sample, random.Random(1), total)
        if args.kinds:
            makers = {k: v for k, v in makers.items() if k in args.kinds.split(",")}
        if args.queries:
            sequential(server.root, makers, args.queries, server.process.pid)
        if args.export:
            export(server.root, args.export)
        if args.clients:
            publisher = None
            if args.publish:
                publisher = subprocess.Popen(
                    [str(NDNSCI), "publish", "--records", str(args.publish), "--catalog",
                     server.root, "--token", args.token], stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
            publish_started = time.perf_counter()
            asyncio.run(concurrent(server.root, makers, args.clients, args.seconds))
            if publisher is not None:
                _, err = publisher.communicate()
                figure(f"publish beside the load (exit {publisher.returncode})",
                       time.perf_counter() - publish_started, "s")  # fmt: skip
                if publisher.returncode:
                    print(err[-500:], flush=True)
        figure("server RSS now", server.rss_mb(), "MB")
        figure("server peak RSS", server.peak_mb(), "MB")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
