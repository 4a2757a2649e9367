"""Property: /search answers exactly what plain SQL over ``files`` answers, for random queries.

The reference reads each facet straight from the ``facets`` JSON column (json_extract on SQLite,
``->>`` on PostgreSQL) and builds every condition in SQL, independently of the facet index:
totals, the page in every sort order (ties and NULLs included) and the ESGF facet counts (each
facet counted under every filter but its own; top values by count, then value) must agree.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.orm import Session

from ndnsci_catalog import fulltext
from ndnsci_catalog.query import SORTS

from .corpus import all_records

KEYS = ["model", "experiment", "variable", "frequency", "institute", "realm", "source_id",
        "experiment_id", "table_id", "tier", "era", "activity", "time_range"]  # fmt: skip
WORDS = ["historical", "tas", "CanCM4", "CESM*", "mon", "MPI-ESM-LR", "RAW", "zg", "nope"]


def _records() -> list[dict[str, Any]]:
    records = []
    for i, record in enumerate(all_records()):
        extra = {"size": (i * 7919) % 5} if i % 3 else {}  # small sizes: many ties, some NULLs
        records.append({**record, **extra})
    return records


RECORDS = _records()
VALUES = {k: sorted({r["facets"][k] for r in RECORDS if r["facets"].get(k)}) for k in KEYS}
PREFIXES = sorted({"/".join(r["name"].split("/")[:d]) for r in RECORDS for d in (2, 3, 4, 6)})


@st.composite
def queries(draw: Any) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True)):
        values = draw(st.lists(st.sampled_from([*VALUES[key], "unknown"]), min_size=1, max_size=3))
        params[key + "!" if draw(st.booleans()) and params else key] = values
    if draw(st.integers(0, 3)) == 0:
        params["q"] = draw(st.sampled_from(WORDS))
    if draw(st.integers(0, 3)) == 0:
        params["prefix"] = draw(st.sampled_from(PREFIXES))
    if draw(st.integers(0, 4)) == 0:
        params["start"] = str(draw(st.integers(1850, 2100)))
    if draw(st.integers(0, 4)) == 0:
        params["end"] = str(draw(st.integers(1900, 2300)))
    if draw(st.integers(0, 5)) == 0:
        params["scheme"] = draw(st.sampled_from(["cmip5", "cmip6", "cms"]))
    params["sort"] = draw(st.sampled_from(SORTS))
    params["limit"] = draw(st.integers(0, 15))
    params["offset"] = draw(st.integers(0, 40))
    params["facet_limit"] = draw(st.sampled_from([1, 2, 3, 100]))
    return params


class Reference:
    """The same search in plain SQL."""

    def __init__(self, session: Session, params: dict[str, Any]) -> None:
        self.session = session
        self.params = params
        self.dialect = session.get_bind().dialect.name
        self.binds: dict[str, Any] = {}

    def facet(self, key: str) -> str:
        self.binds[f"k_{key}"] = f"$.{key}" if self.dialect == "sqlite" else key
        if self.dialect == "sqlite":
            return f"json_extract(facets, :k_{key})"
        return f"(facets ->> :k_{key})"

    def _values(self, name: str, values: list[str]) -> str:
        for i, value in enumerate(values):
            self.binds[f"{name}{i}"] = value
        return ", ".join(f":{name}{i}" for i in range(len(values)))

    def conditions(self, skip: str | None = None) -> list[str]:
        p, out = self.params, []
        for raw, values in p.items():
            key = raw.rstrip("!")
            if key not in KEYS or key == skip:
                continue
            column = self.facet(key)
            listed = self._values(f"v_{key}_{raw.endswith('!')}_", values)
            if raw.endswith("!"):
                out.append(f"({column} IS NULL OR {column} NOT IN ({listed}))")
            else:
                out.append(f"{column} IN ({listed})")
        if "q" in p:
            matching = fulltext.matching_ids(self.dialect, p["q"])
            self.binds.update(matching.compile().params)
            out.append(f"id IN ({matching.text})")
        if "prefix" in p:
            self.binds.update(pre=p["prefix"], low=p["prefix"] + "/", high=p["prefix"] + "0")
            out.append("(name = :pre OR (name > :low AND name < :high))")
        if "start" in p:
            self.binds["start"] = f"{p['start']}-01-01T00:00:00"
            out.append("time_end >= :start")
        if "end" in p:
            self.binds["end"] = f"{p['end']}-12-31T23:59:59"
            out.append("time_start <= :end")
        if "scheme" in p:
            self.binds["scheme"] = p["scheme"]
            out.append("scheme = :scheme")
        return out

    def _query(self, select: str, conditions: list[str], tail: str = "") -> list[Any]:
        where = " WHERE " + " AND ".join(conditions) if conditions else ""
        return list(self.session.execute(text(select + where + tail), self.binds))

    def total(self) -> int:
        return int(self._query("SELECT count(*) FROM files", self.conditions())[0][0])

    def names(self) -> list[str]:
        field = self.params["sort"].lstrip("-")
        column = {"published": "seq"}.get(field, field)
        direction = "DESC" if self.params["sort"].startswith("-") else "ASC"
        order = f"{column} IS NULL, {column} {direction}" + (", name" if field != "name" else "")
        tail = f" ORDER BY {order} LIMIT {self.params['limit']} OFFSET {self.params['offset']}"
        return [row[0] for row in self._query("SELECT name FROM files", self.conditions(), tail)]

    def counts(self, key: str) -> dict[str, int]:
        skip = key if key in {k.rstrip("!") for k in self.params} else None
        column = self.facet(key)
        rows = self._query(
            f"SELECT {column}, count(*) FROM files",
            [*self.conditions(skip), f"{column} IS NOT NULL"],
            " GROUP BY 1",
        )
        ordered = sorted(((v, int(n)) for v, n in rows), key=lambda i: (-i[1], i[0]))
        return dict(ordered[: self.params["facet_limit"]])


def test_search_agrees_with_plain_sql(client: Any, publish: Any, session: Session) -> None:
    # several batches, later values sorting first: value codes in the index are not in value
    # order, so the order of tied counts (by value) is really tested
    for start in (60, 30, 0):
        publish(RECORDS[start:] if start == 60 else RECORDS[start : start + 30])

    @given(params=queries())
    @settings(
        max_examples=60,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def agree(params: dict[str, Any]) -> None:
        response = client.get("/search", params={**params, "facets": ",".join(KEYS)})
        assert response.status_code == 200, response.text
        body = response.json()
        reference = Reference(session, params)
        assert body["total"] == reference.total(), params
        assert [r["name"] for r in body["results"]] == reference.names(), params
        for key in KEYS:
            assert body["facets"][key] == reference.counts(key), (key, params)

    agree()
