"""ESGF API and HTTP gateway benchmark: esg-search latency at N files, gateway against fetch.

search (``--files N``, default 1,000,000): the records of bench/catalog.py (real CMIP5 facet
rows, 10% CMS) published into SQLite, served by ``ndnsci catalog serve`` and queried over HTTP
as esgf-pyclient queries: per search, the counts request (``type=File&limit=0&facets=*``) and
the page request (``type=File&limit=10``), for one or two facet constraints, a free-text word
and no constraint; the same filters on ``/api/v1/search`` in the same run for comparison; then
the facet counts of both APIs compared for every query (they must be identical); Dataset
searches last. Prints p50/p95 per kind.

gateway (``--size-mb M``, default 1024): one private NDNd forwarder, ``ndnsci serve`` with an
M MiB random file, a catalog listing it served by ``ndnsci catalog serve`` (gateway mounted).
Interleaved rounds: ``ndnsci fetch`` of a fresh version, then ``curl`` of a fresh version
through the gateway (both from the producer, through the forwarder), then both again from the
forwarder's content store. Then, warm: time to first byte of whole-file GETs and of 64 KiB
ranges; 20 concurrent readers of random 1 MiB ranges (bytes checked); the gateway's peak RSS.

    .venv/bin/python bench/esgf.py [--files 1000000] [--size-mb 1024] [--rounds 3]
                                   [--only search|gateway] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from transfer import Bench, fetch_args  # noqa: E402

from catalog import Server, load, p95, queries, records  # noqa: E402
from ndnsci_catalog.database import make_engine, make_sessionmaker  # noqa: E402
from ndnsci_catalog.ingest import publish  # noqa: E402
from ndnsci_catalog.migrate import upgrade  # noqa: E402
from ndnsci_catalog.records import parse_record  # noqa: E402

ESGF_NAMES = {"frequency": "time_frequency", "table": "cmor_table"}
COUNTED = ["model", "experiment", "frequency", "variable", "realm", "institute", "table",
           "ensemble"]  # fmt: skip
KINDS = ["1facet", "2facets", "text", "landing"]


def ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95(values):.1f} ms"


# --- search ----------------------------------------------------------------------------------


def esgf_params(native: dict[str, Any]) -> dict[str, Any]:
    return {("query" if k == "q" else ESGF_NAMES.get(k, k)): v for k, v in native.items()}


def get(client: httpx.Client, url: str, params: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    response = client.get(url, params=params)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{url} {params}: {response.status_code} {response.text[:300]}")
    return elapsed, response.json()


def search(n: int, tmp: Path, keep: Path | None) -> None:
    rng = random.Random(n)
    recs = records(n, rng)
    db = (keep or tmp) / f"esgf-{n}.db"
    url = f"sqlite:///{db}"
    if db.exists():  # --keep: published by an earlier run, same records
        print(f"search n={n}: reusing {db}", flush=True)
    else:
        upgrade(url)
        rate, _ = load(url, recs, tmp)
        print(f"search n={n}: published at {rate:,.0f} records/s", flush=True)
    qs = queries(recs, random.Random(1))
    del recs
    server = Server(url)
    try:
        print(f"search n={n}: server up in {server.wait():.1f} s", flush=True)
        base = server.base.removesuffix("/api/v1")
        esgf = base + "/esg-search/search"
        with httpx.Client(timeout=120) as client:
            common = {"type": "File", "format": "application/solr+json", "distrib": "false"}
            for warm in qs["1facet"][:20]:
                get(client, esgf, {**common, **esgf_params(warm), "limit": 0, "facets": "*"})
            for kind in KINDS:
                times: dict[str, list[float]] = defaultdict(list)
                for native in qs[kind]:
                    asked = {**common, **esgf_params(native)}
                    counting = {**asked, "limit": 0, "facets": "*"}
                    times["counts"].append(get(client, esgf, counting)[0])
                    times["page"].append(get(client, esgf, {**asked, "limit": 10})[0])
                    times["native"].append(get(client, server.base + "/search", native)[0])
                both = [a + b for a, b in zip(times["counts"], times["page"], strict=True)]
                print(f"search n={n} {kind}: esg-search File counts (facets=*) "
                      f"{ms(times['counts'])}; page (limit=10) {ms(times['page'])}; "
                      f"both {ms(both)}; /api/v1/search {ms(times['native'])}",
                      flush=True)  # fmt: skip
            identical(client, esgf, server.base + "/search", qs, n)
            dataset = [
                get(client, esgf, {**common, **esgf_params(q), "type": "Dataset", "limit": 10,
                                   "facets": "*"})[0]
                for q in qs["1facet"][:50]
            ]  # fmt: skip
            print(f"search n={n} Dataset search (facets=*, limit=10): {ms(dataset)}", flush=True)
        print(f"search n={n}: server RSS {server.rss_mb():.0f} MB", flush=True)
    finally:
        server.stop()


def identical(client: httpx.Client, esgf: str, native: str, qs: dict[str, Any], n: int) -> None:
    """The facet counts of both APIs for the same filters, compared value by value."""
    same = total = 0
    for kind in ("1facet", "2facets", "text"):
        for query in qs[kind][:50]:
            _, mine = get(client, esgf, {"type": "File", "format": "application/solr+json",
                                         "limit": 0, "facets": ",".join(ESGF_NAMES.get(k, k)
                                                                       for k in COUNTED),
                                         **esgf_params(query)})  # fmt: skip
            _, theirs = get(client, native, {**query, "limit": 0, "facet_limit": 1000,
                                             "facets": ",".join(COUNTED)})  # fmt: skip
            fields = mine["facet_counts"]["facet_fields"]
            ok = mine["response"]["numFound"] == theirs["total"]
            for key in COUNTED:
                flat = fields[ESGF_NAMES.get(key, key)]
                got = dict(zip(flat[::2], flat[1::2], strict=True))
                want = theirs["facets"][key]
                if key == "version":
                    want = {k.removeprefix("v"): c for k, c in want.items()}
                ok &= got == want
            same += ok
            total += 1
    print(f"search n={n}: facet counts and totals identical to /api/v1: {same}/{total}",
          flush=True)  # fmt: skip


# --- gateway ---------------------------------------------------------------------------------


def catalog_listing(url: str, root: Path, prefix: str) -> None:
    upgrade(url)
    rows = []
    for path in sorted(root.iterdir()):
        digest = hashlib.sha256()
        with path.open("rb") as f:
            while chunk := f.read(16 << 20):
                digest.update(chunk)
        rows.append({"name": f"{prefix}/{path.name}", "scheme": "bench", "facets": {},
                     "size": path.stat().st_size, "sha256": digest.hexdigest()})  # fmt: skip
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        publish(session, [parse_record(r) for r in rows])
        session.commit()
    engine.dispose()


def ttfb(url: str, headers: dict[str, str], times: int) -> list[float]:
    out = []
    with httpx.Client(timeout=60) as client:
        for _ in range(times):
            started = time.perf_counter()
            with client.stream("GET", url, headers=headers) as response:
                next(response.iter_raw(1))
                out.append(time.perf_counter() - started)
    return out


def readers(url: str, path: Path, size: int, count: int = 20, each: int = 10) -> None:
    errors: list[str] = []
    moved = [0]
    lock = threading.Lock()

    def read(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(timeout=120) as client, path.open("rb") as local:
            for _ in range(each):
                first = rng.randrange(size - (1 << 20))
                last = first + (1 << 20) - 1
                got = client.get(url, headers={"Range": f"bytes={first}-{last}"})
                wanted = os.pread(local.fileno(), 1 << 20, first)
                if got.status_code != 206 or got.content != wanted:
                    with lock:
                        errors.append(f"{first}-{last}: {got.status_code}")
                with lock:
                    moved[0] += len(got.content)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(count)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    print(f"gateway {count} concurrent range readers ({count * each} x 1 MiB ranges): "
          f"{len(errors)} errors, {moved[0] / seconds / 1e6:.1f} MB/s together"
          + (f"; first: {errors[0]}" if errors else ""), flush=True)  # fmt: skip


def gateway(size_mb: int, rounds: int, tmp: Path) -> None:
    size = size_mb << 20
    bench = Bench(tmp, size, 1 << 20)
    prefix = "/bench/gw"
    try:
        bench.start_forwarder(size // 8000 + 1)
        bench.start_serve(prefix)
        bench.await_metadata(f"{prefix}/file.bin", want_hash=True, timeout=600)
        db = f"sqlite:///{tmp / 'gateway.db'}"
        catalog_listing(db, bench.root, prefix)
        server = Server(db)
        server.wait()
        url = server.base.removesuffix("/api/v1") + f"/data{prefix}/file.bin"
        out = bench.out / "file.bin"
        rates: dict[str, list[float]] = defaultdict(list)

        def record(label: str, args: list[str]) -> None:
            seconds, _ = bench.consume(args, out, size)
            rates[label].append(size / seconds / 1e6)
            print(f"  {label}: {size / seconds / 1e6:.1f} MB/s ({seconds:.2f} s)", flush=True)

        curl = ["curl", "-sSf", "-o", str(out), url]
        for r in range(1, rounds + 1):
            print(f"gateway round {r}", flush=True)
            bench.new_version("file.bin", prefix)
            record("ndnsci fetch <- ndnsci serve", fetch_args(f"{prefix}/file.bin"))
            record("ndnsci fetch <- forwarder cache", fetch_args(f"{prefix}/file.bin"))
            bench.new_version("file.bin", prefix)
            record("curl <- gateway <- ndnsci serve", curl)
            record("curl <- gateway <- forwarder cache", curl)
        medians = {label: statistics.median(v) for label, v in rates.items()}
        for label, value in medians.items():
            print(f"gateway {size_mb} MiB {label}: {value:.1f} MB/s (median of {rounds})")
        for where in ("ndnsci serve", "forwarder cache"):
            ratio = medians[f"curl <- gateway <- {where}"] / medians[f"ndnsci fetch <- {where}"]
            print(f"gateway/fetch throughput, from {where}: x{ratio:.2f}", flush=True)
        whole = ttfb(url, {}, 20)
        print(f"gateway time to first byte, warm, whole {size_mb} MiB file: {ms(whole)}")
        small = ttfb(url, {"Range": "bytes=123456789-123522324"}, 20)
        print(f"gateway time to first byte, warm, 64 KiB range: {ms(small)}", flush=True)
        readers(url, bench.root / "file.bin", size)
        print(f"gateway process peak RSS: {_hwm(server.process.pid) / 1e6:.0f} MB", flush=True)
        server.stop()
    finally:
        bench.cleanup()


def _hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1_000_000)
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["search", "gateway"])
    parser.add_argument("--tmp", help="where the temporary folder goes")
    parser.add_argument("--keep", type=Path, help="keep the search catalog here; reuse it")
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}", flush=True)
    if args.only in (None, "search"):
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            search(args.files, Path(tmp), args.keep)
    if args.only in (None, "gateway"):
        with tempfile.TemporaryDirectory(dir=args.tmp, prefix="ndnsci-gw-") as tmp:
            gateway(args.size_mb, args.rounds, Path(tmp))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
