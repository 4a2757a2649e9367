"""Free text over names, facet values and selected netCDF attributes, the same on both backends.

Documents and queries are tokenised here (lower-case runs of letters and digits), so SQLite FTS5
and PostgreSQL see exactly the same tokens: on SQLite the FTS5 table splits on the spaces we
join with; on PostgreSQL we build the ``tsvector`` and ``tsquery`` literals ourselves instead of
letting its text parser split ``0e031c16`` as a number. A query word such as ``MPI-ESM-LR``
becomes the phrase ``mpi esm lr``; words are ANDed; a trailing ``*`` matches a prefix.
User text only ever reaches the database as a bound parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import text
from sqlalchemy.sql.elements import TextClause

_TOKEN = re.compile(r"[^\W_]+")
#: PostgreSQL positions stop at 16383; a longer document adds nothing a person searches for
MAX_TOKENS = 2000
#: netCDF global attributes worth finding by free text
TEXT_ATTRIBUTES = (
    "title",
    "source",
    "institution",
    "experiment",
    "model_id",
    "source_id",
    "experiment_id",
    "project_id",
    "product",
    "modeling_realm",
    "realm",
    "frequency",
    "comment",
)
#: variable attributes worth finding (``surface upward latent heat flux``)
VARIABLE_ATTRIBUTES = ("long_name", "standard_name")


#: ASCII bytes -> themselves lower-cased if a letter or digit, else a space
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)


def tokens(text_: str) -> list[str]:
    """Lower-case runs of letters and digits (the regular expression ``_TOKEN``)."""
    if text_.isascii():  # the common case, ~4x faster: one table lookup per character
        return text_.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    return _TOKEN.findall(text_.lower())


def document(
    components: Sequence[str],
    facets: Mapping[str, str | None],
    metadata: Mapping[str, Any] | None,
    original: str | None = None,
    original_path: str | None = None,
) -> str:
    """The searchable text of one file: name components, facet values, the original file name
    and the directories of its original path, selected attributes.

    The SQLite table keeps no copy of it: a replaced or retracted file's row is removed by
    making its document again from the published row (``ingest._old_document``), which must
    give exactly what was inserted. A change here needs a migration that rebuilds
    ``files_fts`` (docs/catalog.md, "Schema")."""
    found = dict.fromkeys([*components, *facets.values()])
    found.pop(None, None)  # a facet without a value
    sources = cast("dict[str, None]", found)
    if original:
        sources.setdefault(original)
    if original_path:
        for part in original_path.split("/"):
            sources.setdefault(part)
    if metadata:
        for value in _attribute_texts(metadata):
            sources.setdefault(value)
    # one pass over the joined sources (a space separates them: never part of a token)
    return " ".join(tokens(" ".join(sources))[:MAX_TOKENS])


def _attribute_texts(metadata: Mapping[str, Any]) -> Iterable[str]:
    """Strings of the well-known attributes wherever the extractor put them (read defensively)."""
    for holder in (metadata, metadata.get("global_attributes"), metadata.get("attributes")):
        if isinstance(holder, Mapping):
            for key in TEXT_ATTRIBUTES:
                value = holder.get(key)
                if isinstance(value, str):
                    yield value[:500]
    variables = metadata.get("variables")
    items: list[Any] = []
    if isinstance(variables, Mapping):
        items = list(variables.values())
    elif isinstance(variables, list):
        items = variables
    if items:
        for variable in items[:200]:
            attrs = variable.get("attributes", variable) if isinstance(variable, Mapping) else None
            if isinstance(attrs, Mapping):
                for key in VARIABLE_ATTRIBUTES:
                    value = attrs.get(key)
                    if isinstance(value, str):
                        yield value[:200]


class QueryError(ValueError):
    """The free-text query has nothing to search for."""


def parse_query(q: str) -> list[tuple[list[str], bool]]:
    """``'MPI-ESM-LR tas*'`` -> ``[(['mpi','esm','lr'], False), (['tas'], True)]``."""
    terms = []
    for word in q.split():
        words = tokens(word)
        if words:
            terms.append((words, word.endswith("*")))
    if not terms:
        raise QueryError(f"q={q!r} has no letters or digits to search for")
    return terms[:32]


def _sqlite_query(terms: list[tuple[list[str], bool]]) -> str:
    return " AND ".join(
        f'"{" ".join(words)}"' + (" *" if prefix else "") for words, prefix in terms
    )


def _pg_query(terms: list[tuple[list[str], bool]]) -> str:
    parts = []
    for words, prefix in terms:
        quoted = [f"'{w}'" for w in words]
        if prefix:
            quoted[-1] += ":*"
        parts.append("(" + " <-> ".join(quoted) + ")")
    return " & ".join(parts)


def pg_vector(doc: str) -> str:
    return " ".join(f"'{w}':{i}" for i, w in enumerate(doc.split(), start=1))


def matching_sql(dialect: str, q: str) -> tuple[str, str]:
    """A ``SELECT`` of the ids of files matching ``q`` in the driver's parameter style, and its
    one parameter (raises QueryError)."""
    terms = parse_query(q)
    if dialect == "sqlite":
        return "SELECT rowid FROM files_fts WHERE files_fts MATCH ?", _sqlite_query(terms)
    return (
        "SELECT file_id FROM files_fts WHERE doc @@ CAST(%s AS tsquery)",
        _pg_query(terms),
    )


def matching_list_sql(dialect: str, q: str) -> tuple[str, str]:
    """:func:`matching_sql` aggregated: one row, one column, the ids as one string of decimal
    numbers separated by spaces (NULL: none), and its one parameter (raises QueryError).

    A common word matches millions of files at 10M: one Python row per id cost ~6 µs (3 s for
    the 450,000 ids of ``historical`` at 4.5M files, load 15), the string ~0.1 µs per id and is
    parsed by numpy (``np.fromstring(joined, sep=" ")``). Measured in docs/catalog.md ("10M")."""
    terms = parse_query(q)
    if dialect == "sqlite":
        return (
            "SELECT group_concat(rowid, ' ') FROM files_fts WHERE files_fts MATCH ?",
            _sqlite_query(terms),
        )
    return (
        "SELECT string_agg(file_id::text, ' ') FROM files_fts WHERE doc @@ CAST(%s AS tsquery)",
        _pg_query(terms),
    )


def matching_ids(dialect: str, q: str) -> TextClause:
    """:func:`matching_sql` as a SQLAlchemy text clause (bound parameter ``fts_q``)."""
    sql, param = matching_sql(dialect, q)
    return text(sql.replace("?", ":fts_q").replace("%s", ":fts_q")).bindparams(fts_q=param)
