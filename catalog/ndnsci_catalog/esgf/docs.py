"""ESGF search docs (File and Dataset records) from the catalog's rows.

Fields follow ESGF index records: facets as lists under ESGF's names, ``id`` as
``<instance_id>|<data_node>``, checksums as one-element lists, and ``url`` entries
``<url>|<media type>|<service>``: ``HTTPServer`` is the HTTP gateway to the NDN data
(``/data/<NDN name>``), ``NDN`` the name itself for clients that speak NDN.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ndnsci_catalog.esgf.vocabulary import (
    CMIP6_TEMPLATES,
    VERSION,
    dataset_instance,
    esgf_name,
    esgf_value,
    file_instance,
    master_of,
    project,
)

#: the names of CMS files (``translators/ndnsci_translators/cms.py``): an XRootD path is the rest
CMS_PREFIX = "/CMS"

#: catalog facets that are not facets of an ESGF record (they are its title and time fields)
_NOT_FIELDS = frozenset({"filename", "time_range"})


@dataclass(frozen=True)
class Site:
    """Where the records live: the node's name in ids, and the URLs of its services."""

    node: str
    #: the HTTP gateway's base, ending in ``/`` (``/data/``)
    gateway: str
    #: this service's ``/esg-search/`` base, ending in ``/``
    search: str
    #: the XRootD server reading the CMS files over NDN (``root://HOST:PORT``), '' for none
    xrootd: str = ""

    def data_url(self, name: str) -> str:
        return self.gateway + quote(name.lstrip("/"), safe="/")

    def xrootd_url(self, name: str) -> str | None:
        """``root://HOST:PORT//store/...`` for a CMS name (``/CMS/store/...``): the server's
        NDN plugin puts ``/CMS`` back before the path (deploy/xrootd/xrootd-ndn.cfg). None for
        other names, or when no XRootD server is configured."""
        if not self.xrootd or not name.startswith(CMS_PREFIX + "/"):
            return None
        return self.xrootd.rstrip("/") + "/" + name[len(CMS_PREFIX) :]


def media_type(filename: str) -> str:
    """The HTTP media type of a published file, by its name."""
    return "application/netcdf" if filename.endswith(".nc") else "application/octet-stream"


def facet_fields(scheme: str, facets: Mapping[str, Any]) -> dict[str, list[str]]:
    """A record's facets as ESGF fields: lists under ESGF's names (``project`` first)."""
    fields = {"project": [project(scheme)]}
    for key, value in facets.items():
        if value is not None and key not in _NOT_FIELDS:
            fields[esgf_name(key)] = [esgf_value(key, str(value))]
    if scheme == "cmip6":
        if facets.get("activity_id"):
            fields["activity_drs"] = [str(facets["activity_id"])]
        fields.update(CMIP6_TEMPLATES)
    return fields


def esgf_time(value: str | None) -> str | None:
    """Catalog time text (``1990-01-01T00:00:00``) as Solr writes dates."""
    return None if value is None else value[:19] + "Z"


def time_text(code: int | None) -> str | None:
    """A time code of the facet index (``19900101000000``) as Solr writes dates."""
    if code is None:
        return None
    t = f"{code:014d}"
    return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"


def file_doc(
    row: Mapping[str, Any],
    site: Site,
    *,
    latest: bool,
    tracking_id: str | None,
) -> dict[str, Any]:
    """The ESGF File record of one catalog row (``facets`` decoded)."""
    scheme, name, facets = row["scheme"], row["name"], row["facets"]
    filename = row["filename"] or name.rsplit("/", 1)[-1]
    dataset = dataset_instance(scheme, facets, name)
    instance = file_instance(dataset, filename)
    master = file_instance(master_of(scheme, dataset), filename)
    mime = media_type(filename)
    doc: dict[str, Any] = {
        "id": f"{instance}|{site.node}",
        "instance_id": instance,
        "master_id": master,
        "dataset_id": f"{dataset}|{site.node}",
        "type": "File",
        "title": filename,
        "url": [f"{site.data_url(name)}|{mime}|HTTPServer", f"ndn:{name}|{mime}|NDN"],
        "ndn_name": name,
    }
    xrootd = site.xrootd_url(name)
    if xrootd is not None:
        doc["url"].append(f"{xrootd}|{mime}|XRootD")
    if row["size"] is not None:
        doc["size"] = row["size"]
    if row["sha256"]:
        doc["checksum"] = [row["sha256"]]
        doc["checksum_type"] = ["SHA256"]
    if tracking_id:
        doc["tracking_id"] = [tracking_id]
    doc.update(facet_fields(scheme, facets))
    version = facets.get(VERSION)
    if version:
        doc[VERSION] = esgf_value(VERSION, str(version))
    doc.update(_common(site, latest, row["published_at"]))
    _coverage(doc, esgf_time(row["time_start"]), esgf_time(row["time_end"]))
    return doc


def dataset_doc(
    first: Mapping[str, Any],
    site: Site,
    *,
    files: int,
    size: int,
    latest: bool,
    values: Mapping[str, list[str]],
    span: tuple[int | None, int | None],
) -> dict[str, Any]:
    """The ESGF Dataset record of a dataset, from its first file's row and its statistics.

    ``values``: per catalog facet, the distinct values among the dataset's files.
    """
    scheme, name = first["scheme"], first["name"]
    instance = dataset_instance(scheme, first["facets"], name)
    dataset_id = f"{instance}|{site.node}"
    doc: dict[str, Any] = {
        "id": dataset_id,
        "instance_id": instance,
        "master_id": master_of(scheme, instance),
        "drs_id": master_of(scheme, instance),
        "type": "Dataset",
        "title": instance,
        "number_of_files": files,
        "size": size,
        "url": [f"{site.search}wget?dataset_id={quote(dataset_id, safe='')}|application/x-sh|WGET"],
    }
    facets = {key: found[0] for key, found in values.items() if len(found) == 1}
    doc.update(facet_fields(scheme, facets))
    for key, found in values.items():
        if key not in _NOT_FIELDS and len(found) > 1:
            doc[esgf_name(key)] = [esgf_value(key, v) for v in found]
    version = first["facets"].get(VERSION)
    if version and not instance.startswith("/"):
        doc[VERSION] = esgf_value(VERSION, str(version))
    doc.update(_common(site, latest, first["published_at"]))
    _coverage(doc, time_text(span[0]), time_text(span[1]))
    return doc


def _common(site: Site, latest: bool, published: str) -> dict[str, Any]:
    return {
        "data_node": site.node,
        "index_node": site.node,
        "latest": latest,
        "replica": False,
        "retracted": False,
        "timestamp": published,
        "_timestamp": published,
    }


def _coverage(doc: dict[str, Any], start: str | None, end: str | None) -> None:
    if start is not None:
        doc["datetime_start"] = start
    if end is not None:
        doc["datetime_stop"] = end


def select_fields(doc: dict[str, Any], fields: frozenset[str] | None) -> dict[str, Any]:
    """Only ``fields`` of a doc (None: all), as ESGF's ``fields=`` asks."""
    if fields is None:
        return doc
    return {key: value for key, value in doc.items() if key in fields}
