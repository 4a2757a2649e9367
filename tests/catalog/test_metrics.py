"""GET /metrics: Prometheus' text format, parsed by prometheus-client's own parser; the
counters move with the requests and the publishes."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from .conftest import Client
from .corpus import cmip5_records


def scrape(client: Client) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample of /metrics: name -> sorted labels -> value."""
    response = client.get("http://catalog/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            labels = tuple(sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[labels] = sample.value
    return samples


def requests(samples: Any, route: str, status: str = "200", method: str = "GET") -> float:
    key = (("method", method), ("route", route), ("status", status))
    return float(samples.get("ndnsci_catalog_requests_total", {}).get(key, 0.0))


def test_requests_are_counted_by_route_template(client: Client) -> None:
    before = scrape(client)
    for name in ("a/b", "c/d", "e/f"):
        assert client.get(f"/files/{name}").status_code == 404
    assert client.get("/health").status_code == 200
    assert client.get("/no-such-route").status_code == 404
    after = scrape(client)
    template = "/api/v1/files/{name:path}"
    assert requests(after, template, "404") - requests(before, template, "404") == 3
    assert requests(after, "/api/v1/health") - requests(before, "/api/v1/health") == 1
    assert requests(after, "unmatched", "404") - requests(before, "unmatched", "404") == 1
    # no series carries a concrete path
    assert not any("a/b" in str(k) for k in after["ndnsci_catalog_requests_total"])
    counts = after["ndnsci_catalog_request_duration_seconds_count"]
    assert counts[(("method", "GET"), ("route", template))] == 3
    buckets = after["ndnsci_catalog_request_duration_seconds_bucket"]
    assert buckets[(("le", "+Inf"), ("method", "GET"), ("route", template))] == 3


def test_published_records_are_counted(client: Client, publish: Any) -> None:
    records = cmip5_records()[:5]
    publish(records)
    publish(records)  # the same again: unchanged
    after = scrape(client)
    published = after["ndnsci_catalog_publish_records_total"]
    assert published[(("outcome", "inserted"),)] == 5
    assert published[(("outcome", "unchanged"),)] == 5
    assert requests(after, "/api/v1/publish", method="POST") == 2


def test_transfer_files_are_counted_by_state_and_engine(
    client: Client, publish: Any, token: str, session: Any
) -> None:
    from ndnsci_catalog import transfers

    from .conftest import Borrowed

    records = cmip5_records()[:3]
    publish(records)
    client.app.state.sessionmaker = lambda: Borrowed(session)
    body = {"names": [r["name"] for r in records], "destination": "d"}
    answer = client.post("/transfers", json=body, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 201, answer.text
    claimed = transfers.claim(session, "a")
    assert claimed is not None
    transfers.finish(session, claimed.id, "a", ok=True, size=1234, engine="ndn-dpdk")
    samples = scrape(client)
    files = samples["ndnsci_transfer_files"]
    assert files[(("state", "pending"),)] == 2 and files[(("state", "done"),)] == 1
    assert samples["ndnsci_transfer_bytes"][(("state", "done"),)] == 1234
    assert samples["ndnsci_transfer_done_files"] == {(("engine", "ndn-dpdk"),): 1}
    assert samples["ndnsci_transfer_done_bytes"] == {(("engine", "ndn-dpdk"),): 1234}
