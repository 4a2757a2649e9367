"""The answer of an ESGF search as Solr writes it: JSON (``wt=json``) or XML (the default).

Both carry ``responseHeader`` (status, time, the parameters as Solr saw them), ``response``
(``numFound``, ``start``, ``docs``) and ``facet_counts.facet_fields``: per facet, values and
counts alternating (JSON: ``["HadCM3", 12, "MIROC5", 12]``; XML: ``<int name="HadCM3">12</int>``),
in value order (``facet.sort=lex``), values with no file left out (``facet.mincount=1``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ndnsci_catalog.esgf.request import EsgfRequest
from ndnsci_catalog.esgf.search import FACET_LIMIT, Answer

#: what the header says when a distributed search was asked for
LOCAL_ONLY = (
    "distributed search was requested: this index answers for its own records only "
    "(ndnsci catalogs do not federate esg-search queries)"
)


def header(answer: Answer, request: EsgfRequest, node: str) -> dict[str, Any]:
    params: dict[str, Any] = {
        "q": request.query or "*:*",
        "start": str(request.offset),
        "rows": str(request.limit),
        "fl": "*" if request.fields is None else ",".join(sorted(request.fields)),
        "fq": [f"type:{request.type}", *_filter_queries(request)],
        "facet": "true" if request.facets else "false",
        "facet.sort": "lex",
        "facet.mincount": "1",
        "facet.limit": str(FACET_LIMIT),
        "facet.field": list(answer.facet_counts),
        "distrib": "false",
        "wt": "json" if request.format.endswith("json") else "xml",
    }
    head: dict[str, Any] = {"status": 0, "QTime": round(answer.seconds * 1000), "params": params}
    if request.distrib:
        # esgf-pyclient reads the shards of a distributed search from here: this node only
        params["shards"] = f"{node}/solr"
        head["note"] = LOCAL_ONLY
    return head


def _filter_queries(request: EsgfRequest) -> Iterator[str]:
    for name, constraint in request.constraints.items():
        if constraint.include:
            yield f"{name}:(" + " || ".join(json.dumps(v) for v in constraint.include) + ")"
        for value in constraint.exclude:
            yield f"-{name}:{json.dumps(value)}"


def as_json(answer: Answer, request: EsgfRequest, node: str) -> bytes:
    body = {
        "responseHeader": header(answer, request, node),
        "response": {
            "numFound": answer.total,
            "start": request.offset,
            "maxScore": 1.0,
            "docs": answer.docs,
        },
        "facet_counts": {
            "facet_queries": {},
            "facet_fields": {
                name: [item for pair in pairs for item in pair]
                for name, pairs in answer.facet_counts.items()
            },
            "facet_ranges": {},
            "facet_intervals": {},
            "facet_heatmaps": {},
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


def as_xml(answer: Answer, request: EsgfRequest, node: str) -> bytes:
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<response>\n']
    parts.append(_value("responseHeader", header(answer, request, node)))
    parts.append(
        f'\n<result name="response" numFound="{answer.total}" start="{request.offset}" '
        'maxScore="1.0">'
    )
    for doc in answer.docs:
        parts.append("<doc>" + "".join(_value(k, v) for k, v in doc.items()) + "</doc>")
    parts.append('</result>\n<lst name="facet_counts"><lst name="facet_queries"/>')
    parts.append('<lst name="facet_fields">')
    for name, pairs in answer.facet_counts.items():
        counts = "".join(f"<int name={quoteattr(v)}>{c}</int>" for v, c in pairs)
        parts.append(f"<lst name={quoteattr(name)}>{counts}</lst>")
    parts.append('</lst><lst name="facet_ranges"/><lst name="facet_intervals"/>')
    parts.append('<lst name="facet_heatmaps"/></lst>\n</response>\n')
    return "".join(parts).encode()


def _value(name: str | None, value: Any) -> str:
    """One Solr XML element (``name`` None inside an ``arr``)."""
    attr = "" if name is None else f" name={quoteattr(name)}"
    if isinstance(value, bool):
        return f"<bool{attr}>{'true' if value else 'false'}</bool>"
    if isinstance(value, int):
        return f"<long{attr}>{value}</long>"
    if isinstance(value, float):
        return f"<double{attr}>{value!r}</double>"
    if isinstance(value, list | tuple):
        return f"<arr{attr}>" + "".join(_value(None, v) for v in value) + "</arr>"
    if isinstance(value, Mapping):
        return f"<lst{attr}>" + "".join(_value(k, v) for k, v in value.items()) + "</lst>"
    return f"<str{attr}>{escape(str(value))}</str>"
