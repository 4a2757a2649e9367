"""CMIP6 naming scheme: DRS paths, file names and ESGF ids <-> ``/CMIP6/...`` NDN names.

A file is named ``/CMIP6/<activity_id>/<institution_id>/<source_id>/<experiment_id>/<member_id>/
<table_id>/<variable_id>/<grid_label>/<version>/<filename>`` and a dataset (a DRS dataset
directory or an ESGF dataset id) by the same name without ``<filename>``. ``<filename>`` is the
canonical DRS file name ``<variable_id>_<table_id>_<source_id>_<experiment_id>_<member_id>_
<grid_label>[_<time_range>].nc``.

Accepted inputs: a DRS path under any root (``/badc/cmip6/data/CMIP6/...``, ``../CMIP6/...``,
``gs://cmip6/CMIP6/...``), a dataset directory, a bare file name, an ESGF dataset or file id
(``CMIP6.CMIP.IPSL.IPSL-CM6A-LR.historical.r1i1p1f1.Amon.tas.gr.v20180803[.<file>][|<node>]``).
The file name gives seven components; activity, institution and version come from the path or
id, else from the netCDF global attributes, else from rules (``cmip6_tables``); a name with no
known version gets the version component ``latest``.

Correction rules (each documented in docs/naming.md): ``version-missing``,
``activity-from-experiment``, ``institution-from-source``, ``activity-first-of-many``,
``source-experiment-swapped``, ``time-range-single-date``, ``filename-from-attributes``,
``attribute-mismatch``.

Error codes: ``empty``, ``not-netcdf``, ``derived-product``, ``cmip7-name``, ``not-drs``,
``not-cmip6``, ``inconsistent``, ``missing-facet``, ``invalid-attribute``, ``invalid-name``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ndnsci_translators._core import (
    Aggregation,
    Correction,
    Facets,
    Rejected,
    Translation,
    Translator,
    control_character,
    derived_keys,
    failure,
    screen_control,
)
from ndnsci_translators._time import drs_time_range, precision_pattern
from ndnsci_translators.cmip6_tables import (
    ACTIVITIES,
    EXPERIMENT_ACTIVITY,
    INSTITUTIONS,
    SOURCE_INSTITUTIONS,
    TABLES,
    TIME_PRECISION,
)
from ndnsci_translators.names import build_name, split_name

SCHEME = "cmip6"
ROOT = "CMIP6"
FACET_KEYS = (
    "mip_era",
    "activity_id",
    "institution_id",
    "source_id",
    "experiment_id",
    "member_id",
    "table_id",
    "variable_id",
    "grid_label",
    "version",
    "time_range",
)
#: version component of a name whose version is unknown (same convention as CMIP5)
LATEST = "latest"
# the attributes a non-DRS file name is rebuilt from, in the order of _DATASET_KEYS
_REBUILD_KEYS = (
    "source_id", "experiment_id", "member_id (or variant_label)", "table_id", "variable_id",
    "grid_label",
)  # fmt: skip
# what a file name says, in the order of a DRS path
_DATASET_KEYS = (
    "source_id", "experiment_id", "member_id", "table_id", "variable_id", "grid_label"
)  # fmt: skip

_ID = r"[A-Za-z0-9][A-Za-z0-9-]*"
_VARIABLE = r"[A-Za-z][A-Za-z0-9]*"
_MEMBER = r"(?:s\d{4}-)?r\d+i\d+p\d+f\d+"
# every grid_label of the CV: gm, gn, gna, gng, gnz, gr, gr1..gr9 with an optional a/g/z suffix
_GRID = r"g(?:m|n[agz]?|r[1-9]?[agz]?)"
_STEM_RE = re.compile(
    rf"({_VARIABLE})_([A-Za-z0-9]+)_({_ID})_({_ID})_({_MEMBER})_({_GRID})"
    r"(?:_(\d{4,14})(?:-(\d{4,14}))?(-clim)?)?"
)
_ESGF_ID_RE = re.compile(
    rf"CMIP6\.({_ID})\.({_ID})\.({_ID})\.({_ID})\.({_MEMBER})\.([A-Za-z0-9]+)\.({_VARIABLE})"
    rf"\.({_GRID})(?:\.(v\d{{8}}|{LATEST}))?(?:\.([^|/]+))?(?:\|[^|/]*)?"
)
_ID_RE = re.compile(_ID)
_VARIABLE_RE = re.compile(_VARIABLE)
_MEMBER_RE = re.compile(_MEMBER)
_MEMBER_SEARCH = re.compile(r"r\d+i\d+p\d+f\d+")
_GRID_RE = re.compile(_GRID)
_VERSION_RE = re.compile(rf"v\d{{8}}|{LATEST}")
_TIME_SEARCH = re.compile(r"(?<![0-9])(\d{4,14})-(\d{4,14})(-clim)?(?![0-9])")
# cmip6-ng (ETH Zurich) regrids to 2.5 degrees ('g025') or keeps the 'native' grid
_NG_GRID_RE = re.compile(r"g\d{2,3}|native")
# CMIP7 (MIP-DS7) branded variable suffix, e.g. 'ti-u-hxy-u', 'tavg-h2m-hxy-u'
_BRANDING_RE = re.compile(r"[a-z0-9]+-[a-z0-9]+-[a-z0-9]+-[a-z0-9]+")
_SIDECARS = (".md5", ".sha256", ".sha1", ".json", ".xml", ".log", ".tmp", ".part")
_NAME_PREFIXES = ("/CMIP6/", "ndn:/CMIP6/", "CMIP6.")
_UNRESERVED_NAME = re.compile(r"[A-Za-z0-9\-._~/]*")


def _failed(text: str, code: str, message: str) -> Translation:
    result = failure(text, SCHEME, code, message)
    result.facets = dict.fromkeys(FACET_KEYS)
    return result


def canonical_filename(facets: Mapping[str, str | None]) -> str:
    """The DRS file name of a file's facets (``time_range`` may be None)."""
    fields = [
        facets["variable_id"],
        facets["table_id"],
        facets["source_id"],
        facets["experiment_id"],
        facets["member_id"],
        facets["grid_label"],
    ]
    if facets["time_range"]:
        fields.append(facets["time_range"])
    return "_".join(str(f) for f in fields) + ".nc"


