"""GET /esg-search/search and /esg-search/wget: ESGF's parameters and answers over the catalog.

Counts are checked against /api/v1/search for the same filters (the ESGF API must not be a
second search), and against records counted by hand; both backends.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import pytest

from .corpus import all_records, cmip5_records, cmip6_records, cms_records

SEARCH = "http://catalog/esg-search/search"
WGET = "http://catalog/esg-search/wget"
JSON = "application/solr+json"
NODE = "catalog"


def _with_bytes(record: dict[str, Any]) -> dict[str, Any]:
    """A corpus record as a published file: a size and a SHA-256 of its own."""
    digest = hashlib.sha256(record["name"].encode()).hexdigest()
    return {**record, "size": len(record["name"]) * 1000, "sha256": digest}


RECORDS = [_with_bytes(r) for r in all_records()]


@pytest.fixture
def published(publish: Any) -> list[dict[str, Any]]:
    assert publish(RECORDS)["inserted"] == len(RECORDS)
    return RECORDS


def esgf(client: Any, **params: Any) -> dict[str, Any]:
    response = client.get(SEARCH, params={"format": JSON, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def native(client: Any, params: dict[str, Any]) -> dict[str, Any]:
    response = client.get("/search", params={"limit": 0, "facet_limit": 1000, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def counts(body: dict[str, Any], name: str) -> dict[str, int]:
    flat = body["facet_counts"]["facet_fields"][name]
    return dict(zip(flat[::2], flat[1::2], strict=True))


def dataset_of(record: dict[str, Any]) -> str:
    f = record["facets"]
    if record["scheme"] == "cmip5":
        keys = ["product", "institute", "model", "experiment", "frequency", "realm", "table",
                "ensemble", "version"]  # fmt: skip
        return "cmip5." + ".".join(f[k] for k in keys)
    if record["scheme"] == "cmip6":
        keys = ["activity_id", "institution_id", "source_id", "experiment_id", "member_id",
                "table_id", "variable_id", "grid_label", "version"]  # fmt: skip
        return "CMIP6." + ".".join(f[k] for k in keys)
    keys = ["area", "era", "primary_dataset", "tier", "processing"]
    return "CMS." + ".".join(f[k] for k in keys)


# --- File searches: the catalog's search under ESGF's names ----------------------------------

# ESGF parameters -> the same filters in /api/v1/search
EQUIVALENT = [
    ({}, {}),
    ({"model": "CCSM4"}, {"model": "CCSM4"}),
    ({"model": ["CCSM4", "CanCM4"], "time_frequency": "mon"},
     {"model": ["CCSM4", "CanCM4"], "frequency": "mon"}),
    ({"experiment": "rcp45", "variable": "tas"}, {"experiment": "rcp45", "variable": "tas"}),
    ({"experiment!": "historical", "cmor_table": "Amon"},
     {"experiment!": "historical", "table": "Amon"}),
    ({"project": "CMIP6", "source_id": "CESM2"}, {"scheme": "cmip6", "source_id": "CESM2"}),
    ({"project": "CMS", "tier": "RAW-RECO"}, {"scheme": "cms", "tier": "RAW-RECO"}),
    ({"query": "rcp45 tas", "project": "CMIP5"}, {"q": "rcp45 tas", "scheme": "cmip5"}),
    ({"start": "2090-01-01T00:00:00Z", "end": "2095-12-31T23:59:59Z"},
     {"start": "2090-01-01", "end": "2095-12-31T23:59:59"}),
]  # fmt: skip
COUNTED = [("model", "model"), ("experiment", "experiment"), ("time_frequency", "frequency"),
           ("cmor_table", "table"), ("variable", "variable"), ("source_id", "source_id"),
           ("tier", "tier"), ("era", "era")]  # fmt: skip


@pytest.mark.parametrize(("asked", "same"), EQUIVALENT)
def test_file_counts_equal_the_native_search(client, published, asked, same):
    facets = ",".join(name for name, _ in COUNTED)
    body = esgf(client, type="File", limit=0, facets=facets, **asked)
    mine = native(client, {**same, "facets": ",".join(key for _, key in COUNTED)})
    assert body["response"]["numFound"] == mine["total"]
    for name, key in COUNTED:
        assert counts(body, name) == dict(sorted(mine["facets"][key].items())), name
    assert body["response"]["numFound"] > 0


def test_version_counts_and_constraints_use_esgf_spelling(client, published):
    body = esgf(client, type="File", limit=0, facets="version")
    by_hand = Counter(r["facets"]["version"][1:] for r in published if r["facets"].get("version"))
    assert counts(body, "version") == dict(sorted(by_hand.items()))
    version = cmip5_records()[0]["facets"]["version"]
    for spelling in (version, version[1:]):
        found = esgf(client, type="File", version=spelling, limit=1000)
        assert {d["ndn_name"] for d in found["response"]["docs"]} == {
            r["name"] for r in published if r["facets"].get("version") == version
        }


def test_project_counts_leave_out_their_own_constraint(client, published):
    body = esgf(client, type="File", project="CMIP6", facets="project,source_id", limit=0)
    by_scheme = Counter(r["scheme"] for r in published)
    assert counts(body, "project") == {"CMIP5": by_scheme["cmip5"], "CMIP6": by_scheme["cmip6"],
                                       "CMS": by_scheme["cms"]}  # fmt: skip
    assert body["response"]["numFound"] == by_scheme["cmip6"]


def test_facets_star_counts_the_esgf_facets(client, published):
    body = esgf(client, type="File", facets="*", limit=0)
    fields = body["facet_counts"]["facet_fields"]
    assert {"project", "model", "time_frequency", "cmor_table", "source_id", "tier"} <= set(fields)
    assert "filename" not in fields and "time_range" not in fields  # one value per file
    # Solr's layout: value, count, value, count ... by value
    flat = fields["model"]
    assert flat[::2] == sorted(flat[::2]) and all(isinstance(c, int) for c in flat[1::2])


def test_wildcards_expand_to_the_matching_values(client, published):
    body = esgf(client, type="File", model="Can*", limit=1000)
    wanted = {r["name"] for r in published if r["facets"].get("model", "").startswith("Can")}
    assert {d["ndn_name"] for d in body["response"]["docs"]} == wanted and wanted


def test_file_doc_fields(client, published):
    record = cmip5_records()[0]
    body = esgf(client, type="File", limit=1, model=record["facets"]["model"],
                ensemble=record["facets"]["ensemble"], variable=record["facets"]["variable"],
                experiment=record["facets"]["experiment"])  # fmt: skip
    doc = next(d for d in body["response"]["docs"] if d["ndn_name"] == record["name"])
    published_record = next(r for r in published if r["name"] == record["name"])
    dataset = dataset_of(record)
    assert doc["dataset_id"] == f"{dataset}|{NODE}"
    assert doc["instance_id"] == f"{dataset}.{record['filename']}"
    assert doc["id"] == f"{doc['instance_id']}|{NODE}"
    assert doc["title"] == record["filename"]
    assert doc["size"] == published_record["size"]
    assert doc["checksum"] == [published_record["sha256"]] and doc["checksum_type"] == ["SHA256"]
    assert doc["project"] == ["CMIP5"] and doc["model"] == [record["facets"]["model"]]
    assert doc["time_frequency"] == [record["facets"]["frequency"]]
    assert doc["version"] == record["facets"]["version"][1:]
    assert doc["type"] == "File" and doc["latest"] is True and doc["replica"] is False
    http, ndn = doc["url"]
    assert http == (f"http://catalog/data{record['name']}|application/netcdf|HTTPServer")
    assert ndn == f"ndn:{record['name']}|application/netcdf|NDN"


def test_fields_limit_the_doc(client, published):
    body = esgf(client, type="File", limit=3, fields="id,size")
    assert all(set(d) == {"id", "size"} for d in body["response"]["docs"])


def test_paging_covers_every_file_once(client, published):
    seen: list[str] = []
    for offset in range(0, len(published), 7):
        body = esgf(client, type="File", limit=7, offset=offset)
        assert body["response"]["start"] == offset
        seen += [d["ndn_name"] for d in body["response"]["docs"]]
    assert sorted(seen) == sorted(r["name"] for r in published)


def test_id_constraints_find_single_files_and_datasets(client, published):
    record = cmip6_records()[3]
    dataset = dataset_of(record)
    instance = f"{dataset}.{record['filename']}"
    for name, value in (("id", f"{instance}|{NODE}"), ("instance_id", instance)):
        body = esgf(client, type="File", **{name: value})
        assert [d["ndn_name"] for d in body["response"]["docs"]] == [record["name"]]
    body = esgf(client, type="File", dataset_id=f"{dataset}|{NODE}", limit=100)
    assert {d["ndn_name"] for d in body["response"]["docs"]} == {
        r["name"] for r in published if dataset_of(r) == dataset
    }
    master = dataset.rsplit(".", 1)[0]
    body = esgf(client, type="Dataset", master_id=master)
    assert [d["instance_id"] for d in body["response"]["docs"]] == [dataset]
    assert esgf(client, type="File", dataset_id=f"{dataset}|elsewhere")["response"]["numFound"] == 0
    assert esgf(client, type="File", id="not.an.id")["response"]["numFound"] == 0


# --- Dataset searches --------------------------------------------------------------------------


def test_datasets_group_files_and_count_datasets(client, published):
    body = esgf(client, type="Dataset", limit=1000, facets="project,model,variable")
    files_of: dict[str, list[dict[str, Any]]] = {}
    for r in published:
        files_of.setdefault(dataset_of(r), []).append(r)
    docs = {d["instance_id"]: d for d in body["response"]["docs"]}
    assert body["response"]["numFound"] == len(files_of) == len(docs)
    for instance, files in files_of.items():
        doc = docs[instance]
        assert doc["id"] == f"{instance}|{NODE}" and doc["type"] == "Dataset"
        assert doc["number_of_files"] == len(files)
        assert doc["size"] == sum(f["size"] for f in files)
    # ESGF counts datasets: a dataset with tas and pr counts once for each
    variables = Counter(
        variable
        for files in files_of.values()
        for variable in {f["facets"].get("variable") for f in files} - {None}
    )
    assert counts(body, "variable") == dict(sorted(variables.items()))
    projects = Counter(files[0]["scheme"].upper() for files in files_of.values())
    assert counts(body, "project") == dict(sorted(projects.items()))
    assert [d["instance_id"] for d in body["response"]["docs"]] == sorted(
        docs, key=lambda i: min(f["name"] for f in files_of[i])
    )


def test_dataset_negation_leaves_out_datasets_having_the_value(publish, client):
    base = cmip5_records()[0]
    two_variables = [
        {**base, "name": base["name"].replace("/tas/", f"/{v}/").replace("tas_", f"{v}_"),
         "filename": base["filename"].replace("tas_", f"{v}_"),
         "facets": {**base["facets"], "variable": v}}
        for v in ("tas", "pr")
    ]  # fmt: skip
    publish(two_variables)
    assert esgf(client, type="Dataset", variable="pr")["response"]["numFound"] == 1
    assert esgf(client, type="Dataset", **{"variable!": "pr"})["response"]["numFound"] == 0
    assert esgf(client, type="File", **{"variable!": "pr"})["response"]["numFound"] == 1


def test_latest_is_the_newest_version_of_a_dataset(publish, client):
    base = cmip5_records()[0]
    old, new = "v20110101", "v20990101"
    versions = [
        {**base, "name": base["name"].replace(base["facets"]["version"], v),
         "facets": {**base["facets"], "version": v}}
        for v in (old, new)
    ]  # fmt: skip
    publish(versions)
    body = esgf(client, type="Dataset", latest="true", model=base["facets"]["model"],
                ensemble=base["facets"]["ensemble"], experiment=base["facets"]["experiment"],
                variable="tas")  # fmt: skip
    assert [d["version"] for d in body["response"]["docs"]] == [new[1:]]
    older = esgf(client, type="File", latest="false", limit=10)
    assert [d["version"] for d in older["response"]["docs"]] == [old[1:]]
    assert older["response"]["docs"][0]["latest"] is False


# --- formats, keywords, refusals ---------------------------------------------------------------


def test_xml_is_the_default_format_and_says_the_same(client, published):
    response = client.get(SEARCH, params={"type": "File", "model": "CCSM4", "facets": "experiment"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(response.content)
    result = root.find("result")
    assert result is not None
    as_json = esgf(client, type="File", model="CCSM4", facets="experiment")
    assert int(result.get("numFound", "-1")) == as_json["response"]["numFound"]
    ids = [doc.findtext("str[@name='id']") for doc in result.findall("doc")]
    assert ids == [d["id"] for d in as_json["response"]["docs"]]
    urls = [s.text for s in result.find("doc").findall("arr[@name='url']/str")]  # type: ignore[union-attr]
    assert urls == as_json["response"]["docs"][0]["url"]
    facet = root.find("lst[@name='facet_counts']/lst[@name='facet_fields']/lst[@name='experiment']")
    assert facet is not None
    assert {i.get("name"): int(i.text or 0) for i in facet} == counts(as_json, "experiment")


def test_distrib_is_answered_locally_and_says_so(client, published):
    body = esgf(client, type="File", distrib="true", limit=0)
    header = body["responseHeader"]
    assert "this index answers for its own records only" in header["note"]
    assert header["params"]["shards"] == f"{NODE}/solr"
    assert body["response"]["numFound"] == len(published)
    assert esgf(client, type="File", distrib="false", limit=0)["response"]["numFound"] == len(
        published
    )


@pytest.mark.parametrize(
    ("params", "count"),
    [
        ({"replica": "true"}, 0),
        ({"replica": "false"}, None),
        ({"retracted": "true"}, 0),
        ({"retracted": "False"}, None),
        ({"type": "Aggregation"}, 0),
        ({"data_node": NODE}, None),
        ({"data_node": "esgf-data.example.org"}, 0),
        ({"index_node!": NODE}, 0),
        ({"from": "2000-01-01T00:00:00Z"}, None),
        ({"to": "2000-01-01T00:00:00Z"}, 0),
        ({"query": "*"}, None),
        ({"shards": "localhost:8983/solr"}, None),
    ],
)
def test_keywords(client, published, params, count):
    body = esgf(client, **{"type": "File", "limit": 0, **params})
    assert body["response"]["numFound"] == (len(published) if count is None else count)


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"no_such_facet": "x"}, "no_such_facet"),
        ({"facets": "model,no_such_facet"}, "facets"),
        ({"type": "Files"}, "type"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "10001"}, "limit"),
        ({"offset": "x"}, "offset"),
        ({"format": "text/html"}, "format"),
        ({"latest": "maybe"}, "latest"),
        ({"start": "last tuesday"}, "start"),
        ({"bbox": "[-10,-10,10,10]"}, "bbox"),
        ({"model": "a\x00b"}, "model"),
        ({"query": "%%% ---"}, "query"),
    ],
)
def test_refused_parameters_say_which_and_why(client, published, params, name):
    response = client.get(SEARCH, params={"format": JSON, **params})
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    # the form esgf-pyclient reports: "Invalid query parameter(s): <name>"
    assert re.search(r"Invalid HTTP query parameter=(\w+)", detail)[1] == name  # type: ignore[index]
    assert len(detail) > len(f"Invalid HTTP query parameter={name}: ")


# --- wget scripts --------------------------------------------------------------------------------

LINE = re.compile(r"^'([^']+)' '([^']+)' 'SHA256' '([0-9a-f]*)'$")


def script_entries(text: str) -> list[tuple[str, str, str]]:
    block = text.split("EOF--dataset.file.url.chksum_type.chksum")[1].strip().splitlines()
    return [LINE.match(line).groups() for line in block]  # type: ignore[union-attr]


def test_wget_script_lists_the_search_files(client, published):
    response = client.get(WGET, params={"project": "CMIP5", "model": "CCSM4"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-sh")
    text = response.text
    assert text.startswith("#!/bin/bash\n") and "# ESG Federation download script" in text
    assert "# Search URL: http://catalog/esg-search/wget?project=CMIP5&model=CCSM4" in text
    wanted = {r["name"]: r for r in published if r["facets"].get("model") == "CCSM4"}
    entries = script_entries(text)
    assert len(entries) == len(wanted)
    for path, url, sha in entries:
        name = url.removeprefix("http://catalog/data")
        assert path == wanted[name]["filename"] and sha == wanted[name]["sha256"]


def test_wget_limit_is_known_to_the_script(client, published):
    text = client.get(WGET, params={"limit": 5}).text
    assert len(script_entries(text)) == 5
    assert f"MATCHED={len(published)}\nLISTED=5\n" in text
    refused = client.get(WGET, params={"limit": 100_001})
    assert refused.status_code == 400 and "parameter=limit" in refused.json()["detail"]


def test_wget_files_sharing_a_name_go_to_their_ndn_paths(publish, client):
    base = cmip5_records()[0]
    twins = [
        {**base, "name": base["name"].replace(base["facets"]["version"], v),
         "facets": {**base["facets"], "version": v}}
        for v in ("v20110101", "v20120101")
    ]  # fmt: skip
    publish([_with_bytes(r) for r in twins])
    text = client.get(WGET).text
    paths = sorted(path for path, _, _ in script_entries(text))
    assert paths == sorted(r["name"].lstrip("/") for r in twins)
    assert "RENAMED=2" in text


def test_cms_and_cmip6_datasets_have_their_own_ids(client, published):
    body = esgf(client, type="Dataset", project="CMS", limit=100)
    assert {d["instance_id"] for d in body["response"]["docs"]} == {
        dataset_of(r) for r in cms_records()
    }
    cmip6 = esgf(client, type="Dataset", project="CMIP6", limit=1)["response"]["docs"][0]
    assert cmip6["dataset_id_template_"][0].startswith("%(mip_era)s.%(activity_drs)s.")
    assert cmip6["activity_drs"] == cmip6["activity_id"]
