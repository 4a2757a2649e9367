"""ESGF's words for the catalog's records: projects, facet names, versions, dataset and file ids.

- A naming scheme is an ESGF project: ``cmip5`` is ``CMIP5``, ``cmip6`` is ``CMIP6``, ``cms``
  is ``CMS`` (another scheme: its name in capitals).
- Facet names are the catalog's, except the two CMIP5 ones ESGF spells differently:
  ``time_frequency`` (catalog ``frequency``) and ``cmor_table`` (catalog ``table``).
- Versions: ESGF writes ``20110823`` where the DRS (and the catalog) write ``v20110823``; both
  spellings are accepted in constraints, ESGF's is answered.
- Datasets: the files sharing the values of their scheme's :data:`DATASET_FACETS`. The id is
  ESGF's: the project prefix and those values joined by dots
  (``cmip5.output1.MOHC.HadCM3.historical.mon.atmos.Amon.r1i1p1.v20110823``); a file is
  ``<dataset id>.<file name>``. A file lacking one of those facets (or of a scheme without a
  rule) is a dataset of its own, and both ids are its NDN name.
- ``id`` is ``<instance_id>|<data_node>``; ``master_id`` is the instance id without the version.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

PROJECTS = {"cmip5": "CMIP5", "cmip6": "CMIP6", "cms": "CMS"}
#: ESGF facet name -> catalog facet key, where they differ
CATALOG_KEYS = {"time_frequency": "frequency", "cmor_table": "table"}
ESGF_NAMES = {key: name for name, key in CATALOG_KEYS.items()}
VERSION = "version"


@dataclass(frozen=True)
class DatasetRule:
    """How a scheme's files form datasets: the id's first part, then these facets' values."""

    prefix: str
    facets: tuple[str, ...]

    @property
    def master_facets(self) -> tuple[str, ...]:
        return tuple(key for key in self.facets if key != VERSION)


DATASET_FACETS = {
    "cmip5": DatasetRule(
        "cmip5",
        (
            "product",
            "institute",
            "model",
            "experiment",
            "frequency",
            "realm",
            "table",
            "ensemble",
            VERSION,
        ),
    ),
    "cmip6": DatasetRule(
        "CMIP6",
        (
            "activity_id",
            "institution_id",
            "source_id",
            "experiment_id",
            "member_id",
            "table_id",
            "variable_id",
            "grid_label",
            VERSION,
        ),
    ),
    "cms": DatasetRule("CMS", ("area", "era", "primary_dataset", "tier", "processing")),
}
#: ``facets=*``: the facets ESGF index nodes count for these projects, in ESGF's names
STAR_FACETS = (
    "project",
    # CMIP5
    "product", "institute", "model", "experiment", "time_frequency", "realm", "cmor_table",
    "ensemble", "variable", VERSION,
    # CMIP6
    "mip_era", "activity_id", "institution_id", "source_id", "experiment_id", "member_id",
    "table_id", "variable_id", "grid_label",
    # CMS
    "area", "era", "primary_dataset", "tier", "processing",
)  # fmt: skip
#: CMIP6 index records carry these templates; intake-esgf builds ids and paths from them
CMIP6_TEMPLATES = {
    "dataset_id_template_": [
        "%(mip_era)s.%(activity_drs)s.%(institution_id)s.%(source_id)s.%(experiment_id)s."
        "%(member_id)s.%(table_id)s.%(variable_id)s.%(grid_label)s"
    ],
    "directory_format_template_": [
        "%(root)s/%(mip_era)s/%(activity_drs)s/%(institution_id)s/%(source_id)s/"
        "%(experiment_id)s/%(member_id)s/%(table_id)s/%(variable_id)s/%(grid_label)s/%(version)s"
    ],
}


def project(scheme: str) -> str:
    return PROJECTS.get(scheme, scheme.upper())


def catalog_key(name: str) -> str:
    return CATALOG_KEYS.get(name, name)


def esgf_name(key: str) -> str:
    return ESGF_NAMES.get(key, key)


@functools.lru_cache(maxsize=65_536)
def esgf_value(key: str, value: str) -> str:
    """A catalog facet value as ESGF writes it (versions without their ``v``)."""
    if key == VERSION and value[:1] == "v" and value[1:].isdigit():
        return value[1:]
    return value


def catalog_values(key: str, value: str) -> list[str]:
    """The catalog values an ESGF constraint value stands for."""
    if key == VERSION and value.isdigit():
        return [value, "v" + value]
    return [value]


# --- ids ------------------------------------------------------------------------------------


def dataset_instance(scheme: str, facets: Mapping[str, str | None], name: str) -> str:
    """The dataset instance id of a file (its NDN name when it has no dataset of its own)."""
    rule = DATASET_FACETS.get(scheme)
    if rule is None:
        return name
    values = [facets.get(key) for key in rule.facets]
    if not all(values):
        return name
    return ".".join([rule.prefix, *(str(v) for v in values)])


def master_of(scheme: str, instance: str) -> str:
    """A dataset instance id without its version."""
    rule = DATASET_FACETS.get(scheme)
    if rule is None or VERSION not in rule.facets or instance.startswith("/"):
        return instance
    parts = instance.split(".")
    del parts[1 + rule.facets.index(VERSION)]
    return ".".join(parts)


def file_instance(dataset: str, filename: str) -> str:
    """A file's instance id: ``<dataset>.<file name>``, or its NDN name (``dataset`` is one)."""
    return dataset if dataset.startswith("/") else f"{dataset}.{filename}"


@dataclass(frozen=True)
class ParsedId:
    """What an ESGF dataset or file id says: a scheme and facet values, or an NDN name."""

    scheme: str | None = None
    facets: tuple[tuple[str, str], ...] = ()
    #: the file name after the dataset part (file ids)
    filename: str | None = None
    #: the NDN name of a file that is a dataset of its own
    name: str | None = None


def parse_id(text: str, *, master: bool = False, file: bool = False) -> ParsedId | None:
    """A dataset id (``file``: a file id) as published here, ``|<data node>`` already cut.

    ``master``: without the version. None when no dataset of this catalog can have it.
    """
    if text.startswith("/"):
        return ParsedId(name=text)
    prefix, _, rest = text.partition(".")
    for scheme, rule in DATASET_FACETS.items():
        if prefix != rule.prefix:
            continue
        keys = rule.master_facets if master else rule.facets
        parts = rest.split(".", len(keys)) if file else rest.split(".")
        if file and len(parts) == len(keys) + 1:
            filename: str | None = parts.pop()
        elif not file and len(parts) == len(keys):
            filename = None
        else:
            return None
        if not all(parts):
            return None
        return ParsedId(scheme, tuple(zip(keys, parts, strict=True)), filename)
    return None


def node_part(text: str) -> tuple[str, str | None]:
    """``'<instance>|<node>'`` -> (instance, node); (text, None) without a node."""
    instance, bar, node = text.partition("|")
    return (instance, node) if bar else (text, None)
