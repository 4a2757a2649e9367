"""CMS records offer the root:// URL of the XRootD server that reads them over NDN
(``NDNSCI_XROOTD_URL``, ``ndnsci xrootd up``) beside the NDN name and the HTTP URL: in the
record (``GET /files/{name}``) and in ESGF's File records (``url``, service ``XRootD``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .conftest import ndjson
from .corpus import cmip5_records, cms_records

XROOTD = "root://xrootd.example.org:1094"


def _publish(client: Any, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    cms, cmip5 = cms_records(1)[0], cmip5_records(1)[0]
    reply = client.post(
        "/publish",
        content=ndjson([cms, cmip5]),
        headers={"Authorization": f"Bearer {token}"},
    )
    assert reply.status_code == 200, reply.text
    return cms, cmip5


def test_a_cms_record_offers_the_root_url_beside_the_http_url(client_with: Any, token: str) -> None:
    client = client_with(xrootd_url=XROOTD + "/")  # a trailing slash or not: one URL
    cms, cmip5 = _publish(client, token)
    record = client.get("/files" + quote(cms["name"])).json()
    lfn = cms["name"].removeprefix("/CMS")
    assert lfn.startswith("/store/")
    # root://HOST:PORT//store/...: the double slash makes the LFN an absolute path
    assert record["urls"]["xrootd"] == f"{XROOTD}/{lfn}"
    assert record["urls"]["http"].endswith("/data" + quote(cms["name"]))
    assert record["name"] == cms["name"]
    # a CMIP5 file has no XRootD URL
    other = client.get("/files" + quote(cmip5["name"])).json()
    assert set(other["urls"]) == {"http"}


def test_no_root_url_without_an_xrootd_server(client_with: Any, token: str) -> None:
    client = client_with()
    cms, _ = _publish(client, token)
    record = client.get("/files" + quote(cms["name"])).json()
    assert set(record["urls"]) == {"http"}


def test_esgf_file_records_list_the_xrootd_access(client_with: Any, token: str) -> None:
    client = client_with(xrootd_url=XROOTD)
    cms, cmip5 = _publish(client, token)
    found = client.get(
        "http://catalog/esg-search/search",
        params={"type": "File", "format": "application/solr+json", "limit": 10},
    ).json()
    urls = {d["ndn_name"]: d["url"] for d in found["response"]["docs"]}
    lfn = cms["name"].removeprefix("/CMS")
    assert f"{XROOTD}/{lfn}|application/octet-stream|XRootD" in urls[cms["name"]]
    assert not any(u.endswith("|XRootD") for u in urls[cmip5["name"]])
