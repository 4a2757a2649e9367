"""Bad query parameters: a clear 400/422, never a 500, and nothing is built from user strings."""

from __future__ import annotations

import pytest

from .corpus import cmip5_records


@pytest.fixture
def published(publish):
    publish(list(cmip5_records()[:10]))


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "1001"}, {"limit": "-1"}, {"limit": "ten"}, {"limit": str(10**30)},
        {"offset": "-5"}, {"offset": str(2**70)}, {"sort": "name; DROP TABLE files"},
        {"sort": "password"}, {"start": "yesterday"}, {"end": "20x5"}, {"q": "!!! ???"},
        {"q": "x" * 1001}, {"prefix": "CMIP5/no-slash"}, {"prefix": "/CMIP5/../etc"},
        {"prefix": "/CMIP5/a%00b"}, {"facet_limit": "5000"},
        {"model": [f"m{i}" for i in range(101)]},
    ],
)  # fmt: skip
def test_invalid_parameters_are_422_with_a_message(client, published, params):
    response = client.get("/search", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["detail"]


@pytest.mark.parametrize("key", ["modle", "model')--", "limt", "facets!", "x" * 300])
def test_unknown_facet_is_400_listing_the_valid_ones(client, published, key):
    response = client.get("/search", params={key: "HadCM3"})
    assert response.status_code == 400
    body = response.json()
    assert "model" in body["valid_facets"] and "experiment" in body["valid_facets"]
    assert "valid facets" in body["detail"]


def test_unknown_facet_to_count_is_400(client, published):
    response = client.get("/search", params={"facets": "model,nope"})
    assert response.status_code == 400 and "nope" in response.json()["detail"]


@pytest.mark.parametrize(
    "value",
    ["' OR '1'='1", "%", "_", "\\", 'a"b', "😀", "x" * 2000, "CCSM4' --", "\x00"],
)
def test_hostile_facet_values_are_just_values(client, published, value):
    response = client.get("/search", params={"model": value})
    assert response.status_code in (200, 422), response.text
    if response.status_code == 200:
        assert response.json()["total"] == 0


@pytest.mark.parametrize("q", ["' OR 1=1", "NEAR(a b)", "a AND OR NOT", '"unbalanced', "*", "a:*"])
def test_free_text_syntax_cannot_be_injected(client, published, q):
    response = client.get("/search", params={"q": q})
    assert response.status_code in (200, 422), response.text


@pytest.mark.parametrize(
    "path",
    ["/files/..%2F..%2Fetc%2Fpasswd", "/files/CMIP5/%2e%2e/x", "/files/", "/files/CMIP5"],
)
def test_hostile_file_names_are_rejected_or_not_found(client, published, path):
    response = client.get(path)
    assert response.status_code in (400, 404, 422), response.text


def test_limit_zero_gives_only_counts(client, published):
    body = client.get("/search", params={"limit": 0}).json()
    assert body["results"] == [] and body["total"] == 10
