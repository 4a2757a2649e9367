"""Load on a real catalog server: many clients searching while a publish runs.

``run_load`` starts ``ndnsci catalog serve`` as a child process on a free loopback port, runs
``clients`` searching clients for ``seconds`` in a second process (this file run as a script:
asyncio + httpx, so the load does not share the prober's interpreter), publishes records
through ``ndnsci publish --catalog`` (the real client) meanwhile, probes ``/health`` every
0.2 s from here, then stops the server with SIGTERM and times its exit.

Used by tests/catalog/test_load.py (asserts) and bench/catalog_load.py (prints figures).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ndnsci.base.processes import free_port

NDNSCI = [sys.executable, "-m", "ndnsci"]
QUERY_FACETS = ["model", "experiment", "variable", "frequency", "institute", "realm"]
#: a client's own time limit per request: an answer later than this counts as a hang
CLIENT_TIMEOUT = 20.0
HEALTH_EVERY = 0.2


# --- the searching clients (run in a child process: `python loadtest.py hammer ...`) ----------


async def _client(
    http: httpx.AsyncClient, queries: list[dict[str, Any]], until: float, rng: random.Random,
    out: dict[str, Any],
) -> None:  # fmt: skip
    while time.monotonic() < until:
        params = rng.choice(queries)
        started = time.monotonic()
        try:
            response = await http.get("/search", params=params)
        except httpx.HTTPError as exc:
            out["errors"].append(f"{type(exc).__name__}: {exc} ({params})")
            continue
        elapsed = time.monotonic() - started
        status = response.status_code
        out["statuses"][str(status)] += 1
        if status == 200 and b'"total"' in response.content:
            out["latencies"].append(elapsed)
        elif status == 503 and response.headers.get("retry-after"):
            out["shed_latencies"].append(elapsed)
            await asyncio.sleep(min(float(response.headers["retry-after"]), 2.0))
        else:
            out["errors"].append(f"{status} {response.text[:300]} ({params})")


async def _hammer(base: str, queries: list[dict[str, Any]], clients: int, seconds: float) -> Any:
    out: dict[str, Any] = {
        "statuses": Counter(), "errors": [], "latencies": [], "shed_latencies": [],
    }  # fmt: skip
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=CLIENT_TIMEOUT, limits=limits) as http:
        until = time.monotonic() + seconds
        await asyncio.gather(
            *(_client(http, queries, until, random.Random(i), out) for i in range(clients))
        )
    return out


def _hammer_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("queries")
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args(argv)
    queries = json.loads(Path(args.queries).read_text())
    out = asyncio.run(_hammer(args.base, queries, args.clients, args.seconds))
    json.dump(out, sys.stdout)


# --- the server --------------------------------------------------------------------------------


class Server:
    """``ndnsci catalog serve`` in a child process on a free loopback port."""

    def __init__(self, db: str, log: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [*NDNSCI, "catalog", "serve", "--db", db, "--no-migrate", "--port",
                 str(self.port)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
            )  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"
        self.base = self.url + "/api/v1"

    def wait(self, timeout: float = 120) -> None:
        # imported here: the hammer runs this file as a script, with neither on its path
        try:
            from support import wait_for  # under pytest: tests/ is on the path
        except ModuleNotFoundError:
            from tests.support import wait_for  # bench/ imports tests.catalog.loadtest

        def answering() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"the catalog exited:\n{self.log.read_text()[-3000:]}")
            return httpx.get(self.base + "/health", timeout=1).status_code == 200

        wait_for(answering, timeout, "the catalog to answer /health", ignoring=httpx.HTTPError)

    def terminate(self, timeout: float = 30) -> float:
        """SIGTERM; the seconds until the process exited (killed after ``timeout``)."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return time.monotonic() - started

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# --- the run -----------------------------------------------------------------------------------


def populate(url: str, records: list[dict[str, Any]]) -> None:
    """Publish ``records`` straight into the database (the bulk path of ``ndnsci publish``)."""
    from ndnsci_catalog import loader
    from ndnsci_catalog.database import make_engine, make_sessionmaker

    engine = make_engine(url)
    try:
        # lines end with their newline: the loader's worker processes split batches on it
        lines = (json.dumps(r) + "\n" for r in records)
        done = loader.load(make_sessionmaker(engine), lines, batch=10_000)
    finally:
        engine.dispose()
    if done.inserted + done.unchanged != len(records):
        raise RuntimeError(f"{len(records)} records given, {done} published")