class _Attributes:
    """netCDF global attributes, normalised once: lower-case keys, stripped text values."""

    __slots__ = ("_values",)

    def __init__(self, attributes: Mapping[str, Any] | None) -> None:
        self._values: dict[str, str] = {}
        try:
            items = list((attributes or {}).items())
        except Exception:  # a broken mapping must not break naming: the name is enough
            return
        for key, value in items:
            try:
                if isinstance(value, bytes):
                    text = value.decode("utf-8", "replace")
                elif isinstance(value, list | tuple):
                    text = " ".join(str(v) for v in value)
                else:
                    text = str(value)
                name = str(key).lower()
            except Exception:  # hostile values (a raising __str__) count as absent
                continue
            if text.strip():
                self._values[name] = text.strip()

    def __bool__(self) -> bool:
        return bool(self._values)

    def get(self, key: str) -> str | None:
        return self._values.get(key)

    def member_id(self) -> str | None:
        """member_id, or (CMIP6 files carry no member_id) sub_experiment_id-variant_label."""
        member = self.get("member_id")
        variant = self.get("variant_label")
        if member or not variant:
            return member
        sub = self.get("sub_experiment_id")
        return f"{sub}-{variant}" if sub and sub != "none" else variant


class CMIP6Translator(Translator):
    """CMIP6 DRS paths, file names and ESGF ids <-> ``/CMIP6/...`` names."""

    scheme = SCHEME
    root = ROOT
    facet_keys = FACET_KEYS
    description = "CMIP6 DRS paths, file names and ESGF ids"
    aggregation = Aggregation(
        "variable_id",
        (
            "activity_id",
            "institution_id",
            "source_id",
            "experiment_id",
            "member_id",
            "table_id",
            "grid_label",
        ),
    )

    def guess_attributes(self, attributes: Mapping[str, Any]) -> int:
        a = _Attributes(attributes)
        return 80 if ROOT in (a.get("mip_era"), a.get("project_id")) else 0

    def guess(self, text: str) -> int:
        if text.startswith(_NAME_PREFIXES):
            return 98
        # CMIP6 members end in f<N> (forcing index); CMIP5 ensembles (r1i1p1) never do
        if _MEMBER_SEARCH.search(text) is not None:
            return 95 if ".nc" in text else 90
        if "CMIP6" in text or "cmip6" in text:
            return 60
        return 0

    def translate(self, text: str, attributes: Mapping[str, Any] | None = None) -> Translation:
        stripped = text.strip()
        if not attributes and control_character(stripped) is None:  # else: _Job screens it
            fast = _fast_path(text, stripped)
            if fast is not None:
                return fast
        return _Job(text, stripped, attributes).run()

    def reverse(self, name: str) -> Translation:
        stripped = name.strip()
        if stripped.startswith("/CMIP6/") and _UNRESERVED_NAME.fullmatch(stripped):
            parts = stripped[1:].rstrip("/").split("/")  # nothing to unescape
        else:
            try:
                parts = split_name(stripped)
            except ValueError as exc:
                return _failed(name, "invalid-name", str(exc))
        facets = _name_facets(parts)
        if isinstance(facets, str):
            return _failed(name, "invalid-name", f"{facets}: {name!r}")
        filename = parts[10] if len(parts) == 11 else None
        return Translation(
            input=name, scheme=SCHEME, name=_join_name(parts[1:]), filename=filename, facets=facets
        )


