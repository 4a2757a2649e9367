"""``GET /metrics``: the catalog's counters in Prometheus' text format (prometheus-client).

- ``ndnsci_catalog_requests_total{method, route, status}``: requests answered, by route
  template (``/api/v1/files/{name:path}``, never the concrete path: a bounded set of series);
  a path no route matched is counted as ``route="unmatched"``;
- ``ndnsci_catalog_request_duration_seconds{method, route}``: a histogram of the time from the
  request's arrival to the end of its answer;
- ``ndnsci_catalog_publish_records_total{outcome}``: published records, ``inserted``,
  ``replaced`` or ``unchanged``;
- ``ndnsci_transfer_files{state}`` and ``ndnsci_transfer_bytes{state}``: the files of every
  transfer job by state, and the bytes they hold so far; ``ndnsci_transfer_done_files{engine}``
  and ``ndnsci_transfer_done_bytes{engine}``: finished files by the engine that moved them.
  Read from the database at each scrape (the jobs' state lives there, whichever process runs
  them), so every worker answers the same.

Each app has a registry of its own (tests make many apps in one process), kept in
``app.state.metrics``. With ``workers > 1`` each worker process counts for itself: a scrape
sees the worker that answered it (docs/site.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

METRICS_PATH = "/metrics"


class Metrics:
    """The registry of one app and its metrics."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "ndnsci_catalog_requests",
            "Requests answered, by route template and status",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "ndnsci_catalog_request_duration_seconds",
            "Time from a request's arrival to the end of its answer",
            ("method", "route"),
            registry=self.registry,
        )
        self.published = Counter(
            "ndnsci_catalog_publish_records",
            "Records published, by outcome",
            ("outcome",),
            registry=self.registry,
        )

    def count_publish(self, inserted: int, replaced: int, unchanged: int) -> None:
        for outcome, n in (("inserted", inserted), ("replaced", replaced),
                           ("unchanged", unchanged)):  # fmt: skip
            if n:
                self.published.labels(outcome).inc(n)

    def watch_transfers(self, sessions: Callable[[], Any]) -> None:
        """Count the transfer jobs' files at each scrape, in the database ``sessions`` opens."""
        self.registry.register(_Transfers(sessions))

    def exposition(self) -> tuple[bytes, str]:
        """The text to answer a scrape with (it may read the database: call it off the loop)."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Transfers(Collector):
    def __init__(self, sessions: Callable[[], Any]) -> None:
        self.sessions = sessions

    def describe(self) -> list[Metric]:
        return []  # read at each scrape: nothing to check when registered

    def collect(self) -> Iterator[Metric]:
        from sqlalchemy import func, select

        from ndnsci_catalog.models import TransferFile as F

        files = GaugeMetricFamily(
            "ndnsci_transfer_files", "Files of transfer jobs, by state", labels=["state"]
        )
        held = GaugeMetricFamily(
            "ndnsci_transfer_bytes",
            "Bytes of transfer jobs' files so far, by state",
            labels=["state"],
        )
        done = GaugeMetricFamily(
            "ndnsci_transfer_done_files", "Finished files, by engine", labels=["engine"]
        )
        done_bytes = GaugeMetricFamily(
            "ndnsci_transfer_done_bytes", "Bytes of finished files, by engine", labels=["engine"]
        )
        with self.sessions() as session:
            count, total = func.count(), func.coalesce(func.sum(F.bytes_done), 0)
            for state, n, size in session.execute(select(F.state, count, total).group_by(F.state)):
                files.add_metric([state], n)
                held.add_metric([state], size)
            by_engine = select(F.engine, count, total).where(F.state == "done").group_by(F.engine)
            for engine, n, size in session.execute(by_engine):
                done.add_metric([engine or "unknown"], n)
                done_bytes.add_metric([engine or "unknown"], size)
        yield from (files, held, done, done_bytes)


class MetricsMiddleware:
    """Counts every HTTP request by the template of the route that answered it."""

    def __init__(self, app: ASGIApp, metrics: Metrics, prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.metrics = metrics
        #: the prefixes routers are included under (FastAPI's route in the scope is the
        #: router's own, without them)
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        status = [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = _template(scope, self.prefixes)
            method = str(scope.get("method", ""))
            self.metrics.requests.labels(method, route, str(status[0])).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - began)


def _template(scope: Scope, prefixes: tuple[str, ...]) -> str:
    """The matched route's path template (FastAPI puts the route in the scope), under the
    prefix the request's path has; ``unmatched`` when no route matched."""
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return "unmatched"
    url = str(scope.get("path", ""))
    for prefix in prefixes:
        if url.startswith(prefix + "/") and not path.startswith(prefix + "/"):
            return prefix + path
    return path