def create_token(url: str) -> str:
    done = subprocess.run(
        [*NDNSCI, "catalog", "token", "create", f"load-{time.time_ns()}", "--db", url],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout.strip()


def queries(records: list[dict[str, Any]], rng: random.Random, n: int = 400) -> list[Any]:
    """What portal users ask: one or two facets, a word, the landing page, a name prefix."""
    out: list[dict[str, Any]] = [{}]
    for _ in range(n):
        a = rng.choice(records)
        k1, k2 = rng.sample(QUERY_FACETS, 2)
        out.append({k1: a["facets"][k1]})
        out.append({k1: a["facets"][k1], k2: a["facets"][k2]})
        out.append({"q": a["facets"][rng.choice(["model", "variable"])]})
        out.append({"prefix": a["name"].rsplit("/", 3)[0]})
    return out


@dataclass
class LoadResult:
    statuses: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    shed_latencies: list[float] = field(default_factory=list)
    #: (seconds into the run, latency or None when it failed, status or error text)
    health: list[tuple[float, float | None, str]] = field(default_factory=list)
    publish_code: int | None = None
    publish_seconds: float = 0.0
    publish_output: str = ""
    published_files: int = 0
    stop_seconds: float = 0.0
    server_log: str = ""
    #: the server's log lines that are not INFO (warnings, errors, tracebacks)
    server_problems: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(self.statuses.values()) + len(self.errors)

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")

    def shed_share(self) -> float:
        return self.statuses.get("503", 0) / max(1, sum(self.statuses.values()))

    def worst_health(self) -> float:
        return max((lat if lat is not None else float("inf")) for _, lat, _ in self.health)

    def summary(self) -> str:
        return (
            f"{self.requests} searches: {dict(self.statuses)}, {len(self.errors)} errors; "
            f"p50 {statistics.median(self.latencies or [0]) * 1000:.0f} ms, "
            f"p95 {self.percentile(0.95) * 1000:.0f} ms; /health worst "
            f"{self.worst_health() * 1000:.0f} ms over {len(self.health)} probes; publish rc "
            f"{self.publish_code} in {self.publish_seconds:.1f} s; SIGTERM -> exit in "
            f"{self.stop_seconds:.2f} s"
        )


def _probe_health(base: str, stop: threading.Event, started: float, out: LoadResult) -> None:
    with httpx.Client(timeout=5.0) as http:
        while not stop.is_set():
            at = time.monotonic()
            try:
                response = http.get(base + "/health")
                out.health.append((at - started, time.monotonic() - at, str(response.status_code)))
            except httpx.HTTPError as exc:
                out.health.append((at - started, None, f"{type(exc).__name__}: {exc}"))
            stop.wait(max(0.0, HEALTH_EVERY - (time.monotonic() - at)))


def run_load(
    db: str,
    records: list[dict[str, Any]],
    publish: list[dict[str, Any]],
    *,
    clients: int = 100,
    seconds: float = 30,
    publish_after: float = 3.0,
    workdir: Path | None = None,
    env: dict[str, str] | None = None,
) -> LoadResult:
    """The whole run on a migrated database ``db`` already holding ``records``."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        return _run(Path(tmp), db, records, publish, clients, seconds, publish_after, env)


def _run(
    tmp: Path, db: str, records: list[dict[str, Any]], publish: list[dict[str, Any]],
    clients: int, seconds: float, publish_after: float, env: dict[str, str] | None,
) -> LoadResult:  # fmt: skip
    result = LoadResult()
    token = create_token(db)
    (tmp / "queries.json").write_text(json.dumps(queries(records, random.Random(7))))
    (tmp / "publish.jsonl").write_text("".join(json.dumps(r) + "\n" for r in publish))
    server = Server(db, tmp / "server.log", env)
    stop = threading.Event()
    try:
        server.wait()
        started = time.monotonic()
        hammer = subprocess.Popen(
            [sys.executable, __file__, "hammer", server.base, str(tmp / "queries.json"),
             "--clients", str(clients), "--seconds", str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        prober = threading.Thread(target=_probe_health, args=(server.base, stop, started, result))
        prober.start()
        if publish:
            time.sleep(publish_after)
            _publish(result, tmp, server.url, token, seconds)
        out, err = hammer.communicate(timeout=seconds + CLIENT_TIMEOUT * 3 + 60)
        stop.set()
        prober.join()
        if hammer.returncode != 0:
            raise RuntimeError(f"the load generator failed:\n{err[-3000:]}")
        loaded = json.loads(out)
        result.statuses.update(loaded["statuses"])
        result.errors = loaded["errors"]
        result.latencies = loaded["latencies"]
        result.shed_latencies = loaded["shed_latencies"]
        result.published_files = _files(server.base, result)
        result.stop_seconds = server.terminate()
    finally:
        stop.set()
        server.kill()
        log = server.log.read_text(errors="replace")
        result.server_log = log[-5000:]
        result.server_problems = [
            line for line in log.splitlines() if not line.startswith("INFO:") and line.strip()
        ][:200]
    return result


def _publish(result: LoadResult, tmp: Path, url: str, token: str, seconds: float) -> None:
    """``ndnsci publish --catalog`` of publish.jsonl, timed, into ``result``."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [*NDNSCI, "publish", "--records", str(tmp / "publish.jsonl"), "--catalog", url,
             "--token", token],
            capture_output=True, text=True, timeout=seconds + 90, check=False,
        )  # fmt: skip
        result.publish_code = done.returncode
        result.publish_output = (done.stdout + done.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        result.publish_output = f"the publish did not finish within {seconds + 90:.0f} s"
    result.publish_seconds = time.monotonic() - started


def _files(base: str, result: LoadResult) -> int:
    """Files in the catalog after the run (-1, and an error, when it does not say)."""
    try:
        stats = httpx.get(base + "/stats", timeout=CLIENT_TIMEOUT)
    except httpx.HTTPError as exc:
        result.errors.append(f"/stats after the run: {type(exc).__name__}: {exc}")
        return -1
    if stats.status_code != 200:
        result.errors.append(f"/stats after the run: {stats.status_code} {stats.text[:300]}")
        return -1
    return int(stats.json()["files"])


if __name__ == "__main__" and sys.argv[1:2] == ["hammer"]:
    _hammer_main(sys.argv[2:])
