"""An ``/esg-search/search`` (or ``/wget``) query string, read the way ESGF index nodes read it.

Keywords (ESGF's): ``type``, ``format``, ``limit``, ``offset``, ``facets``, ``fields``,
``query``, ``latest``, ``replica``, ``retracted``, ``distrib``, ``shards``, ``start``/``end``
(data coverage overlaps), ``from``/``to`` (published between). Every other parameter is a
constraint: ``name=value`` (repeated: OR; different names: AND), ``name!=value`` (not),
``*`` and ``?`` as wildcards in a value. Ids (``id``, ``instance_id``, ``dataset_id``,
``master_id``, ``drs_id``), ``project``, ``data_node`` and ``index_node`` are constraints too.

A parameter that cannot be honoured is refused with the message ESGF gives
(``Invalid HTTP query parameter=<name>``, which esgf-pyclient reports), and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ndnsci_catalog.records import normalize_time

TYPES = ("Dataset", "File", "Aggregation")
JSON = "application/solr+json"
XML = "application/solr+xml"
DEFAULT_LIMIT = 10
MAX_LIMIT = 10_000
KEYWORDS = frozenset(
    {"type", "format", "limit", "offset", "facets", "fields", "query", "latest", "replica",
     "retracted", "distrib", "shards", "start", "end", "from", "to"}
)  # fmt: skip
#: ESGF keywords this index cannot answer (no geospatial index here)
UNSUPPORTED = frozenset({"bbox", "lat", "lon", "location", "radius", "polygon"})
#: constraints on ids and on where records live, not facets of the catalog
ID_KEYS = frozenset({"id", "instance_id", "dataset_id", "master_id", "drs_id"})
NODE_KEYS = frozenset({"data_node", "index_node"})
PROJECT = "project"
#: ``facets=*``: every facet ESGF counts
STAR = "*"
#: query strings of cache-busting browsers and JSONP callers carry these: not constraints
IGNORED = frozenset({"_", "callback"})


class EsgfError(Exception):
    """A parameter ESGF clients sent that this index refuses (400)."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"Invalid HTTP query parameter={name}: {reason}")
        self.name = name


@dataclass
class Constraint:
    """The values asked of one name: any of ``include`` and none of ``exclude``."""

    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)


@dataclass
class EsgfRequest:
    type: str = "Dataset"
    format: str = XML
    limit: int = DEFAULT_LIMIT
    offset: int = 0
    #: ESGF names to count (None: no facet counts, as ESGF answers without ``facets``)
    facets: list[str] | None = None
    #: fields of each doc (None: all)
    fields: frozenset[str] | None = None
    query: str | None = None
    start: str | None = None
    end: str | None = None
    published_from: str | None = None
    published_to: str | None = None
    latest: bool | None = None
    replica: bool | None = None
    retracted: bool | None = None
    distrib: bool = False
    shards: str | None = None
    #: by ESGF name (facets, ids, project, nodes)
    constraints: dict[str, Constraint] = field(default_factory=dict)
    #: the parameters as given (echoed in the answer's header)
    params: list[tuple[str, str]] = field(default_factory=list)


def parse(items: Sequence[tuple[str, str]], *, max_limit: int = MAX_LIMIT) -> EsgfRequest:
    """Read a query string's items; raises :class:`EsgfError`."""
    request = EsgfRequest(params=list(items))
    for raw_name, value in items:
        if "\x00" in raw_name or "\x00" in value:
            raise EsgfError(raw_name.rstrip("!") or "?", "contains a NUL character")
        if raw_name in IGNORED:
            continue
        if raw_name in KEYWORDS:
            _keyword(request, raw_name, value, max_limit)
        elif raw_name.rstrip("!") in UNSUPPORTED:
            raise EsgfError(raw_name, "geospatial constraints are not supported by this index")
        else:
            _constraint(request, raw_name, value)
    return request


def _keyword(request: EsgfRequest, name: str, value: str, max_limit: int) -> None:
    if name == "type":
        if value not in TYPES:
            raise EsgfError(name, f"{value!r} is not one of {', '.join(TYPES)}")
        request.type = value
    elif name == "format":
        if value not in (JSON, XML):
            raise EsgfError(name, f"{value!r} is not one of {JSON}, {XML}")
        request.format = value
    elif name == "limit":
        request.limit = _integer(name, value, max_limit)
    elif name == "offset":
        request.offset = _integer(name, value, 1_000_000_000)
    elif name == "facets":
        request.facets = _names(value)
    elif name == "fields":
        names = _names(value)
        request.fields = None if "*" in names else frozenset(names)
    elif name == "query":
        # Solr's AND between words is what the catalog's free text does anyway
        text = " ".join(word for word in value.split() if word != "AND")
        request.query = None if text in ("", "*", "*:*") else text
    elif name in ("latest", "replica", "retracted", "distrib"):
        setattr(request, name, _boolean(name, value))
    elif name == "shards":
        request.shards = value  # one index node: every shard is this one
    elif name in ("start", "end"):
        setattr(request, name, _time(name, value, upper=name == "end"))
    else:  # from, to: when the record was published
        bound = _time(name, value, upper=name == "to")
        if name == "from":
            request.published_from = bound
        else:
            request.published_to = bound + ".999999Z"


def _constraint(request: EsgfRequest, raw_name: str, value: str) -> None:
    negate = raw_name.endswith("!")
    name = raw_name[:-1] if negate else raw_name
    if not name:
        raise EsgfError(raw_name, "a constraint needs a name")
    if value == "" or (value == "*" and not negate):
        return  # ESGF: no constraint
    constraint = request.constraints.setdefault(name, Constraint())
    (constraint.exclude if negate else constraint.include).append(value)


def _integer(name: str, value: str, maximum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise EsgfError(name, f"{value!r} is not a whole number") from None
    if not 0 <= number <= maximum:
        raise EsgfError(name, f"must be between 0 and {maximum:,}, not {number}")
    return number


def _boolean(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise EsgfError(name, f"{value!r} is not true or false")
    return lowered == "true"


def _names(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _time(name: str, value: str, *, upper: bool) -> str:
    bound = normalize_time(value, upper=upper)
    if bound is None:
        raise EsgfError(name, f"{value!r} is not a date such as 2000-01-01T00:00:00Z or 2000")
    return bound
