"""Catalog benchmark: bulk publish rate, /search and /autocomplete latency at N files.

Records are realistic: CMIP5 facets are whole rows of the GLADE listing in
tests/data/corpora/cmip5_paths.tsv (so model, experiment, variable... keep their real joint
distribution), with ensemble, version and time range varied to make distinct files; 10% are CMS
LFNs from cms_lfns.tsv with varied file GUIDs. Queries are what a portal user does: one or two
facet filters with values drawn from the published distribution, or one free-text word, plus
the facet counts; autocomplete of a random name cut at a random depth.
Prints one figure per line.

    .venv/bin/python bench/catalog.py [--sizes 100000 1000000] [--backends sqlite postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from ndnsci.catalog.config import Settings  # noqa: E402
from ndnsci.catalog.database import make_engine, make_sessionmaker  # noqa: E402
from ndnsci.catalog.ingest import publish  # noqa: E402
from ndnsci.catalog.main import create_app  # noqa: E402
from ndnsci.catalog.migrate import upgrade  # noqa: E402
from ndnsci.catalog.records import parse_record  # noqa: E402

CORPORA = ROOT / "tests" / "data" / "corpora"
KEYS = ["product", "institute", "model", "experiment", "frequency", "realm", "table",
        "ensemble", "version", "variable"]  # fmt: skip
QUERY_FACETS = ["model", "experiment", "variable", "frequency", "institute", "realm"]
BATCH = 5000


def _rows(file: str) -> list[dict[str, str]]:
    with open(CORPORA / file, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def records(n: int, rng: random.Random) -> list[dict[str, Any]]:
    cmip5 = [r for r in _rows("cmip5_paths.tsv") if r["gt_model"]]
    cms = [r["lfn"] for r in _rows("cms_lfns.tsv") if r["lfn"].count("/") == 8]
    out = []
    for i in range(n):
        if i % 10 == 9:
            lfn = rng.choice(cms).rsplit("/", 1)[0] + f"/{rng.getrandbits(64):016X}-{i}.root"
            parts = lfn.split("/")
            facets = dict(zip(["area", "era", "primary_dataset", "tier", "processing", "counter",
                               "filename"], parts[2:], strict=True))  # fmt: skip
            out.append({"name": "/CMS" + lfn, "scheme": "cms", "facets": facets})
            continue
        row = rng.choice(cmip5)
        facets = {k: row[f"gt_{k}"] or "x" for k in KEYS}
        facets["table"] = row["path"].rsplit("/", 1)[1].split("_")[1]
        facets["ensemble"] = f"r{rng.randint(1, 12)}i1p{rng.randint(1, 3)}"
        facets["version"] = (
            f"v{rng.randint(2010, 2016)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
        )
        start = rng.randint(1850, 2290)
        facets["time_range"] = f"{start}01-{start + rng.randint(0, 20)}12"
        filename = (
            "_".join(
                facets[k]
                for k in ("variable", "table", "model", "experiment", "ensemble", "time_range")
            )
            + ".nc"
        )
        name = "/CMIP5/" + "/".join(facets[k] for k in KEYS) + "/" + filename
        out.append({"name": name, "scheme": "cmip5", "filename": filename,
                    "facets": {"activity": "CMIP5", **facets, "geo": None},
                    "size": rng.randint(10**6, 10**10)})  # fmt: skip
    return out


def load(url: str, recs: list[dict[str, Any]]) -> float:
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    started = time.perf_counter()
    for i in range(0, len(recs), BATCH):
        parsed = [parse_record(r) for r in recs[i : i + BATCH]]
        with sessions() as session:
            publish(session, parsed)
            session.commit()
    elapsed = time.perf_counter() - started
    with engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE")
        conn.commit()
    engine.dispose()
    return len(recs) / elapsed


def queries(recs: list[dict[str, Any]], rng: random.Random, n: int) -> list[dict[str, str]]:
    cmip5 = [r for r in recs if r["scheme"] == "cmip5"]
    out: list[dict[str, str]] = []
    while len(out) < n:
        a, b = rng.choice(cmip5), rng.choice(cmip5)  # values weighted by their frequency
        kind = len(out) % 3
        k1, k2 = rng.sample(QUERY_FACETS, 2)
        if kind == 0:
            out.append({k1: a["facets"][k1]})
        elif kind == 1:
            out.append({k1: a["facets"][k1], k2: a["facets"][k2]})
        else:
            out.append({"q": b["facets"][rng.choice(["model", "variable"])]})
    return out


def prefixes(recs: list[dict[str, Any]], rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        parts = rng.choice(recs)["name"].split("/")
        depth = rng.randint(1, len(parts) - 2)
        partial = parts[depth + 1][: rng.randint(0, 3)]
        out.append("/".join(parts[: depth + 1]) + "/" + partial)
    return out


def p95(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=20)[-1] * 1000


async def timed(client: httpx.AsyncClient, path: str, params: list[Any]) -> list[float]:
    latencies = []
    for p in params:
        started = time.perf_counter()
        response = await client.get(path, params=p)
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return latencies


async def measure(url: str, recs: list[dict[str, Any]], rng: random.Random) -> dict[str, float]:
    app = create_app(Settings(db=url))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://b/api/v1") as client:
        qs = queries(recs, rng, 300)
        await timed(client, "/search", qs[:20])  # warm the caches
        search = await timed(client, "/search", qs)
        by_kind = [search[i::3] for i in range(3)]
        auto = await timed(
            client, "/autocomplete", [{"prefix": p} for p in prefixes(recs, rng, 300)]
        )
    app.state.engine.dispose()
    return {
        "search_p50": statistics.median(search) * 1000,
        "search_p95": p95(search),
        "search_1facet_p95": p95(by_kind[0]),
        "search_2facets_p95": p95(by_kind[1]),
        "search_text_p95": p95(by_kind[2]),
        "autocomplete_p95": p95(auto),
    }


def database(backend: str, n: int, tmp: Path, pg: Any) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp / f'bench{n}.db'}"
    return str(pg.create_database(f"bench{n}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    args = parser.parse_args()
    pg = None
    if "postgresql" in args.backends:
        from tests.catalog.pgserver import PostgresServer

        pg = PostgresServer()
        pg.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for n in args.sizes:
                recs = records(n, random.Random(n))
                for backend in args.backends:
                    url = database(backend, n, Path(tmp), pg)
                    upgrade(url)
                    rate = load(url, recs)
                    print(f"{backend} n={n} bulk publish: {rate:,.0f} records/s", flush=True)
                    for label, value in asyncio.run(measure(url, recs, random.Random(1))).items():
                        print(f"{backend} n={n} {label}: {value:.1f} ms", flush=True)
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    main()
