"""Catalog benchmark: bulk publish rate, index load, /search and /autocomplete latency at N files.

Records are realistic. By default (``--names realistic``) they come from bench/names.py: CMIP6,
CMIP5 and CMS datasets (variables x time chunks, GUID files) whose facet distributions are fitted
from tests/data/corpora, streamed, the same for a seed (issue 28; docs/catalog.md, "10M: the
generator"). ``--names corpus-rows`` gives the records of the bench before it: CMIP5 facets are
whole rows of the GLADE listing in tests/data/corpora/cmip5_paths.tsv with ensemble, version and
time range varied at random; 10% CMS LFNs from cms_lfns.tsv with varied file GUIDs. Each record
carries the ``input`` of ``ndnsci translate --json`` (a path or the LFN). The records are
written once per size to a JSON-lines file (constant memory: the queries draw from a reservoir
sample of ``SAMPLE`` records). They are published as
``ndnsci publish --records FILE`` publishes them: JSON lines read from a file, prepared by the
loader's worker processes, RECORDS_BATCH lines per transaction; records/s are wall-clock, and
per CPU-second of the publisher and its workers. Queries are what a portal user does: one or two
facet filters with values drawn from the published distribution, or one free-text word, always
with the facet counts; the landing page (no filter) and a name prefix are timed apart.
Autocomplete: a random name cut at a random depth.

The same records are then published over HTTP, as ``ndnsci publish --records FILE --catalog
URL`` publishes them (a real ``ndnsci catalog serve`` on a fresh database, the client in its own
process): records/s beside the ``--db`` figure of the same run (their ratio), and the peak
resident memory of the client, the server and the server's preparing process (VmHWM), summed.

The catalog is served by a real server process (``ndnsci catalog serve``, uvicorn) queried
over HTTP; its resident memory is read from /proc after the queries. Prints one figure per line
(``<backend> n=<N> <figure>: <value> <unit>``), then the growth of each figure between the
smallest and the largest size. After each ``--db`` publish, the database's bytes on disk per
record, by part: the files table, its indexes, the name tree, the free text, the facet tables
(``facet_values``, ``facet_keys`` and the ``packed`` column the facet index loads), the change
feed and the rest (SQLite: the ``dbstat`` table; PostgreSQL: ``pg_relation_size`` and
``pg_indexes_size``).

With ``--rounds N`` the two publishes (``--db``, then HTTP) are run N times in turn, each on
fresh databases, and the medians of their rates are printed with the median of the per-round
ratios: the host's speed moves from minute to minute, and a round compares the two paths in
the same minutes. The queries are measured once, on the last round's catalog.

    .venv/bin/python bench/catalog.py [--sizes 100000 1000000] [--backends sqlite postgresql]
        [--rounds 3] [--publish-only] [--names realistic|corpus-rows] [--seed N]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from bench import names as realistic_names  # noqa: E402
from ndnsci.site.publishing import PREPARE_PROCESSES, RECORDS_BATCH  # noqa: E402
from ndnsci_catalog import loader  # noqa: E402
from ndnsci_catalog.database import make_engine, make_sessionmaker  # noqa: E402
from ndnsci_catalog.facetindex import FacetIndex, engine_source  # noqa: E402
from ndnsci_catalog.migrate import upgrade  # noqa: E402

NDNSCI = Path(sys.executable).with_name("ndnsci")
#: runs a command and prints its peak resident memory (KiB): a parent with no other child
PEAK_OF_CHILD = (
    "import resource, subprocess, sys; code = subprocess.run(sys.argv[1:]).returncode; "
    "u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(u.ru_maxrss, u.ru_utime + u.ru_stime); sys.exit(code)"
)
#: clock ticks per second of /proc/PID/stat's CPU times
TICKS = os.sysconf("SC_CLK_TCK")

CORPORA = ROOT / "tests" / "data" / "corpora"
KEYS = ["product", "institute", "model", "experiment", "frequency", "realm", "table",
        "ensemble", "version", "variable"]  # fmt: skip
QUERY_FACETS = ["model", "experiment", "variable", "frequency", "institute", "realm"]
KINDS = ["1facet", "2facets", "text"]
QUERIES_PER_KIND = 200
#: as `ndnsci publish --records` with the default --jobs (one per CPU, at most 2)
PREPARE_WORKERS = min(os.cpu_count() or 1, PREPARE_PROCESSES)
#: records kept (a reservoir sample) to draw the queries from
SAMPLE = 20_000


def _rows(file: str) -> list[dict[str, str]]:
    with open(CORPORA / file, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def records(n: int, rng: random.Random) -> list[dict[str, Any]]:
    """The records of the bench before issue 28 (``--names corpus-rows``)."""
    cmip5 = [r for r in _rows("cmip5_paths.tsv") if r["gt_model"]]
    cms = [r["lfn"] for r in _rows("cms_lfns.tsv") if r["lfn"].count("/") == 8]
    out = []
    for i in range(n):
        if i % 10 == 9:
            lfn = rng.choice(cms).rsplit("/", 1)[0] + f"/{rng.getrandbits(64):016X}-{i}.root"
            parts = lfn.split("/")
            facets = dict(zip(["area", "era", "primary_dataset", "tier", "processing", "counter",
                               "filename"], parts[2:], strict=True))  # fmt: skip
            out.append({"input": lfn, "name": "/CMS" + lfn, "scheme": "cms", "facets": facets})
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
        # as `ndnsci translate --json` gives them: the input path is kept as the original name
        out.append({"input": "/glade/collections/cmip/cmip5" + name[6:], "name": name,
                    "scheme": "cmip5", "filename": filename,
                    "facets": {"activity": "CMIP5", **facets, "geo": None},
                    "size": rng.randint(10**6, 10**10)})  # fmt: skip
    return out


def _cpu() -> float:
    """CPU seconds of this process and of its children that ended (the loader's worker)."""
    me, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def generate(kind: str, n: int, seed: int) -> Iterator[dict[str, Any]]:
    """The records of ``--names``: bench/names.py's (with a file size each) or the old ones."""
    if kind == "corpus-rows":
        yield from records(n, random.Random(seed))
        return
    rng = random.Random(seed + 1)
    for record in realistic_names.records(n, seed):
        record["size"] = rng.randint(10**6, 10**10)
        yield record


def write_lines(recs: Iterable[dict[str, Any]], path: Path, seed: int) -> list[dict[str, Any]]:
    """Write the records as JSON lines; return a uniform sample of SAMPLE of them."""
    rng = random.Random(seed)
    sample: list[dict[str, Any]] = []
    with path.open("w") as f:
        for i, r in enumerate(recs):
            f.write(json.dumps(r) + "\n")
            if i < SAMPLE:
                sample.append(r)
            elif (j := rng.randrange(i + 1)) < SAMPLE:
                sample[j] = r
    return sample


def load(url: str, lines: Path, n: int) -> tuple[float, float]:
    """Publish ``lines`` as ``ndnsci publish --records FILE`` does (JSON lines read from a file,
    prepared in a second process, RECORDS_BATCH per transaction): records/s (wall, CPU)."""
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    started, cpu = time.perf_counter(), _cpu()
    with lines.open(encoding="utf-8") as f:
        loader.load(sessions, f, batch=RECORDS_BATCH, workers=PREPARE_WORKERS)
    elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
    with engine.connect() as conn:
        conn.exec_driver_sql("ANALYZE")
        conn.commit()
    engine.dispose()
    return n / elapsed, n / cpu


#: the parts of a catalog on disk, by table (SQLite's FTS5 shadow tables are files_fts_*)
PARTS = {"files": "files table", "tree_nodes": "name tree", "files_fts": "free text",
         "facet_values": "facet tables", "facet_keys": "facet tables",
         "changes": "change feed"}  # fmt: skip


def _part(table: str) -> str:
    return PARTS.get(table, "free text" if table.startswith("files_fts") else "other")


def disk_bytes(url: str) -> dict[str, float]:
    """Bytes on disk by part of the catalog (PARTS; the files table's indexes apart, and the
    ``packed`` column the facet index loads counted in the facet tables, out of the files
    table)."""
    engine = make_engine(url)
    out: dict[str, float] = {}
    with engine.connect() as conn:
        if url.startswith("sqlite"):
            rows = conn.exec_driver_sql(
                "SELECT s.name, m.type, m.tbl_name, sum(s.pgsize) FROM dbstat s "
                "LEFT JOIN sqlite_schema m ON m.name = s.name GROUP BY s.name"
            ).fetchall()
            for name, kind, owner, size in rows:
                table = owner or name
                part = "files indexes" if kind == "index" and table == "files" else _part(table)
                out[part] = out.get(part, 0) + size
        else:
            rows = conn.exec_driver_sql(
                "SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
            ).fetchall()
            for table, size, indexes in rows:
                part = _part(table)
                out[part] = out.get(part, 0) + size
                index_part = "files indexes" if table == "files" else part
                out[index_part] = out.get(index_part, 0) + indexes
        packed = conn.exec_driver_sql("SELECT coalesce(sum(length(packed)), 0) FROM files")
        packed_bytes = float(packed.scalar() or 0)
    engine.dispose()
    out["files table"] = out.get("files table", 0) - packed_bytes
    out["facet tables"] = out.get("facet tables", 0) + packed_bytes
    return out


def http_publish(url: str, lines: Path, n: int) -> dict[str, float]:
    """``ndnsci publish --records FILE --catalog URL`` into a fresh database behind a real
    server: records/s, and the peak resident memory (MB) of the client, the server and its
    preparing processes."""
    upgrade(url)
    token = subprocess.run(
        [str(NDNSCI), "catalog", "token", "create", "bench", "--db", url],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    server = Server(url)
    try:
        server.wait()
        server_cpu = _cpu_of(server.process.pid)  # the index load and start-up left out
        started = time.perf_counter()
        client = subprocess.run(
            [sys.executable, "-c", PEAK_OF_CHILD, str(NDNSCI), "publish", "--records",
             str(lines), "--catalog", server.root, "--token", token],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        elapsed = time.perf_counter() - started
        if client.returncode != 0:
            raise RuntimeError(f"the HTTP publish failed: {client.stderr}")
        peak_kib, client_cpu = client.stdout.split()
        client_mb = int(peak_kib) / 1024
        server_mb = server.peak_mb()
        workers = server.children()
        workers_mb = sum(_peak_mb(pid) for pid in workers)
        server_cpu = _cpu_of(server.process.pid) - server_cpu
        workers_cpu = sum(_cpu_of(pid) for pid in workers)
    finally:
        server.stop()
    return {
        "records/s": n / elapsed,
        "client MB": client_mb,
        "server MB": server_mb,
        "workers MB": workers_mb,
        # CPU µs per record of each process (user + system)
        "client us": float(client_cpu) * 1e6 / n,
        "server us": server_cpu * 1e6 / n,
        "workers us": workers_cpu * 1e6 / n,
    }


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a live process has used, from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _peak_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def index_load_seconds(url: str) -> float:
    engine = make_engine(url)
    index = FacetIndex(engine_source(engine))
    started = time.perf_counter()
    index.sync()
    elapsed = time.perf_counter() - started
    engine.dispose()
    return elapsed


def queries(recs: list[dict[str, Any]], rng: random.Random) -> dict[str, list[Any]]:
    cmip5 = [r for r in recs if r["scheme"] == "cmip5"]
    out: dict[str, list[Any]] = {kind: [] for kind in KINDS}
    for _ in range(QUERIES_PER_KIND):
        a, b = rng.choice(cmip5), rng.choice(cmip5)  # values weighted by their frequency
        k1, k2 = rng.sample(QUERY_FACETS, 2)
        out["1facet"].append({k1: a["facets"][k1]})
        out["2facets"].append({k1: a["facets"][k1], k2: a["facets"][k2]})
        out["text"].append({"q": b["facets"][rng.choice(["model", "variable"])]})
    out["landing"] = [{} for _ in range(QUERIES_PER_KIND // 4)]
    out["prefix"] = [{"prefix": p.rsplit("/", 1)[0]} for p in prefixes(recs, rng, 50)]
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


def timed(client: httpx.Client, path: str, params: list[Any]) -> list[float]:
    latencies = []
    for p in params:
        started = time.perf_counter()
        response = client.get(path, params=p)
        latencies.append(time.perf_counter() - started)
        assert response.status_code == 200, response.text
    return latencies


class Server:
    """``ndnsci catalog serve`` in a child process on a free loopback port."""

    def __init__(self, url: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ndnsci", "catalog", "serve", "--db", url, "--no-migrate",
             "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
        )  # fmt: skip
        self.root = f"http://127.0.0.1:{self.port}"
        self.base = self.root + "/api/v1"

    def wait(self) -> float:
        """Seconds until the server answers (it loads the facet index first)."""
        started = time.perf_counter()
        while True:
            try:
                if httpx.get(self.base + "/health", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            if self.process.poll() is not None:
                raise RuntimeError("the catalog server exited")
            time.sleep(0.05)

    def wait_index(self) -> float:
        """Seconds until a search is answered: the server answers /health while it loads the
        facet index, and searches with 503s until it is loaded."""
        started = time.perf_counter()
        while True:
            response = httpx.get(self.base + "/search", params={"limit": 0}, timeout=120)
            if response.status_code != 503:
                response.raise_for_status()
                return time.perf_counter() - started
            time.sleep(0.1)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    def peak_mb(self) -> float:
        return _peak_mb(self.process.pid)

    def children(self) -> list[int]:
        """The server's child processes (its publish preparing process)."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        return [int(pid) for task in tasks.iterdir()
                for pid in (task / "children").read_text().split()]  # fmt: skip

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def measure(url: str, recs: list[dict[str, Any]], rng: random.Random) -> dict[str, float]:
    figures: dict[str, float] = {}
    server = Server(url)
    try:
        figures["server start (first /health) s"] = server.wait()
        figures["server start (index loaded) s"] = (
            figures["server start (first /health) s"] + server.wait_index()
        )
        with httpx.Client(base_url=server.base, timeout=60) as client:
            qs = queries(recs, rng)
            timed(client, "/search", qs["1facet"][:20])  # warm the caches
            for kind, params in qs.items():
                latencies = timed(client, "/search", params)
                figures[f"search {kind} p50 ms"] = statistics.median(latencies) * 1000
                figures[f"search {kind} p95 ms"] = p95(latencies)
            auto = timed(client, "/autocomplete", [{"prefix": p} for p in prefixes(recs, rng, 300)])
            figures["autocomplete p95 ms"] = p95(auto)
        figures["server RSS MB"] = server.rss_mb()
    finally:
        server.stop()
    return figures


def database(backend: str, n: int, tmp: Path, pg: Any, suffix: str = "") -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp / f'bench{n}{suffix}.db'}"
    return str(pg.create_database(f"bench{n}{suffix}"))


def run(
    backend: str,
    n: int,
    lines: Path,
    recs: list[dict[str, Any]],
    url: str,
    http_url: str,
    publish_only: bool = False,
) -> dict[str, float]:
    """``recs``: the sample of the published records the queries are drawn from."""
    upgrade(url)
    wall, cpu = load(url, lines, n)
    figures = {"publish records/s": wall, "publish records/CPU-s": cpu}
    print(f"{backend} n={n} publish: {wall:,.0f} records/s ({cpu:,.0f}/CPU-s, "
          f"{1e6 / cpu:.1f} CPU µs per record)", flush=True)  # fmt: skip
    print(f"load average: {os.getloadavg()[0]:.1f}", flush=True)
    disk = disk_bytes(url)
    for part, size in sorted(disk.items(), key=lambda kv: -kv[1]):
        figures[f"disk {part} B/record"] = size / n
        print(f"{backend} n={n} disk, {part}: {size / n:,.1f} bytes per record", flush=True)
    total = sum(disk.values())
    figures["disk total B/record"] = total / n
    print(f"{backend} n={n} disk, total: {total / n:,.1f} bytes per record "
          f"({total / 2**20:,.1f} MiB)", flush=True)  # fmt: skip
    http = http_publish(http_url, lines, n)
    figures["HTTP publish records/s"] = http["records/s"]
    memory = http["client MB"] + http["server MB"] + http["workers MB"]
    figures["HTTP publish memory MB"] = memory
    print(f"{backend} n={n} publish over HTTP: {http['records/s']:,.0f} records/s "
          f"(x{http['records/s'] / wall:.2f} of --db)", flush=True)  # fmt: skip
    print(f"{backend} n={n} publish over HTTP, peak memory: {memory:,.0f} MB (client "
          f"{http['client MB']:,.0f} + server {http['server MB']:,.0f} + preparing "
          f"{http['workers MB']:,.0f})", flush=True)  # fmt: skip
    for part in ("client", "server", "workers"):
        figures[f"HTTP publish {part} CPU us"] = http[f"{part} us"]
    total = http["client us"] + http["server us"] + http["workers us"]
    print(f"{backend} n={n} publish over HTTP, CPU per record: client {http['client us']:.1f} "
          f"+ server {http['server us']:.1f} + preparing {http['workers us']:.1f} = "
          f"{total:.1f} µs", flush=True)  # fmt: skip
    print(f"load average: {os.getloadavg()[0]:.1f}", flush=True)
    if publish_only:
        return figures
    figures["index load s"] = index_load_seconds(url)
    print(f"{backend} n={n} index load: {figures['index load s']:.2f} s", flush=True)
    for label, value in measure(url, recs, random.Random(1)).items():
        figures[label] = value
        print(f"{backend} n={n} {label[: label.rindex(' ')]}: {value:.1f} "
              f"{label[label.rindex(' ') + 1 :]}", flush=True)  # fmt: skip
    return figures


def drop(*urls: str) -> None:
    """Remove a round's SQLite files (its databases are not queried): 1.5 GB each at 1M."""
    for url in urls:
        if url.startswith("sqlite:///"):
            for suffix in ("", "-wal", "-shm"):
                Path(url.removeprefix("sqlite:///") + suffix).unlink(missing_ok=True)


def medians(backend: str, n: int, rounds: list[dict[str, float]]) -> None:
    db = [r["publish records/s"] for r in rounds]
    http = [r["HTTP publish records/s"] for r in rounds]
    ratios = [h / d for h, d in zip(http, db, strict=True)]
    print(f"{backend} n={n} publish, median of {len(rounds)} rounds: --db "
          f"{statistics.median(db):,.0f} records/s, HTTP {statistics.median(http):,.0f} "
          f"records/s (HTTP rounds: {', '.join(f'{h:,.0f}' for h in http)}; median ratio "
          f"x{statistics.median(ratios):.2f} of --db)", flush=True)  # fmt: skip


def growth(results: dict[tuple[str, int], dict[str, float]]) -> None:
    """Each figure at the largest size over the same figure at the smallest."""
    for backend in sorted({b for b, _ in results}):
        sizes = sorted(n for b, n in results if b == backend)
        if len(sizes) < 2:
            continue
        small, large = results[(backend, sizes[0])], results[(backend, sizes[-1])]
        for label in small:
            ratio = large[label] / small[label] if small[label] else float("nan")
            print(f"{backend} growth {sizes[0]}->{sizes[-1]} {label}: x{ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--tmp", help="directory for the SQLite files (default: a temporary one)")
    parser.add_argument(
        "--publish-only", action="store_true", help="the publish figures only (no queries)"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="publish rounds (--db, then HTTP) per size"
    )
    parser.add_argument(
        "--names", choices=["realistic", "corpus-rows"], default="realistic",
        help="bench/names.py's generator (default) or the bench's records before issue 28",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, help="the records' seed (default: the size)")
    args = parser.parse_args()
    pg = None
    if "postgresql" in args.backends:
        from tests.catalog.pgserver import PostgresServer

        pg = PostgresServer()
        pg.start()
    results: dict[tuple[str, int], dict[str, float]] = {}
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}, names: "
          f"{args.names}", flush=True)  # fmt: skip
    try:
        with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
            for n in args.sizes:
                seed = n if args.seed is None else args.seed
                lines = Path(tmp) / f"records{n}.jsonl"
                started = time.perf_counter()
                recs = write_lines(generate(args.names, n, seed), lines, seed)
                print(f"records n={n}: generated and written in "
                      f"{time.perf_counter() - started:.1f} s", flush=True)  # fmt: skip
                for backend in args.backends:
                    rounds = []
                    for r in range(args.rounds):
                        last = r == args.rounds - 1
                        url = database(backend, n, Path(tmp), pg, f"r{r}")
                        http_url = database(backend, n, Path(tmp), pg, f"r{r}http")
                        only = args.publish_only or not last
                        rounds.append(run(backend, n, lines, recs, url, http_url, only))
                        if not last:
                            drop(url, http_url)
                    results[(backend, n)] = rounds[-1]
                    if args.rounds > 1:
                        medians(backend, n, rounds)
                lines.unlink()
                del recs
        growth(results)
        print(f"load average at the end: {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    main()
