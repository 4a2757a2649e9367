"""Bad query parameters: a clear 400/422, never a 500, and nothing is built from user strings."""

from __future__ import annotations

import re

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
    "value", ["' OR '1'='1", "%", "_", "\\", 'a"b', "😀", "x" * 2000, "CCSM4' --"]
)
def test_hostile_facet_values_are_just_values_nobody_published(client, published, value):
    response = client.get("/search", params={"model": value})
    assert response.status_code == 200, response.text
    assert response.json()["total"] == 0


def test_a_nul_in_a_facet_value_is_a_422(client, published):
    response = client.get("/search", params={"model": "CCSM4\x00"})
    assert response.status_code == 422 and "NUL" in response.json()["detail"]


def _words(q: str) -> str:
    """``q`` written with words only, as ndnsci_catalog.fulltext reads a query: each space-separated
    word is the phrase of its letter-and-digit runs (``MPI-ESM-LR``), ``*`` at its end a
    prefix."""
    plain = []
    for word in q.split():
        runs = re.findall(r"[^\W_]+", word)
        if runs:
            plain.append("-".join(runs) + ("*" if word.endswith("*") else ""))
    return " ".join(plain)


@pytest.mark.parametrize(
    "q", ["' OR 1=1", "NEAR(a b)", "a AND OR NOT", '"unbalanced', "a:*", "{model} OR zzz"]
)
def test_free_text_syntax_is_only_words(client, published, q):
    """Quotes, operators and parentheses are not syntax: a query finds what its words find."""
    model = cmip5_records()[0]["facets"]["model"]
    q = q.format(model=model)
    response = client.get("/search", params={"q": q})
    assert response.status_code == 200, response.text
    plain = client.get("/search", params={"q": _words(q)})
    assert response.json()["total"] == plain.json()["total"]
    if "OR zzz" in q:  # an OR would have found the model's files
        assert client.get("/search", params={"q": model}).json()["total"] > 0
        assert response.json()["total"] == 0


def test_free_text_without_a_word_is_a_422(client, published):
    response = client.get("/search", params={"q": "*"})
    assert response.status_code == 422 and "no letters or digits" in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/files/..%2F..%2Fetc%2Fpasswd", "invalid name component '..'"),
        ("/files/CMIP5/%2e%2e/x", "invalid name component '..'"),
        ("/files/", "needs a root and at least one more component"),
        ("/files/CMIP5", "needs a root and at least one more component"),
    ],
)
def test_hostile_file_names_are_a_400_saying_why(client, published, path, why):
    response = client.get(path)
    assert response.status_code == 400 and why in response.json()["detail"], response.text


def test_limit_zero_gives_only_counts(client, published):
    body = client.get("/search", params={"limit": 0}).json()
    assert body["results"] == [] and body["total"] == 10
