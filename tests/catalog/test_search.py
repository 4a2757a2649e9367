"""GET /search: filters, negation, free text, prefix, time overlap, paging, ESGF facet counts."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from .corpus import all_records, cmip5_records, expected

RECORDS = all_records()


@pytest.fixture
def published(publish: Any) -> list[dict[str, Any]]:
    assert publish(RECORDS)["inserted"] == len(RECORDS)
    return RECORDS


def names(response: Any) -> set[str]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["total"] == len(body["results"]), "test expects one page"
    return {r["name"] for r in body["results"]}


def test_no_filter_returns_everything_with_unfiltered_counts(client, published):
    body = client.get("/search", params={"limit": 1000}).json()
    assert body["total"] == len(published)
    models = Counter(r["facets"]["model"] for r in cmip5_records())
    assert body["facets"]["model"] == dict(sorted(models.items(), key=lambda i: (-i[1], i[0])))


@pytest.mark.parametrize(
    "filters",
    [
        {"model": "CCSM4"},
        {"model": ["CCSM4", "CanCM4"]},
        {"experiment": "historical", "variable": "tas"},
        {"model": ["CCSM4", "CESM1-CAM5"], "frequency": "mon"},
        {"source_id": "CESM2"},
        {"tier": "RAW-RECO"},
        {"model": "no-such-model"},
    ],
)
def test_or_within_and_across_facets(client, published, filters):
    response = client.get("/search", params={**filters, "limit": 1000})
    assert names(response) == expected(published, **filters)


def test_negation_excludes(client, published):
    response = client.get("/search", params={"experiment": "historical", "model!": "CCSM4"})
    wanted = expected(published, experiment="historical") - expected(published, model="CCSM4")
    assert names(response) == wanted


def test_facet_counts_leave_out_the_facets_own_filter(client, published):
    body = client.get("/search", params={"model": "CCSM4", "frequency": "mon"}).json()
    ccsm4 = [r for r in published if r["facets"].get("model") == "CCSM4"]
    monthly = [r for r in published if r["facets"].get("frequency") == "mon"]
    both = [r for r in ccsm4 if r in monthly]
    # frequency counts: only the model filter applies, so the other frequencies show up
    assert body["facets"]["frequency"] == _counts(ccsm4, "frequency")
    # model counts: only the frequency filter applies
    assert body["facets"]["model"] == _counts(monthly, "model")
    # an unfiltered facet: both filters apply
    assert body["facets"]["experiment"] == _counts(both, "experiment")
    assert body["total"] == len(both)


def _counts(records: list[dict[str, Any]], key: str) -> dict[str, int]:
    counter = Counter(r["facets"][key] for r in records if r["facets"].get(key))
    return dict(sorted(counter.items(), key=lambda i: (-i[1], i[0])))


def test_free_text_matches_words_and_phrases(client, published):
    assert names(client.get("/search", params={"q": "CESM1-CAM5"})) == expected(
        published, model="CESM1-CAM5"
    )
    historical_tas = client.get("/search", params={"q": "historical tas", "scheme": "cmip5"})
    assert names(historical_tas) == expected(published, experiment="historical", variable="tas")


def test_free_text_prefix_word(client, published):
    found = names(client.get("/search", params={"q": "CanC*", "limit": 1000}))
    assert found == expected(published, model="CanCM4")


def test_prefix_is_component_wise(client, published):
    some = cmip5_records()[0]["name"]
    model_dir = "/".join(some.split("/")[:5])  # /CMIP5/output/<institute>/<model>
    found = names(client.get("/search", params={"prefix": model_dir, "limit": 1000}))
    assert found == {r["name"] for r in published if r["name"].startswith(model_dir + "/")}
    assert names(client.get("/search", params={"prefix": model_dir[:-1]})) == set()


def test_time_overlap(client, published):
    found = names(client.get("/search", params={"start": "2090", "end": "2095", "limit": 1000}))
    wanted = set()
    for r in published:
        match = re.search(r"_(\d{4})\d*-(\d{4})\d*\.nc$", r["filename"])
        if match and match[1] <= "2095" and match[2] >= "2090":
            wanted.add(r["name"])
    assert found == wanted and found


def test_scheme_filter_and_sort_and_paging(client, published):
    body = client.get("/search", params={"scheme": "cmip6", "sort": "-name", "limit": 5}).json()
    cmip6 = sorted((r["name"] for r in published if r["scheme"] == "cmip6"), reverse=True)
    assert body["total"] == len(cmip6)
    assert [r["name"] for r in body["results"]] == cmip6[:5]
    page2 = client.get(
        "/search", params={"scheme": "cmip6", "sort": "-name", "limit": 5, "offset": 5}
    ).json()
    assert [r["name"] for r in page2["results"]] == cmip6[5:10]


def test_result_shape(client, published):
    body = client.get("/search", params={"model": "CCSM4", "limit": 1}).json()
    assert set(body) == {"total", "limit", "offset", "results", "facets"}
    (result,) = body["results"]
    assert set(result) == {
        "name", "filename", "original", "scheme", "size", "sha256", "facets", "time_start",
        "time_end", "site",
    }  # fmt: skip
    assert result["site"] is None  # a catalog without a site name (docs/federation.md)
    assert result["time_start"] and result["time_start"] <= result["time_end"]
    assert result["original"] == result["filename"]  # published without an input: not known


def test_only_requested_facets_are_counted(client, published):
    body = client.get("/search", params={"facets": "model,experiment", "limit": 0}).json()
    assert set(body["facets"]) == {"model", "experiment"}
    assert body["results"] == []