# -- fast path: a well-formed DRS file path or dataset directory, no attributes ---------------


def _fast_path(text: str, stripped: str) -> Translation | None:
    """The translation of a DRS path that needs no rule, or None to take the full path."""
    if stripped.endswith(".nc"):
        parts = stripped.rsplit("/", 10)
        components = parts[-10:]
        facets = _file_facets(components) if len(parts) >= 10 else None
    else:
        parts = stripped.rstrip("/").rsplit("/", 9)
        components = parts[-9:]
        facets = _dataset_facets(components) if len(parts) >= 9 else None
    if facets is None:
        return None
    return Translation(
        input=text,
        scheme=SCHEME,
        name=_join_name(components),
        filename=components[9] if len(components) == 10 else None,
        facets=facets,
    )


def _join_name(components: list[str]) -> str:
    """``build_name([ROOT, *components])`` for components already validated as CMIP6 ids."""
    name = "/CMIP6/" + "/".join(components)
    # validated ids are unreserved text with a letter or digit, so escaping would not change
    # them: skip it (it costs as much as the rest of the fast path); fall back if one is not
    if _UNRESERVED_NAME.fullmatch(name) is None:
        return build_name([ROOT, *components])
    return name


def _file_facets(components: list[str]) -> Facets | None:
    """Facets of a DRS file path's last 10 components, None unless canonical and consistent."""
    activity, institution, source, experiment, member, table, variable, grid, version, leaf = (
        components
    )
    match = _STEM_RE.fullmatch(leaf, 0, len(leaf) - 3)
    if (
        match is None
        or match.group(1, 2, 3, 4, 5, 6) != (variable, table, source, experiment, member, grid)
        or not _fast_common(activity, institution, table, version)
    ):
        return None
    start, end, clim = match.group(7, 8, 9)
    if start is not None and end is None:
        return None  # a single date needs a correction: full path
    time_range = None if start is None else f"{start}-{end}{clim or ''}"
    return _facets(
        (activity, institution, source, experiment, member, table, variable, grid, version,
         time_range)
    )  # fmt: skip


def _dataset_facets(components: list[str]) -> Facets | None:
    """Facets of the 9 components after /CMIP6 of a dataset name, None if they are not."""
    activity, institution, source, experiment, member, table, variable, grid, version = components
    if not _fast_common(activity, institution, table, version) or _dataset_problem(
        source, experiment, member, table, variable, grid
    ):
        return None
    return _facets(
        (activity, institution, source, experiment, member, table, variable, grid, version, None)
    )


def _fast_common(activity: str, institution: str, table: str, version: str) -> bool:
    return (
        activity in ACTIVITIES
        and table in TABLES
        and _VERSION_RE.fullmatch(version) is not None
        and _ID_RE.fullmatch(institution) is not None
    )


