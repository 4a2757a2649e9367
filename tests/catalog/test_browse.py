"""Autocomplete, tree, file records, manifests, intake-esm export, health and stats."""

from __future__ import annotations

import csv
import io
import json

import pytest

from .corpus import all_records, cmip5_records

RECORDS = all_records()


@pytest.fixture
def published(publish):
    publish(RECORDS)
    return RECORDS


def test_autocomplete_lists_next_components_with_counts(client, published):
    body = client.get("/autocomplete", params={"prefix": "/"}).json()
    roots = {c["component"]: c["count"] for c in body["completions"]}
    assert roots == {"CMIP5": 60, "CMIP6": 20, "CMS": 10}
    first = cmip5_records()[0]
    institute_dir = "/".join(first["name"].split("/")[:4])  # /CMIP5/<product>/<institute>
    model = first["facets"]["model"]
    models = client.get("/autocomplete", params={"prefix": f"{institute_dir}/{model[:3]}"}).json()
    under = [r for r in cmip5_records() if r["name"].startswith(f"{institute_dir}/{model[:3]}")]
    assert [c["component"] for c in models["completions"]] == sorted(
        {r["facets"]["model"] for r in under}
    )
    in_model = sum(1 for r in under if r["facets"]["model"] == model)
    assert {
        "component": model, "name": f"{institute_dir}/{model}", "count": in_model, "leaf": False,
    } in models["completions"]  # fmt: skip


def test_autocomplete_reaches_files_as_leaves(client, published):
    name = cmip5_records()[0]["name"]
    parent, _, filename = name.rpartition("/")
    body = client.get("/autocomplete", params={"prefix": parent + "/"}).json()
    assert {"component": filename, "name": name, "count": 1, "leaf": True} in body["completions"]


def test_tree_pages_through_children(client, published):
    top = client.get("/tree", params={"path": "/CMIP5/output"}).json()
    under = [r for r in cmip5_records() if r["facets"]["product"] == "output"]
    assert top["count"] == len(under)
    institutes = sorted({r["facets"]["institute"] for r in under})
    assert [c["component"] for c in top["children"]] == institutes
    page = client.get("/tree", params={"path": "/CMIP5/output", "limit": 2, "offset": 1}).json()
    assert [c["component"] for c in page["children"]] == institutes[1:3]
    assert client.get("/tree", params={"path": "/nothing/here"}).status_code == 404


def test_file_record_has_metadata_and_corrections(client, publish):
    record = {
        **cmip5_records()[0],
        "corrections": [{"rule": "clim-suffix", "message": "'_clim' -> '-clim'"}],
        "metadata": {"time": {"start": "2006-01-16T12:00:00", "end": "2035-12-16T12:00:00"},
                     "global_attributes": {"title": "CanCM4 model output"}},
        "size": 1234, "sha256": "a" * 64,
    }  # fmt: skip
    publish([record])
    body = client.get("/files" + record["name"]).json()
    assert body["corrections"] == record["corrections"]
    assert body["metadata"]["global_attributes"]["title"] == "CanCM4 model output"
    assert (body["time_start"], body["time_end"]) == ("2006-01-16T12:00:00", "2035-12-16T12:00:00")
    assert body["size"] == 1234 and body["history"] == []
    # selected attributes are searchable
    found = client.get("/search", params={"q": "model output"}).json()
    assert [r["name"] for r in found["results"]] == [record["name"]]


def test_manifest_by_names_streams_json_lines(client, published):
    wanted = [r["name"] for r in published[:3]] + ["/CMIP5/not/there.nc", "/CMIP5/../x"]
    response = client.post("/manifests", json={"names": wanted})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [line["name"] for line in lines[:3]] == wanted[:3]
    assert lines[0]["path"] == wanted[0].lstrip("/")
    assert lines[3] == {"name": "/CMIP5/not/there.nc", "error": "not found"}
    assert lines[4]["error"] == "invalid NDN name"


def test_manifest_by_search(client, published):
    response = client.post("/manifests", json={"search": "model=CCSM4&experiment!=historical"})
    names = [json.loads(line)["name"] for line in response.text.splitlines()]
    assert names == sorted(
        r["name"]
        for r in published
        if r["facets"].get("model") == "CCSM4" and r["facets"]["experiment"] != "historical"
    )
    assert client.post("/manifests", json={"search": "bogus=1"}).status_code == 400
    assert client.post("/manifests", json={}).status_code == 422
    assert client.post("/manifests", json={"names": [], "search": "a=b"}).status_code == 422


def test_intake_esm_export(client, published):
    spec = client.get("/export/intake-esm", params={"scheme": "cmip5"}).json()
    assert spec["esmcat_version"] == "0.1.0"
    assert spec["assets"]["column_name"] == "name"
    assert spec["aggregation_control"]["variable_column_name"] == "variable"
    assert spec["catalog_file"].endswith("/api/v1/export/intake-esm/cmip5.csv")
    assert (
        client.get("/export/intake-esm/cmip5.csv").text
        == client.get("/export/intake-esm.csv", params={"scheme": "cmip5"}).text
    )
    response = client.get("/export/intake-esm.csv", params={"scheme": "cmip5"})
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == 60
    assert {c["column_name"] for c in spec["attributes"]} == set(rows[0])
    assert rows[0]["model"] and rows[0]["name"].startswith("/CMIP5/")
    assert rows[0]["url"] == f"http://catalog/data{rows[0]['name']}#mode=bytes"
    over_http = client.get("/export/intake-esm", params={"scheme": "cmip5", "assets": "url"})
    assert over_http.json()["assets"] == {"column_name": "url", "format": "opendap"}


def test_export_aggregation_comes_from_the_scheme_translator(client, published, monkeypatch):
    """No scheme is hard-coded in the service: each translator (entry points) says how its
    files group into datasets, and one without that says nothing is aggregated."""
    from ndnsci_translators import Aggregation, get_translator

    cmip6 = client.get("/export/intake-esm", params={"scheme": "cmip6"}).json()
    assert cmip6["aggregation_control"]["groupby_attrs"] == list(
        get_translator("cmip6").aggregation.groupby
    )
    assert (
        "aggregation_control"
        not in client.get("/export/intake-esm", params={"scheme": "cms"}).json()
    )
    monkeypatch.setattr(type(get_translator("cms")), "aggregation", Aggregation("tier", ("era",)))
    cms = client.get("/export/intake-esm", params={"scheme": "cms"}).json()
    assert cms["aggregation_control"]["variable_column_name"] == "tier"
    assert cms["aggregation_control"]["groupby_attrs"] == ["era"]


def test_health_and_stats(client, published):
    assert client.get("/health").json()["status"] == "ok"
    stats = client.get("/stats").json()
    assert stats["files"] == len(published)
    assert stats["roots"] == {"/CMIP5": 60, "/CMIP6": 20, "/CMS": 10}
    assert "model" in stats["facets"]


def test_openapi_has_stable_operation_ids(client):
    spec = client.request("GET", "http://catalog/openapi.json").json()
    ids = {op["operationId"] for path in spec["paths"].values() for op in path.values()}
    assert ids == {
        "search", "autocomplete", "browse_tree", "get_file", "retract_file", "create_manifest",
        "publish_records", "list_changes", "export_intake_esm", "export_intake_esm_csv",
        "health", "limits", "stats", "esgf_search", "esgf_wget", "export_intake_esm_scheme_csv",
        "list_sites", "get_change_batch", "list_conflicts", "submit_transfer", "list_transfers",
        "get_transfer", "list_transfer_files", "cancel_transfer", "retry_transfer",
        "transfer_events",
    }  # fmt: skip