def _facets(values: tuple[str | None, ...]) -> Facets:
    """Facets from activity, institution, source, experiment, member, table, variable, grid,
    version and time range, in that order."""
    return {
        "mip_era": ROOT,
        "activity_id": values[0],
        "institution_id": values[1],
        "source_id": values[2],
        "experiment_id": values[3],
        "member_id": values[4],
        "table_id": values[5],
        "variable_id": values[6],
        "grid_label": values[7],
        "version": values[8],
        "time_range": values[9],
    }


# -- full path: any input, corrections, attributes ------------------------------------------


class _Job:
    """One translation through the full path: parse, check attributes, fill gaps, name."""

    def __init__(self, text: str, stripped: str, attributes: Mapping[str, Any] | None) -> None:
        self.text = text
        self.src = stripped
        self.attrs = _Attributes(attributes)
        self.derived = derived_keys(attributes)
        self.facets: Facets = _facets((None,) * 10)
        self.corrections: list[Correction] = []
        self.leaf: str | None = None

    def run(self) -> Translation:
        try:
            self._parse()
            self._check_attributes()
            self._fill_gaps()
        except Rejected as exc:
            return _failed(self.text, exc.code, exc.message)
        return self._result()

    def correct(self, rule: str, message: str) -> None:
        self.corrections.append(Correction(rule, message))

    # parsing ---------------------------------------------------------------------------------

    def _parse(self) -> None:
        if not self.src:
            raise Rejected("empty", "nothing to translate: give a CMIP6 file name, path or id")
        screen_control(self.src, "file names and paths")
        for key in ("mip_era", "project_id"):  # CMIP5 files say project_id="CMIP5"
            era = self.attrs.get(key)
            if era is not None and era != ROOT:
                raise Rejected(
                    "not-cmip6", f"the global attribute {key} is {era!r}, not a CMIP6 file"
                )
        if "/" not in self.src and self.src.startswith("CMIP6."):
            self._parse_esgf_id(self.src)
            return
        dirs, leaf = _split_path(self.src)
        if leaf is None:
            self._parse_dataset_dirs(dirs)
        else:
            self._parse_filename(leaf)
            self._parse_file_dirs(dirs)

    def _parse_esgf_id(self, text: str) -> None:
        match = _ESGF_ID_RE.fullmatch(text)
        if match is None or match.group(1) not in ACTIVITIES or match.group(6) not in TABLES:
            raise Rejected(
                "not-drs",
                "not an ESGF CMIP6 id: expected CMIP6.<activity_id>.<institution_id>.<source_id>."
                "<experiment_id>.<member_id>.<table_id>.<variable_id>.<grid_label>[.<version>]"
                f"[.<file name>], got {text!r}",
            )
        from_id = match.group(3, 4, 5, 6, 7, 8)
        if match.group(10) is not None:
            self._parse_filename(match.group(10))
            self._require_same(from_id, "the ESGF id")
        else:
            self._set_dataset(*from_id)
        self.facets["activity_id"], self.facets["institution_id"] = match.group(1, 2)
        self.facets["version"] = match.group(9)

    def _parse_filename(self, leaf: str) -> None:
        if not leaf.endswith(".nc"):
            raise Rejected("not-netcdf", _not_netcdf_message(leaf))
        self.leaf = leaf
        stem = leaf[:-3]
        match = _STEM_RE.fullmatch(stem)
        if match is None or match.group(2) not in TABLES:
            self._parse_odd_stem(stem)
            return
        self._set_dataset(*match.group(3, 4, 5, 2, 1, 6))
        start, end, clim = match.group(7, 8, 9)
        if start is not None and end is None:
            end = start
            self.correct(
                "time-range-single-date",
                f"'{start}' -> '{start}-{end}': a CMIP6 time range names its first and last date",
            )
        if start is not None:
            self.facets["time_range"] = f"{start}-{end}{clim or ''}"

    def _set_dataset(self, *values: str | None) -> None:
        """source, experiment, member, table, variable, grid (the order of a DRS path)."""
        self.facets.update(zip(_DATASET_KEYS, values, strict=True))

    def _parse_odd_stem(self, stem: str) -> None:
        tokens = stem.split("_")
        _reject_other_schemes(tokens)
        reason = _why_not_drs(tokens)
        missing = self._filename_from_attributes(stem, reason)
        if missing is not None:
            hint = f" (no {missing} attribute to rebuild it from)" if self.attrs else ""
            raise Rejected("not-drs", f"{self.leaf!r} is not a CMIP6 DRS file name: {reason}{hint}")

    def _filename_from_attributes(self, stem: str, reason: str) -> str | None:
        """Rebuild the file name from the attributes; None when done, else the first attribute
        missing (for the error message)."""
        a = self.attrs
        values = (
            a.get("source_id"),
            a.get("experiment_id"),
            a.member_id(),
            a.get("table_id"),
            a.get("variable_id"),
            a.get("grid_label"),
        )
        for key, value in zip(_REBUILD_KEYS, values, strict=True):
            if value is None:
                return key
        problem = _dataset_problem(*values)
        if problem is not None:
            raise Rejected("invalid-attribute", f"global attributes: {problem}")
        self._set_dataset(*values)
        time_range, source, from_axis = self._attribute_time_range(stem)
        self.facets["time_range"] = time_range
        self.correct(
            "filename-from-attributes",
            f"'{self.leaf}' -> '{canonical_filename(self.facets)}': {reason}; "
            f"rebuilt from the global attributes{source}",
        )
        if from_axis is not None:
            self.corrections.append(from_axis)
        return None

    def _attribute_time_range(self, stem: str) -> tuple[str | None, str, Correction | None]:
        """From time_coverage_start/end at the precision of the frequency attribute (the same
        rule as CMIP5), else a range the old name carries; fx files have none."""
        a = self.attrs
        frequency = a.get("frequency")
        if frequency == "fx":
            return None, "", None
        precision = TIME_PRECISION.get(frequency or "")
        start, end = a.get("time_coverage_start"), a.get("time_coverage_end")
        if precision is not None and start is not None and end is not None:
            time_range = drs_time_range(start, end, *precision)
            if time_range is not None and "time_coverage_start" in self.derived:
                from_axis = Correction(
                    "time-range-from-axis",
                    f"time range {time_range!r} from the time axis: first and last records "
                    f"{start} and {end}, written {precision_pattern(precision[0])} as the DRS "
                    f"sets for frequency {frequency!r} (the file states no "
                    "time_coverage_start/end)",
                )
                return time_range, " (time range from the time axis)", from_axis
            if time_range is not None:
                source = " (time range from time_coverage_start/time_coverage_end)"
                return time_range, source, None
        found = _TIME_SEARCH.search(stem)
        if found is None:
            return None, "", None
        return f"{found.group(1)}-{found.group(2)}{found.group(3) or ''}", "", None

    def _parse_dataset_dirs(self, dirs: list[str]) -> None:
        k = _rindex_member(dirs)
        if k is None or k < 2 or k + 3 >= len(dirs):
            raise Rejected(
                "not-drs",
                "not a CMIP6 file or dataset directory: expected .../<activity_id>/"
                "<institution_id>/<source_id>/<experiment_id>/<member_id>/<table_id>/"
                f"<variable_id>/<grid_label>[/<version>] or a file name ending in .nc, "
                f"got {self.src!r}",
            )
        source, experiment, member, table, variable, grid = (
            *dirs[k - 2 : k + 1],
            *dirs[k + 1 : k + 4],
        )
        if _dataset_problem(source, experiment, member, table, variable, grid) is not None:
            raise Rejected(
                "not-drs",
                f"{'/'.join(dirs[k - 2 : k + 4])!r} is not <source_id>/<experiment_id>/"
                "<member_id>/<table_id>/<variable_id>/<grid_label> of the CMIP6 DRS",
            )
        self._set_dataset(source, experiment, member, table, variable, grid)
        self._take_path_facets(dirs, k)

    def _parse_file_dirs(self, dirs: list[str]) -> None:
        f = self.facets
        if dirs and _VERSION_RE.fullmatch(dirs[-1]):
            f["version"] = dirs[-1]  # a version directory holds the file, whatever the layout
        k = _rindex(dirs, f["member_id"])
        if k is None or k < 2:
            self._swap_by_rules()
            return
        if dirs[k - 2 : k] == [f["experiment_id"], f["source_id"]]:
            self._swap("the path has them the other way round")
        elif dirs[k - 2 : k] != [f["source_id"], f["experiment_id"]]:
            self._swap_by_rules()
            return
        tail = dirs[k + 1 : k + 4]
        expected = [f["table_id"], f["variable_id"], f["grid_label"]][: len(tail)]
        # a table directory below the member says the tree is a DRS tree: it must agree
        if tail and tail[0] in TABLES and tail != expected:
            raise Rejected(
                "inconsistent",
                f"the path says {'/'.join(tail)!r} but the file name says "
                f"{'/'.join(str(e) for e in expected)!r}: the file is filed in the wrong "
                "directory; move it or translate the file name alone",
            )
        self._take_path_facets(dirs, k)

    def _take_path_facets(self, dirs: list[str], k: int) -> None:
        """activity, institution and version around the member directory at ``dirs[k]``."""
        activity = dirs[k - 4] if k >= 4 else None
        institution = dirs[k - 3] if k >= 3 else None
        if activity in ACTIVITIES and institution and _ID_RE.fullmatch(institution):
            self.facets["activity_id"] = activity
            self.facets["institution_id"] = institution
        elif institution in INSTITUTIONS:
            self.facets["institution_id"] = institution
        version = dirs[k + 4] if k + 4 < len(dirs) else None
        if version is not None and _VERSION_RE.fullmatch(version):
            self.facets["version"] = version

    def _require_same(self, values: tuple[str | None, ...], where: str) -> None:
        for key, value in zip(_DATASET_KEYS, values, strict=True):
            if self.facets[key] != value:
                raise Rejected(
                    "inconsistent",
                    f"{where} says {key} {value!r} but the file name says {self.facets[key]!r}",
                )

    # source/experiment order ---------------------------------------------------------------

    def _swap_by_rules(self) -> None:
        f = self.facets
        source, experiment = f["source_id"], f["experiment_id"]
        a = self.attrs
        if (a.get("source_id"), a.get("experiment_id")) == (experiment, source):
            self._swap("the global attributes have them the other way round")
        elif (
            source not in SOURCE_INSTITUTIONS
            and source in EXPERIMENT_ACTIVITY
            and experiment in SOURCE_INSTITUTIONS
        ):
            self._swap(f"{source!r} is an experiment and {experiment!r} a model")

    def _swap(self, why: str) -> None:
        f = self.facets
        before = f"{f['source_id']}_{f['experiment_id']}"
        f["source_id"], f["experiment_id"] = f["experiment_id"], f["source_id"]
        after = f"{f['source_id']}_{f['experiment_id']}"
        self.correct(
            "source-experiment-swapped",
            f"'{before}' -> '{after}': the file name has experiment and source in the wrong "
            f"order ({why})",
        )

    # attributes and rules ------------------------------------------------------------------

    def _check_attributes(self) -> None:
        a = self.attrs
        for key in ("source_id", "experiment_id", "table_id", "variable_id", "grid_label"):
            self._compare(key, a.get(key))
        self._compare("member_id", a.member_id())
        self._compare("institution_id", a.get("institution_id"))
        activities = (a.get("activity_id") or "").split()
        known = self.facets["activity_id"]
        if activities and known is not None and known not in activities:
            self._mismatch("activity_id", " ".join(activities), known)

    def _compare(self, key: str, attribute: str | None) -> None:
        known = self.facets[key]
        if attribute is not None and known is not None and attribute != known:
            self._mismatch(key, attribute, known)

    def _mismatch(self, key: str, attribute: str, known: str) -> None:
        self.correct(
            "attribute-mismatch",
            f"global attribute {key}={attribute!r} disagrees with {known!r} from the "
            "name; the name is kept",
        )

    def _fill_gaps(self) -> None:
        f = self.facets
        if f["activity_id"] is None:
            f["activity_id"] = self._activity()
        if f["institution_id"] is None:
            f["institution_id"] = self._institution()
        if f["version"] is None:
            f["version"] = self._version()

    def _activity(self) -> str:
        experiment = self.facets["experiment_id"]
        activities = (self.attrs.get("activity_id") or "").split()
        if activities:
            if activities[0] not in ACTIVITIES:
                raise Rejected(
                    "invalid-attribute",
                    f"global attribute activity_id={activities[0]!r} is not a CMIP6 activity",
                )
            if len(activities) > 1:
                self.correct(
                    "activity-first-of-many",
                    f"activity_id {' '.join(activities)!r} -> {activities[0]!r}: a name has "
                    "one activity, the first listed",
                )
            return activities[0]
        activity = EXPERIMENT_ACTIVITY.get(str(experiment))
        if activity is None:
            raise Rejected(
                "missing-facet",
                f"activity_id unknown: experiment {experiment!r} is not in the rule table and "
                "neither a DRS path nor the global attributes give it; translate the full DRS "
                "path or pass the file's attributes (ndnsci translate --metadata)",
            )
        self.correct("activity-from-experiment", f"activity_id {activity!r} from {experiment!r}")
        return activity

    def _institution(self) -> str:
        source = self.facets["source_id"]
        attribute = self.attrs.get("institution_id")
        if attribute is not None:
            if _ID_RE.fullmatch(attribute) is None:
                raise Rejected(
                    "invalid-attribute",
                    f"global attribute institution_id={attribute!r} is not a CMIP6 identifier",
                )
            return attribute
        institutions = SOURCE_INSTITUTIONS.get(str(source))
        if institutions is None:
            raise Rejected(
                "missing-facet",
                f"institution_id unknown: model {source!r} is not in the rule table and "
                "neither a DRS path nor the global attributes give it; translate the full DRS "
                "path or pass the file's attributes (ndnsci translate --metadata)",
            )
        others = f" (also published by {', '.join(institutions[1:])})" if institutions[1:] else ""
        self.correct(
            "institution-from-source",
            f"institution_id {institutions[0]!r} from {source!r}{others}",
        )
        return institutions[0]

    def _version(self) -> str:
        attribute = self.attrs.get("version")
        if attribute is not None:
            version = f"v{attribute}" if attribute.isdigit() else attribute
            if _VERSION_RE.fullmatch(version) is None:
                raise Rejected(
                    "invalid-attribute",
                    f"global attribute version={attribute!r} is not vYYYYMMDD",
                )
            return version
        self.correct(
            "version-missing",
            f"no version (vYYYYMMDD) in the path, id or attributes: version {LATEST!r}",
        )
        return LATEST

    def _result(self) -> Translation:
        f = self.facets
        components = [str(f[k]) for k in FACET_KEYS[1:10]]
        filename = None
        if self.leaf is not None:
            filename = canonical_filename(f)
            components.append(filename)
        return Translation(
            input=self.text,
            scheme=SCHEME,
            name=_join_name(components),
            filename=filename,
            facets=f,
            corrections=self.corrections,
        )


# -- helpers ---------------------------------------------------------------------------------


def _split_path(text: str) -> tuple[list[str], str | None]:
    """Directories and file name of a path or URL; file name None for a directory."""
    if "://" in text:
        text = text.split("?", 1)[0].split("#", 1)[0]
    elif "\\" in text and "/" not in text:
        text = text.replace("\\", "/")  # a Windows path
    is_dir = text.endswith("/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts:
        return [], None
    if is_dir or "." not in parts[-1]:
        return parts, None
    return parts[:-1], parts[-1]


def _rindex(items: list[str], value: str | None) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        if items[i] == value:
            return i
    return None


def _rindex_member(dirs: list[str]) -> int | None:
    for i in range(len(dirs) - 1, -1, -1):
        if _MEMBER_RE.fullmatch(dirs[i]):
            return i
    return None


def _dataset_problem(*values: str | None) -> str | None:
    """Why source, experiment, member, table, variable, grid are not a CMIP6 dataset, or None."""
    source, experiment, member, table, variable, grid = values
    checks = (
        ("source_id", source, _ID_RE.fullmatch(source or "")),
        ("experiment_id", experiment, _ID_RE.fullmatch(experiment or "")),
        ("member_id", member, _MEMBER_RE.fullmatch(member or "")),
        ("table_id", table, table in TABLES),
        ("variable_id", variable, _VARIABLE_RE.fullmatch(variable or "")),
        ("grid_label", grid, _GRID_RE.fullmatch(grid or "")),
    )
    for key, value, valid in checks:
        if not valid:
            return f"{key} {value!r} is not a valid CMIP6 {key}"
    return None


def _not_netcdf_message(leaf: str) -> str:
    if ".nc." in leaf or leaf.endswith(_SIDECARS):
        base = leaf[: leaf.rindex(".nc") + 3] if ".nc" in leaf else leaf
        return (
            f"{leaf!r} is a sidecar file (checksum, metadata), not a netCDF file; "
            f"translate {base!r} itself"
        )
    return f"{leaf!r} is not a netCDF file: CMIP6 file names end in .nc"


def _reject_other_schemes(tokens: list[str]) -> None:
    """Raise for names of other conventions that only look like CMIP6 file names."""
    if tokens[0] in ("CMIP6", "CMIP5", "CMIP"):
        raise Rejected(
            "derived-product",
            "an ESMValTool/ESMValCore output name (<project>_<dataset>_<mip>_<exp>_<ensemble>_"
            "<variable>_...): derived data, not a CMIP6 file",
        )
    if "glb" in tokens or any(_BRANDING_RE.fullmatch(t) for t in tokens):
        raise Rejected(
            "cmip7-name",
            "a CMIP7 (MIP-DS7) file name with branded variable or region, not CMIP6; "
            "it needs a CMIP7 naming scheme",
        )
    k = _rindex_member(tokens)
    if k is not None and k + 1 < len(tokens) and _NG_GRID_RE.fullmatch(tokens[k + 1]):
        raise Rejected(
            "derived-product",
            f"a cmip6-ng (ETH Zurich next-generation archive) file: table {tokens[1]!r}, grid "
            f"{tokens[k + 1]!r}; derived (regridded, aggregated) data, not a CMIP6 file",
        )


def _why_not_drs(tokens: list[str]) -> str:
    """What first breaks the <var>_<table>_<source>_<exp>_<member>_<grid>[_<time>] template."""
    k = _rindex_member(tokens)
    if k is None:
        return "no member_id (r<N>i<N>p<N>f<N>, optionally s<YYYY>- before it)"
    member = tokens[k]
    if k != 4 or not all(tokens[:4]):
        return (
            f"expected <variable_id>_<table_id>_<source_id>_<experiment_id> before member_id "
            f"{member!r}, got {'_'.join(tokens[:k])!r}"
        )
    if tokens[1] not in TABLES:
        return f"table_id {tokens[1]!r} is not a CMIP6 MIP table"
    if k + 1 >= len(tokens) or _GRID_RE.fullmatch(tokens[k + 1]) is None:
        return f"no grid label (gn, gr, gr1, gm, ...) after member_id {member!r}"
    problem = _dataset_problem(tokens[2], tokens[3], member, tokens[1], tokens[0], tokens[5])
    if problem is not None:
        return problem
    rest = tokens[k + 2 :]
    if len(rest) > 1 and rest[0].replace("-", "").isdigit():
        return f"unexpected {'_' + '_'.join(rest[1:])!r} after the time range {rest[0]!r}"
    return f"{'_'.join(rest)!r} after the grid label is not a time range (N1-N2[-clim])"


def _name_facets(parts: list[str]) -> Facets | str:
    """The facets of a CMIP6 name's components, or why they are not a CMIP6 name."""
    if len(parts) not in (10, 11) or parts[0] != ROOT:
        return f"a CMIP6 name is /{ROOT}/ followed by 9 dataset components and a file name"
    if len(parts) == 10:
        facets = _dataset_facets(parts[1:])
        return "its components are not a CMIP6 DRS dataset" if facets is None else facets
    leaf = parts[10]
    facets = _file_facets(parts[1:]) if leaf.endswith(".nc") else None
    if facets is None:
        return f"{leaf!r} is not the canonical CMIP6 file name of a CMIP6 DRS dataset"
    return facets
