"""CMIP5 naming scheme: DRS file names, paths and ESGF ids <-> ``/CMIP5/...`` NDN names.

The NDN name follows the CMIP5 DRS directory layout (docs/naming.md, section "CMIP5")::

    /CMIP5/<product>/<institute>/<model>/<experiment>/<frequency>/<realm>/<table>/<ensemble>
          /<version>/<variable>/<variable>_<table>_<model>_<experiment>_<ensemble>[_<time>][_<geo>].nc

Translation runs in two tiers. One regular expression recognises a DRS path whose directories
agree with its file name, in the layouts whole archives use (DRS, GLADE without the table
directory, LLNL css02 and drslib storage): the common case, answered with one regex search.
Everything else (bare file names, ESGF ids, other layouts, disagreements, attributes) goes
through the general parser, which reads the file name first (it travels with the data, so it
wins over directories), then the directories around it, then the netCDF global attributes,
then rules, and records every correction it applies. A file whose name is not a DRS name is
named from its attributes when they give every file-name component
(``filename-from-attributes``). Both tiers give the same result for an input the first one
accepts (tests/translators/test_cmip5.py checks it on the whole corpus).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ndnsci_translators._core import (
    DERIVED_ATTRIBUTES,
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
from ndnsci_translators.cmip5_tables import (
    CMIP6_ONLY_TABLES,
    EXPERIMENTS,
    FREQUENCIES,
    INSTITUTES,
    MODEL_INSTITUTES,
    PRODUCTS,
    REALMS,
    TABLES,
    TIME_PRECISION,
    VARIABLE_REALMS,
    by_lower,
)
from ndnsci_translators.names import build_name, split_name

SCHEME = "cmip5"
ROOT = "CMIP5"
FACET_KEYS = (
    "activity",
    "product",
    "institute",
    "model",
    "experiment",
    "frequency",
    "realm",
    "table",
    "ensemble",
    "version",
    "variable",
    "time_range",
    "geo",
)
#: product of a file whose path and attributes do not say (registry doctest relies on it)
DEFAULT_PRODUCT = "output1"
#: version component of a file whose path carries no version: the newest one
DEFAULT_VERSION = "latest"
#: longer inputs are refused before parsing: no real path is longer (PATH_MAX is 4096)
MAX_INPUT = 4096
#: digits of a DRS time point: yyyy, yyyymm, yyyymmdd, yyyymmddhh, yyyymmddhhmm, yyyymmddhhmmss
_PRECISIONS = frozenset((4, 6, 8, 10, 12, 14))
_COMPONENTS = 12  # ROOT + 10 DRS components + file name

_TABLE_BY_LOWER = by_lower(TABLES)
_MODEL_BY_LOWER = by_lower(MODEL_INSTITUTES)
_EXPERIMENT_BY_LOWER = by_lower(EXPERIMENTS)
_INSTITUTE_BY_LOWER = by_lower(INSTITUTES)
_FREQUENCY_BY_LOWER = by_lower(FREQUENCIES)
_REALM_BY_LOWER = by_lower(REALMS)
_PRODUCT_BY_LOWER = by_lower(PRODUCTS)

# Tier 1: a DRS path whose directories agree with its file name, in the layouts real archives
# use for whole trees: the DRS (<table>/<ensemble>/<version>/<variable>), GLADE (no table
# directory), LLNL css02 (<ensemble>/<variable>/<version>) and drslib storage
# (<ensemble>/files/<variable>_<yyyymmdd>). Back-references tie model (\3), experiment (\4) and
# ensemble (\8) to the file name; variable, table and product boundary are checked after the
# match. The literal "output" start lets the regex engine scan for candidates quickly.
_FAST = re.compile(
    r"(output[12]?)/"  # 1 product
    r"([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9][A-Za-z0-9-]*)/"  # 2-4
    r"(3hr|6hr|day|fx|mon|monClim|subhr|yr)/"  # 5 frequency
    r"(aerosol|atmos|atmosChem|land|landIce|ocean|ocnBgchem|seaIce)/"  # 6 realm
    r"(?:([A-Za-z0-9]+)/)?"  # 7 table directory
    r"(r\d+i\d+p\d+)/"  # 8 ensemble
    r"(?:(v\d+|latest)/([A-Za-z0-9]+)"  # 9 version, 10 variable
    r"|([A-Za-z0-9]+)/(v\d+|\d+)"  # 11 variable, 12 version
    r"|files/([A-Za-z0-9]+)_(\d{8}))/"  # 13 variable, 14 drslib date
    r"(([A-Za-z0-9]+)_([A-Za-z0-9]+)_\3_\4_\8(?:_(\d+)-(\d+)(-clim)?)?\.nc)\Z"  # 15 file, 16-20
)

_UNRESERVED_NAME = re.compile(r"[A-Za-z0-9\-._~/]*")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_ENSEMBLE = re.compile(r"r\d+i\d+p\d+", re.IGNORECASE)
_CMIP6_MEMBER = re.compile(r"(?:s\d{4}-)?r\d+i\d+p\d+f\d+", re.IGNORECASE)
_FUSED_ENSEMBLE = re.compile(r".+r\d+i\d+p\d+", re.IGNORECASE)
_START_DATE = re.compile(r"S\d{8}")
_GRID_LABEL = re.compile(r"g(?:n|m|r\d?)[azg]?")
_TIME = re.compile(r"(\d+)(?:-(\d+))?(-clim)?")
_TIME_SEARCH = re.compile(r"(?<![0-9])(\d{4,14})-(\d{4,14})(-clim)?(?![0-9])")
_GEO = re.compile(r"g-[A-Za-z0-9.\-]+")
_VERSION_DIR = re.compile(r"[vV]\d+|latest|\d+")
_DRSLIB_VERSION = re.compile(r"([A-Za-z0-9-]+)_(\d{8})")
_TABLE_ATTRIBUTE = re.compile(r"\s*(?:Table\s+)?([A-Za-z0-9]+)")
_SIDECAR = re.compile(r"\.nc\.(md5|sha\d*|html?|xml|json|txt|log|sig|asc)\Z", re.IGNORECASE)
_NETCDF_VARIANT = re.compile(r"\.nc[._]\d+\Z|\.nco\Z|\.nc4\Z|\.nc\Z", re.IGNORECASE)
_GUESS = re.compile(r"r\d+i\d+p\d+(?![\dfF])")
# ESGF dataset ids start with the project; only a CMIP5 one can be named here.
_PROJECTS = frozenset(
    ("cmip5", "cmip6", "cmip3", "cordex", "specs", "obs4mips", "input4mips", "cmip5-ng")
)
# Words an archive puts above the DRS tree: never an institute even where one is expected.
_NOT_INSTITUTES = frozenset(("cmip5", "cmip", "data", "output", "output1", "output2", "files"))


def _show(text: str, limit: int = 80) -> str:
    """A value for a message: quoted, and cut so a hostile 10k-character input stays readable."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


@dataclass(slots=True)
class _FileName:
    """The components a DRS file name carries, canonical spelling."""

    variable: str
    table: str
    model: str
    experiment: str
    ensemble: str
    time_range: str | None = None
    geo: str | None = None
    #: gridspec files name their realm in place of the table: gridspec_<realm>_fx_...
    gridspec_realm: str | None = None

    def canonical(self) -> str:
        if self.gridspec_realm is not None:
            head = f"gridspec_{self.gridspec_realm}_fx"
        else:
            head = f"{self.variable}_{self.table}"
        parts = [head, self.model, self.experiment, self.ensemble]
        if self.time_range is not None:
            parts.append(self.time_range)
        if self.geo is not None:
            parts.append(self.geo)
        return "_".join(parts) + ".nc"


@dataclass(slots=True)
class _Draft:
    """Components being assembled for one input, with the corrections that produced them."""

    file: _FileName
    corrections: list[Correction]
    product: str | None = None
    institute: str | None = None
    frequency: str | None = None
    realm: str | None = None
    version: str | None = None
    #: the product attribute said "output" (CMOR's pre-publication value)
    output_attribute: bool = False

    def correct(self, rule: str, message: str) -> None:
        self.corrections.append(Correction(rule, message))


class CMIP5Translator(Translator):
    """CMIP5 DRS file names, DRS paths under any root and ESGF file ids."""

    scheme = SCHEME
    root = ROOT
    facet_keys = FACET_KEYS
    description = "CMIP5 DRS file names, paths and ESGF ids (/CMIP5/<product>/.../<file>)"
    # a dataset is a DRS directory without its version: one atomic dataset's variables
    aggregation = Aggregation(
        "variable",
        ("product", "institute", "model", "experiment", "frequency", "realm", "table", "ensemble"),
    )

    def guess_attributes(self, attributes: Mapping[str, Any]) -> int:
        project = _attribute_texts(attributes).get("project_id")
        return 80 if project is not None and project.lower() == "cmip5" else 0

    def guess(self, text: str) -> int:
        # Cheap substring tests first; CMIP6 members (r1i1p1f1) fail the look-ahead.
        if "CMIP6" in text or "cmip6" in text or text.startswith("/store/"):
            return 0
        if text.endswith(".root"):
            return 0
        if _GUESS.search(text) is not None:
            return 90
        if "cmip5" in text or "CMIP5" in text:
            return 40
        return 0

    def translate(self, text: str, attributes: Mapping[str, Any] | None = None) -> Translation:
        if attributes is None:
            fast = _translate_fast(text)
            if fast is not None:
                return fast
        try:
            return _translate_slow(text, attributes)
        except Rejected as reject:
            return failure(text, SCHEME, reject.code, reject.message)

    def reverse(self, name: str) -> Translation:
        try:
            return _reverse(name)
        except Rejected as reject:
            return failure(name, SCHEME, reject.code, reject.message)


# --- tier 1 -----------------------------------------------------------------------------


def _translate_fast(text: str) -> Translation | None:
    """The translation of a well-formed DRS path, or None to let the general parser decide."""
    if len(text) > MAX_INPUT or not text.isprintable():
        return None
    match = _FAST.search(text)
    if match is None or (match.start() > 0 and text[match.start() - 1] != "/"):
        return None
    groups = match.groups()
    product, institute, model, experiment, frequency, realm, table_dir, ensemble = groups[:8]
    drs_version, drs_var, llnl_var, llnl_version, drslib_var, drslib_date = groups[8:14]
    filename, variable, table, start, end, clim = groups[14:]
    if (drs_var or llnl_var or drslib_var) != variable:
        return None
    if (table_dir is not None and table_dir != table) or table not in TABLES:
        return None
    if experiment not in EXPERIMENTS or institute not in MODEL_INSTITUTES.get(model, ()):
        return None
    if start is not None and (len(start) not in _PRECISIONS or len(end) not in _PRECISIONS):
        return None
    corrections: list[Correction] = []
    if drs_version is not None:
        version = drs_version
    elif drslib_date is not None:
        version = "v" + drslib_date
        corrections.append(_drslib_correction(f"{drslib_var}_{drslib_date}", version))
    else:
        version = _version_directory(llnl_version, corrections)
    facets: Facets = {
        "activity": ROOT,
        "product": product,
        "institute": institute,
        "model": model,
        "experiment": experiment,
        "frequency": frequency,
        "realm": realm,
        "table": table,
        "ensemble": ensemble,
        "version": version,
        "variable": variable,
        "time_range": None if start is None else f"{start}-{end}{clim or ''}",
        "geo": None,
    }
    # Every component matched [A-Za-z0-9-] (file name: plus "_" and "."), which the NDN URI
    # leaves unescaped, so this join is what build_name returns, without its cost.
    name = (
        f"/{ROOT}/{product}/{institute}/{model}/{experiment}/{frequency}/{realm}/{table}"
        f"/{ensemble}/{version}/{variable}/{filename}"
    )
    return Translation(text, SCHEME, name, filename, facets, corrections)


def _version_directory(value: str, corrections: list[Correction]) -> str:
    """A version directory as the DRS writes it: v<N> (LLNL css02 writes a bare integer)."""
    if value == "latest" or (value[0] == "v" and value[1:].isdigit()):
        return value
    version = "v" + value.lstrip("vV")
    corrections.append(Correction("version-format", f"version directory {value!r} -> {version!r}"))
    return version


def _drslib_correction(directory: str, version: str) -> Correction:
    return Correction("drslib-version", f"drslib directory 'files/{directory}' -> {version!r}")


# --- tier 2: the general parser -------------------------------------------------------------


def _translate_slow(text: str, attributes: Mapping[str, Any] | None) -> Translation:
    path = text.strip()
    _screen(path)
    corrections: list[Correction] = []
    dirs, base = _split_path(path)
    id_stem = _strip_extension(base, corrections)
    stem, id_dirs = _split_esgf_id(id_stem)
    attrs = None if attributes is None else _attribute_texts(attributes)
    try:
        parsed: list[Correction] = []
        file = _parse_stem(stem, parsed)
        corrections.extend(parsed)
    except Rejected as reject:
        if reject.code != "not-drs-filename" or attrs is None:
            raise
        original = stem + base[len(id_stem) :]  # the file name, without an ESGF id's dataset
        file = _file_from_attributes(stem, original, attrs, reject, corrections)
    draft = _Draft(file, corrections, realm=file.gridspec_realm)
    _read_dirs(draft, dirs + id_dirs)
    if attrs is not None:
        _read_attributes(draft, attrs)
    _fill_by_rule(draft)
    return _result(text, draft)


def _screen(text: str) -> None:
    if not text:
        raise Rejected("empty-input", "empty input: give a CMIP5 file name, DRS path or ESGF id")
    if len(text) > MAX_INPUT:
        raise Rejected(
            "input-too-long",
            f"input of {len(text)} characters (limit {MAX_INPUT}): not a file path; "
            f"starts {_show(text, 40)}",
        )
    screen_control(text, "file names and paths")


def _split_path(text: str) -> tuple[list[str], str]:
    """Directory components and the last component; Windows separators are accepted."""
    if "/" not in text and "\\" in text:
        text = text.replace("\\", "/")
    *dirs, base = text.split("/")
    if "|" in base and base.lower().startswith("cmip5."):
        base = base.partition("|")[0]  # ESGF search ids end in |<data node>
    if not base:
        raise Rejected(
            "not-drs-filename",
            f"{_show(text)} ends with '/': a directory, not a file; name the files in it",
        )
    return [d for d in dirs if d not in ("", ".")], base


def _strip_extension(base: str, corrections: list[Correction]) -> str:
    """The file name without '.nc'; other netCDF spellings are corrected, sidecars refused."""
    if base.endswith(".nc"):
        return base[:-3]
    sidecar = _SIDECAR.search(base)
    if sidecar is not None:
        raise Rejected(
            "sidecar-file",
            f"{_show(base)} is a .{sidecar.group(1)} file about a netCDF file, not the data; "
            "publish the .nc file it describes",
        )
    variant = _NETCDF_VARIANT.search(base)
    if variant is None:
        raise Rejected(
            "not-netcdf",
            f"{_show(base)} does not end in '.nc': CMIP5 files are netCDF files named "
            "<variable>_<table>_<model>_<experiment>_<ensemble>[_<time>].nc",
        )
    corrections.append(
        Correction("extension", f"extension {variant.group()!r} -> '.nc' (a copy of a netCDF file)")
    )
    return base[: variant.start()]


def _split_esgf_id(stem: str) -> tuple[str, list[str]]:
    """Split an ESGF file id ``cmip5.<product>...<ensemble>[.<version>].<file>``.

    Returns the file stem and the dataset components, which are read like directories.
    """
    project = stem.partition(".")[0].lower()
    if project not in _PROJECTS:
        return stem, []
    if project != "cmip5":
        raise Rejected(
            "other-project",
            f"ESGF id of project {project!r}, not CMIP5: {_show(stem)}; "
            "use the translator of that project",
        )
    parts = stem.split(".")
    if len(parts) < 10:
        raise Rejected(
            "not-drs-filename",
            f"ESGF id {_show(stem)} has {len(parts)} '.'-separated fields; expected "
            "cmip5.<product>.<institute>.<model>.<experiment>.<frequency>.<realm>.<table>"
            ".<ensemble>[.<version>].<file name>",
        )
    dirs, rest = parts[1:9], parts[9:]
    if len(rest) > 1 and _VERSION_DIR.fullmatch(rest[0]):
        dirs.append(rest[0])
        rest = rest[1:]
    return ".".join(rest), dirs


# --- the file name ---------------------------------------------------------------------------


def _parse_stem(stem: str, corrections: list[Correction]) -> _FileName:
    """The components of a DRS file name without its extension."""
    fields = stem.split("_")
    if fields[0] == "gridspec" and len(fields) == 6:
        return _parse_gridspec(fields, corrections)
    at = _ensemble_index(fields)
    if at != 4:
        raise Rejected(*_diagnose_fields(stem, fields, at))
    time_range, geo = _parse_suffix(stem, fields, corrections)
    return _FileName(
        variable=_token(fields[0], "variable", stem),
        table=_canonical_table(fields[1], stem, corrections),
        model=_canonical_case(fields[2], _MODEL_BY_LOWER, "model", stem, corrections),
        experiment=_canonical_case(
            fields[3], _EXPERIMENT_BY_LOWER, "experiment", stem, corrections
        ),
        ensemble=_canonical_ensemble(fields[4], corrections),
        time_range=time_range,
        geo=geo,
    )


def _parse_gridspec(fields: list[str], corrections: list[Correction]) -> _FileName:
    """``gridspec_<realm>_fx_<model>_<experiment>_r0i0p0``: CMIP5 grid description files."""
    stem = "_".join(fields)
    realm = _REALM_BY_LOWER.get(fields[1].lower())
    if realm is None or fields[2] != "fx" or _ENSEMBLE.fullmatch(fields[5]) is None:
        raise Rejected(
            "not-drs-filename",
            f"{_show(stem)}: a gridspec file is named gridspec_<realm>_fx_<model>_<experiment>"
            "_r0i0p0",
        )
    return _FileName(
        variable="gridspec",
        table="fx",
        model=_canonical_case(fields[3], _MODEL_BY_LOWER, "model", stem, corrections),
        experiment=_canonical_case(
            fields[4], _EXPERIMENT_BY_LOWER, "experiment", stem, corrections
        ),
        ensemble=_canonical_ensemble(fields[5], corrections),
        gridspec_realm=realm,
    )


def _ensemble_index(fields: list[str]) -> int | None:
    for index, value in enumerate(fields):
        if _ENSEMBLE.fullmatch(value) is not None:
            return index
    return None


_LAYOUT = "<variable>_<table>_<model>_<experiment>_<ensemble>[_<time range>][_<geo>].nc"


def _diagnose_fields(stem: str, fields: list[str], at: int | None) -> tuple[str, str]:
    """(code, message) for a file name whose ensemble is missing or misplaced."""
    for value in fields:
        if _CMIP6_MEMBER.fullmatch(value) is not None:
            return "cmip6-name", f"{_show(stem)}: member {value!r} is CMIP6; use scheme cmip6"
    if at is None:
        return "not-drs-filename", _no_ensemble_message(stem, fields)
    if at < 4:
        return "not-drs-filename", (
            f"{_show(stem)}: the ensemble {fields[at]!r} is field {at + 1} of {len(fields)}, "
            f"expected field 5 of {_LAYOUT}"
        )
    if _START_DATE.fullmatch(fields[at - 1]) is not None:
        return "not-drs-filename", (
            f"{_show(stem)}: start-date field {fields[at - 1]!r} before the ensemble is the "
            "SPECS/decadal-prediction naming, not the CMIP5 DRS"
        )
    extra = "_".join(fields[: at - 4])
    return "not-drs-filename", (
        f"{_show(stem)}: {at - 4} extra leading field(s) {extra!r} before the DRS name: "
        f"a derived file, not a CMIP5 DRS file ({_LAYOUT})"
    )


def _no_ensemble_message(stem: str, fields: list[str]) -> str:
    for value in fields:
        if _FUSED_ENSEMBLE.fullmatch(value) is not None:
            return (
                f"{_show(stem)}: field {value!r} runs the experiment into the ensemble "
                f"without '_'; cannot tell the experiment ({_LAYOUT})"
            )
    return f"{_show(stem)}: no ensemble field r<N>i<N>p<N> ({_LAYOUT})"


def _parse_suffix(
    stem: str, fields: list[str], corrections: list[Correction]
) -> tuple[str | None, str | None]:
    """Time range and geographic suffix: the fields after the ensemble."""
    rest = fields[5:]
    time_range = geo = None
    if rest and (time := _TIME.fullmatch(rest[0])) is not None:
        time_range = _time_range(time, stem, corrections)
        rest = rest[1:]
        if rest and rest[0] == "clim" and time.group(3) is None:
            corrections.append(
                Correction("clim-suffix", f"'{time.group()}_clim' -> '{time_range}-clim'")
            )
            time_range += "-clim"
            rest = rest[1:]
    if rest and _GEO.fullmatch(rest[0]) is not None:
        geo = rest[0]
        rest = rest[1:]
    if rest:
        raise Rejected(*_extra_fields(stem, fields, rest))
    return time_range, geo


def _time_range(time: re.Match[str], stem: str, corrections: list[Correction]) -> str:
    start, end, clim = time.groups()
    for point in (start, end):
        if point is not None and len(point) not in _PRECISIONS:
            raise Rejected(
                "bad-time-range",
                f"{_show(stem)}: time point {point!r} has {len(point)} digits; CMIP5 writes "
                "4 (yyyy), 6, 8, 10, 12 or 14 (yyyymmddhhmmss)",
            )
    if end is None:
        # Subsetting tools name a one-step file by its single date; the DRS always writes N1-N2.
        end = start
        corrections.append(
            Correction("time-range-single-date", f"{start!r} -> '{start}-{end}' (one time step)")
        )
    return f"{start}-{end}{clim or ''}"


def _extra_fields(stem: str, fields: list[str], rest: list[str]) -> tuple[str, str]:
    extra = "_".join(rest)
    grid = next((v for v in rest if _GRID_LABEL.fullmatch(v) is not None), None)
    if grid is not None and fields[1] in CMIP6_ONLY_TABLES:
        return "cmip6-name", (
            f"{_show(stem)}: grid label {grid!r} and table {fields[1]!r} are CMIP6; "
            "use scheme cmip6"
        )
    if grid is not None:
        return "not-drs-filename", (
            f"{_show(stem)}: grid label {grid!r} after the ensemble is a CMIP6 field; CMIP5 "
            f"file names carry none ({_LAYOUT})"
        )
    return "not-drs-filename", (
        f"{_show(stem)}: extra field(s) {extra!r} after the ensemble: a derived product, "
        f"not a CMIP5 DRS file ({_LAYOUT})"
    )


def _token(value: str, what: str, stem: str) -> str:
    if _TOKEN.fullmatch(value) is None:
        raise Rejected(
            "not-drs-filename",
            f"{_show(stem)}: {what} {_show(value, 40)} must be letters, digits and '-'",
        )
    return value


def _canonical_table(value: str, stem: str, corrections: list[Correction]) -> str:
    table = _TABLE_BY_LOWER.get(value.lower())
    if table is None:
        if value in CMIP6_ONLY_TABLES:
            raise Rejected("cmip6-name", f"{_show(stem)}: table {value!r} is CMIP6; use cmip6")
        raise Rejected(
            "unknown-mip-table",
            f"{_show(stem)}: {_show(value, 40)} is not a CMIP5 MIP table "
            f"({', '.join(sorted(TABLES, key=str.lower))})",
        )
    if table != value:
        corrections.append(Correction("case-fix", f"table {value!r} -> {table!r}"))
    return table


def _canonical_case(
    value: str, known: dict[str, str], what: str, stem: str, corrections: list[Correction]
) -> str:
    canonical = known.get(_token(value, what, stem).lower(), value)
    if canonical != value:
        corrections.append(Correction("case-fix", f"{what} {value!r} -> {canonical!r}"))
    return canonical


def _canonical_ensemble(value: str, corrections: list[Correction]) -> str:
    lower = value.lower()
    if lower != value:
        corrections.append(Correction("case-fix", f"ensemble {value!r} -> {lower!r}"))
    return lower


# --- directories -----------------------------------------------------------------------------


def _read_dirs(draft: _Draft, dirs: list[str]) -> None:
    """Components from the directories: anchored on <model>/<experiment> when present."""
    anchor = _find_anchor(dirs, draft.file)
    if anchor is None:
        _read_tail(draft, dirs[_trailing_start(dirs, draft.file) :], anchored=False)
        return
    _read_head(draft, dirs, anchor)
    position = _read_frequency_realm(draft, dirs, anchor + 2)
    _read_tail(draft, dirs[position:], anchored=True)


def _find_anchor(dirs: list[str], file: _FileName) -> int | None:
    """Index of the rightmost <model>/<experiment> directory pair.

    Compared loosely (case, '.' for '-'): archives write ``fio-esm`` or ``ACCESS1.0`` in
    directories for the file name's ``FIO-ESM`` and ``ACCESS1-0``.
    """
    model, experiment = _loose(file.model), _loose(file.experiment)
    for index in range(len(dirs) - 2, -1, -1):
        if dirs[index].lower().replace(".", "-") == model and _loose(dirs[index + 1]) == experiment:
            return index
    return None


def _loose(value: str) -> str:
    return value.lower().replace(".", "-")


def _read_head(draft: _Draft, dirs: list[str], anchor: int) -> None:
    _compare_dir(draft, "model", dirs[anchor], draft.file.model)
    _compare_dir(draft, "experiment", dirs[anchor + 1], draft.file.experiment)
    if anchor >= 1:
        draft.institute = _dir_institute(dirs[anchor - 1], draft.file.model)
    if anchor >= 2:
        draft.product = _PRODUCT_BY_LOWER.get(dirs[anchor - 2].lower())


def _dir_institute(value: str, model: str) -> str | None:
    """The institute directory, unless it is evidently something else (e.g. ``cmip5``)."""
    known = _INSTITUTE_BY_LOWER.get(value.lower())
    if known is not None:
        return known
    if model in MODEL_INSTITUTES or value.lower() in _NOT_INSTITUTES:
        return None
    return value if _TOKEN.fullmatch(value) is not None else None


def _read_frequency_realm(draft: _Draft, dirs: list[str], position: int) -> int:
    """Read the <frequency>/<realm> directories after the experiment; returns the next index."""
    for slot, vocabulary in (("frequency", _FREQUENCY_BY_LOWER), ("realm", _REALM_BY_LOWER)):
        if position >= len(dirs):
            break
        value = dirs[position]
        canonical = vocabulary.get(value.lower())
        if canonical is None and _tail_role(value, draft.file, True) is not None:
            break  # this layout omits the slot (e.g. .../<experiment>/<ensemble>/...)
        if canonical is None:
            draft.correct(
                "dir-value-invalid",
                f"{slot} directory {_show(value, 40)} is not a CMIP5 {slot}; ignored",
            )
        elif canonical != value:
            draft.correct("dir-case-mismatch", f"{slot} directory {value!r} -> {canonical!r}")
        if slot == "frequency":
            draft.frequency = canonical
        else:
            draft.realm = canonical
        position += 1
    return position


def _tail_role(value: str, file: _FileName, anchored: bool) -> str | None:
    """What a directory below <realm> holds: table, ensemble, version, variable or files."""
    lower = value.lower()
    if lower == "files":
        return "files"
    if _ENSEMBLE.fullmatch(value) is not None:
        return "ensemble" if anchored or lower == file.ensemble else None
    if _VERSION_DIR.fullmatch(value) is not None:
        return "version"
    if lower == file.variable.lower():
        return "variable"
    if lower == file.table.lower() or (anchored and lower in _TABLE_BY_LOWER):
        return "table"
    if _DRSLIB_VERSION.fullmatch(value) is not None:
        return "drslib"
    return None


def _trailing_start(dirs: list[str], file: _FileName) -> int:
    """Start of the trailing directories that are DRS components of this very file."""
    start = len(dirs)
    while start > 0 and _tail_role(dirs[start - 1], file, False) is not None:
        start -= 1
    return start


def _read_tail(draft: _Draft, tail: list[str], anchored: bool) -> None:
    """Table, ensemble, version and variable directories, in any of the real layouts."""
    roles: dict[str, str] = {}
    unknown: list[int] = []
    index = 0
    while index < len(tail):
        value = tail[index]
        role = _tail_role(value, draft.file, anchored)
        if role == "files" and index + 1 < len(tail) and "drslib" not in roles:
            following = _DRSLIB_VERSION.fullmatch(tail[index + 1])
            if following is not None:
                roles["drslib"] = tail[index + 1]
                index += 2
                continue
        if role is None or role in ("files", "drslib") or role in roles:
            unknown.append(index)
        else:
            roles[role] = value
        index += 1
    if anchored:
        _resolve_unknown(draft, tail, roles, unknown)
    _apply_tail(draft, roles)


def _resolve_unknown(
    draft: _Draft, tail: list[str], roles: dict[str, str], unknown: list[int]
) -> None:
    """A lone unrecognised directory where the table or variable belongs is that component."""
    if len(unknown) == 1:
        index = unknown[0]
        before_ensemble = index + 1 < len(tail) and tail[index + 1] == roles.get("ensemble")
        if before_ensemble and "table" not in roles:
            roles["table"] = tail[index]
            return
        last = index == len(tail) - 1 and tail[index].lower() != "files"  # drslib's, not a variable
        if last and "variable" not in roles and "drslib" not in roles:
            roles["variable"] = tail[index]
            return
    if unknown:
        ignored = "/".join(tail[i] for i in unknown)
        draft.correct("dir-ignored", f"directories {_show(ignored)} are not DRS components")


def _apply_tail(draft: _Draft, roles: dict[str, str]) -> None:
    file = draft.file
    for role, value in (("table", file.table), ("ensemble", file.ensemble)):
        if role in roles:
            _compare_dir(draft, role, roles[role], value)
    if "variable" in roles:
        _compare_dir(draft, "variable", roles["variable"], file.variable)
    if "drslib" in roles:
        _apply_drslib(draft, roles["drslib"])
    if "version" in roles:
        draft.version = _version_directory(roles["version"], draft.corrections)


def _apply_drslib(draft: _Draft, value: str) -> None:
    """drslib keeps files in ``files/<variable>_<yyyymmdd>/``; the date is the version."""
    match = _DRSLIB_VERSION.fullmatch(value)
    assert match is not None  # _read_tail only stores matching values
    _compare_dir(draft, "variable", match.group(1), draft.file.variable)
    version = "v" + match.group(2)
    if draft.version is None:
        draft.version = version
        draft.corrections.append(_drslib_correction(value, version))


def _compare_dir(draft: _Draft, what: str, value: str, from_file: str) -> None:
    """The file name wins over a directory that disagrees with it; record the disagreement."""
    if value == from_file:
        return
    if value.lower() == from_file.lower():
        draft.correct(
            "dir-case-mismatch",
            f"{what} directory {value!r} -> {from_file!r} (case of the file name)",
        )
    else:
        draft.correct(
            "dir-file-mismatch",
            f"{what} directory {_show(value, 40)} disagrees with the file name's {from_file!r}; "
            "the file name wins",
        )


# --- attributes ------------------------------------------------------------------------------


def _read_attributes(draft: _Draft, attrs: dict[str, str]) -> None:
    """Fill components from netCDF global attributes (``_attribute_texts``) and check them
    against the name."""
    file = draft.file
    _check_attribute(draft, "project_id", attrs.get("project_id"), ROOT)
    _check_attribute(draft, "model_id", attrs.get("model_id"), file.model)
    _check_attribute(draft, "experiment_id", attrs.get("experiment_id"), file.experiment)
    _check_attribute(draft, "table_id", _attribute_table(attrs.get("table_id")), file.table)
    _check_attribute(
        draft,
        "realization/initialization_method/physics_version",
        _attribute_ensemble(attrs),
        file.ensemble,
    )
    _read_attribute_product(draft, attrs.get("product"))
    institute = attrs.get("institute_id")
    if institute is not None and _TOKEN.fullmatch(institute) is None:
        institute = None
    draft.institute = _fill(draft, "institute_id", draft.institute, institute)
    frequency = _FREQUENCY_BY_LOWER.get((attrs.get("frequency") or "").lower())
    draft.frequency = _fill(draft, "frequency", draft.frequency, frequency)
    _read_attribute_realm(draft, attrs.get("modeling_realm"))


def _attribute_texts(attributes: Mapping[str, Any]) -> dict[str, str]:
    """Lower-case key -> stripped text, for the attributes a CMIP5 name uses."""
    wanted = {
        "project_id",
        "product",
        "institute_id",
        "model_id",
        "experiment_id",
        "frequency",
        "modeling_realm",
        "table_id",
        "realization",
        "initialization_method",
        "physics_version",
        "ensemble",
        "variable_id",
        "time_coverage_start",
        "time_coverage_end",
    }
    texts: dict[str, str] = {}
    try:
        items = list(attributes.items())
    except Exception:  # a broken mapping must not break naming: the name is enough
        return texts
    for key, value in items:
        lower = key.lower() if isinstance(key, str) else None
        if lower in wanted and lower not in texts:
            text = _attribute_text(value)
            if text is not None:
                texts[lower] = text
    derived = derived_keys(attributes)
    if derived:
        texts[DERIVED_ATTRIBUTES] = " ".join(sorted(derived))
    return texts


def _attribute_text(value: Any) -> str | None:
    """Text of a netCDF attribute value: str, bytes, numpy scalar or one-element array."""
    try:
        if hasattr(value, "tolist"):  # numpy scalars and arrays, without importing numpy
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            if len(value) != 1:
                return None
            value = value[0]
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            return None
        text = str(value).strip()
    except Exception:  # hostile objects (a raising __str__ or tolist) count as absent
        return None
    return text if text and control_character(text) is None else None


def _attribute_table(value: str | None) -> str | None:
    """``"Table Omon (26 July 2011) 0e2d..."`` -> ``"Omon"``."""
    if value is None:
        return None
    match = _TABLE_ATTRIBUTE.match(value)
    return None if match is None else match.group(1)


def _attribute_ensemble(attrs: dict[str, str]) -> str | None:
    """CMIP5 files carry no ensemble attribute: build r<realization>i<init>p<physics>."""
    parts = [attrs.get(k) for k in ("realization", "initialization_method", "physics_version")]
    if any(p is None or not p.isdigit() for p in parts):
        # an extractor may have derived it already (translators.netcdf.derive_facets)
        return attrs.get("ensemble")
    return "r{}i{}p{}".format(*parts)


def _check_attribute(draft: _Draft, key: str, value: str | None, from_name: str) -> None:
    if value is not None and value.lower() != from_name.lower():
        draft.correct(
            "attribute-mismatch",
            f"attribute {key} {_show(value, 40)} disagrees with {from_name!r} from the name; "
            "the name wins",
        )


def _fill(draft: _Draft, key: str, current: str | None, value: str | None) -> str | None:
    """Attribute value where the path gave none; a disagreement is recorded, the path wins."""
    if current is None or value is None:
        return current if current is not None else value
    _check_attribute(draft, key, value, current)
    return current


def _read_attribute_product(draft: _Draft, value: str | None) -> None:
    product = _PRODUCT_BY_LOWER.get((value or "").lower())
    if product == "output":
        # CMOR writes "output" in every file; the output1/output2 split happens at publication,
        # so this value neither fills nor contradicts a product.
        draft.output_attribute = draft.product is None
        return
    draft.product = _fill(draft, "product", draft.product, product)


def _read_attribute_realm(draft: _Draft, value: str | None) -> None:
    """``modeling_realm`` may list several realms; the DRS directory uses the first."""
    realms = [
        _REALM_BY_LOWER[r.lower()] for r in (value or "").split() if r.lower() in _REALM_BY_LOWER
    ]
    if not realms:
        return
    if draft.realm is None:
        draft.realm = realms[0]
    elif draft.realm not in realms:
        _check_attribute(draft, "modeling_realm", value, draft.realm)


def _file_from_attributes(
    stem: str, original: str, attrs: dict[str, str], reject: Rejected, corrections: list[Correction]
) -> _FileName:
    """The DRS file name the attributes give a file whose own name is not one.

    Real archives hold CMIP5 data under other names (ESMValCore test files, ``odd_file.nc``);
    CMOR wrote every component into the header, and ``netcdf.naming_attributes`` adds the main
    variable and the time coverage. A name that holds a whole DRS name plus other fields is a
    derived file (regridded, bias-corrected): it is not renamed after the file it came from.
    """
    at = _ensemble_index(stem.split("_"))
    if at is not None and at >= 4:
        raise Rejected(
            reject.code,
            f"{reject.message}; the name holds a DRS name with extra fields (a derived file), "
            "so it is not renamed from the global attributes",
        )
    try:
        file, time_source, from_axis = _attribute_file_name(stem, attrs)
    except ValueError as exc:
        raise Rejected(
            reject.code, f"{reject.message}; cannot rebuild it from the global attributes: {exc}"
        ) from None
    canonical = file.canonical()
    corrections.append(
        Correction(
            "filename-from-attributes",
            f"{_show(original)} -> {canonical!r}: not a CMIP5 DRS file name; rebuilt from the "
            f"global attributes{time_source}",
        )
    )
    if from_axis is not None:
        corrections.append(from_axis)
    return file


def _attribute_file_name(
    stem: str, attrs: dict[str, str]
) -> tuple[_FileName, str, Correction | None]:
    """The file name components of the attributes, where the time range came from, and the
    ``time-range-from-axis`` correction when it came from the file's time axis.

    Raises ValueError naming the first attribute that is missing or not a CMIP5 value.
    """
    project = attrs.get("project_id")
    if project is None or project.lower() != "cmip5":
        raise ValueError(
            "no project_id attribute"
            if project is None
            else f"project_id {_show(project, 40)} is not CMIP5"
        )
    variable = _attribute_token(attrs, "variable_id")
    model = _attribute_token(attrs, "model_id")
    experiment = _attribute_token(attrs, "experiment_id")
    table_id = attrs.get("table_id")
    if table_id is None:
        raise ValueError("no table_id attribute")
    table = _TABLE_BY_LOWER.get((_attribute_table(table_id) or "").lower())
    if table is None:
        raise ValueError(f"table_id {_show(table_id, 40)} names no CMIP5 MIP table")
    ensemble = _attribute_ensemble(attrs)
    if ensemble is None or _ENSEMBLE.fullmatch(ensemble) is None:
        raise ValueError(
            "no realization/initialization_method/physics_version attributes"
            if ensemble is None
            else f"ensemble {_show(ensemble, 40)} is not r<N>i<N>p<N>"
        )
    time_range, source, from_axis = _attribute_time_range(stem, table, attrs)
    file = _FileName(
        variable=variable,
        table=table,
        model=_MODEL_BY_LOWER.get(model.lower(), model),
        experiment=_EXPERIMENT_BY_LOWER.get(experiment.lower(), experiment),
        ensemble=ensemble.lower(),
        time_range=time_range,
    )
    return file, source, from_axis


def _attribute_token(attrs: dict[str, str], key: str) -> str:
    value = attrs.get(key)
    if value is None:
        raise ValueError(f"no {key} attribute")
    if _TOKEN.fullmatch(value) is None:
        raise ValueError(f"{key} {_show(value, 40)} is not letters, digits and '-'")
    return value


def _attribute_time_range(
    stem: str, table: str, attrs: dict[str, str]
) -> tuple[str | None, str, Correction | None]:
    """The time range of a file named from its attributes: from ``time_coverage_start/end`` at
    the precision of the table's frequency (derived from the time axis when the file states
    none: recorded as ``time-range-from-axis``), else a range the old name carries; fx: none.
    """
    frequency = TABLES[table][0]
    precision = TIME_PRECISION.get(frequency)
    if precision is None:
        return None, "", None  # fx: time-invariant
    start, end = attrs.get("time_coverage_start"), attrs.get("time_coverage_end")
    if start is not None and end is not None:
        time_range = drs_time_range(start, end, *precision)
        if time_range is None:
            raise ValueError(
                f"time_coverage_start/time_coverage_end {_show(start, 30)}/{_show(end, 30)} "
                "are not ISO 8601 dates"
            )
        if "time_coverage_start" not in attrs.get(DERIVED_ATTRIBUTES, "").split():
            return time_range, " (time range from time_coverage_start/time_coverage_end)", None
        from_axis = Correction(
            "time-range-from-axis",
            f"time range {time_range!r} from the time axis: first and last records {start} "
            f"and {end}, written {precision_pattern(precision[0])} as the DRS sets for table "
            f"{table}'s {frequency} data (the file states no time_coverage_start/end)",
        )
        return time_range, " (time range from the time axis)", from_axis
    found = _TIME_SEARCH.search(stem)
    if found is not None and {len(found.group(1)), len(found.group(2))} <= _PRECISIONS:
        return found.group(), " (time range kept from the file name)", None
    raise ValueError(
        f"table {table!r} has a time axis, and the file has no decodable one, no "
        "time_coverage_start/time_coverage_end attributes and no time range in its name"
    )


# --- rules and result ------------------------------------------------------------------------


def _fill_by_rule(draft: _Draft) -> None:
    """Components neither path nor attributes gave: documented rules and defaults."""
    file = draft.file
    if draft.product is None:
        draft.product = DEFAULT_PRODUCT
        if draft.output_attribute:
            draft.correct(
                "product-output",
                f"product attribute 'output' (CMOR's pre-publication value) -> {DEFAULT_PRODUCT!r}",
            )
        else:
            draft.correct("default-product", f"no product in the path: {DEFAULT_PRODUCT!r}")
    if draft.institute is None:
        draft.institute = _institute_by_rule(draft)
    frequency, realm = TABLES[file.table]
    if draft.frequency is None:
        draft.frequency = frequency
        draft.correct("frequency-from-table", f"frequency {frequency!r} from table {file.table!r}")
    if draft.realm is None:
        draft.realm = VARIABLE_REALMS.get((file.table, file.variable), realm)
        draft.correct(
            "realm-from-table",
            f"realm {draft.realm!r} from table {file.table!r} and variable {file.variable!r}",
        )
    if draft.version is None:
        draft.version = DEFAULT_VERSION
        draft.correct("version-missing", f"no version in the path: {DEFAULT_VERSION!r}")


def _institute_by_rule(draft: _Draft) -> str:
    model = draft.file.model
    institutes = MODEL_INSTITUTES.get(model)
    if institutes is None:
        raise Rejected(
            "unknown-institute",
            f"cannot tell the institute of model {model!r}: give the DRS path "
            "(.../<institute>/<model>/...) or the file's attributes (institute_id)",
        )
    draft.correct("institute-from-model", f"institute {institutes[0]!r} from model {model!r}")
    return institutes[0]


def _result(text: str, draft: _Draft) -> Translation:
    file = draft.file
    filename = file.canonical()
    facets = _facets(
        file,
        product=draft.product,
        institute=draft.institute,
        frequency=draft.frequency,
        realm=draft.realm,
        version=draft.version,
    )
    components = [str(facets[k]) for k in FACET_KEYS[:11]] + [filename]
    return Translation(
        input=text,
        scheme=SCHEME,
        name=_join_name(components),
        filename=filename,
        facets=facets,
        corrections=draft.corrections,
    )


def _join_name(components: list[str]) -> str:
    """``build_name(components)``, skipping its per-component escaping when none is needed.

    The parser only lets letters, digits, '-', '_' and '.' into components and every component
    starts with a letter or digit, so escaping never applies; the check keeps that true.
    """
    name = "/" + "/".join(components)
    if _UNRESERVED_NAME.fullmatch(name) is not None and "/." not in name:
        return name
    return build_name(components)


def _facets(
    file: _FileName,
    *,
    product: str | None,
    institute: str | None,
    frequency: str | None,
    realm: str | None,
    version: str | None,
) -> Facets:
    return {
        "activity": ROOT,
        "product": product,
        "institute": institute,
        "model": file.model,
        "experiment": file.experiment,
        "frequency": frequency,
        "realm": realm,
        "table": file.table,
        "ensemble": file.ensemble,
        "version": version,
        "variable": file.variable,
        "time_range": file.time_range,
        "geo": file.geo,
    }


# --- reverse ---------------------------------------------------------------------------------


def _reverse(name: str) -> Translation:
    try:
        parts = split_name(name)
    except ValueError as exc:
        raise Rejected("invalid-name", f"not an NDN name of generic components: {exc}") from None
    if not parts or parts[0] != ROOT:
        raise Rejected("wrong-root", f"CMIP5 names start with /{ROOT}/: {_show(name)}")
    if len(parts) != _COMPONENTS:
        raise Rejected(
            "wrong-component-count",
            f"{_show(name)} has {len(parts)} components; a CMIP5 name has {_COMPONENTS}: "
            f"/{ROOT}/<product>/<institute>/<model>/<experiment>/<frequency>/<realm>/<table>"
            "/<ensemble>/<version>/<variable>/<file name>",
        )
    _, product, institute, _, _, frequency, realm, _, _, version, _, filename = parts
    file = _canonical_file(filename)
    _check_components(parts, file)
    facets = _facets(
        file,
        product=product,
        institute=institute,
        frequency=frequency,
        realm=realm,
        version=version,
    )
    return Translation(
        input=name, scheme=SCHEME, name=build_name(parts), filename=filename, facets=facets
    )


def _canonical_file(filename: str) -> _FileName:
    if not filename.endswith(".nc"):
        raise Rejected("invalid-component", f"file name {_show(filename)} does not end in '.nc'")
    corrections: list[Correction] = []
    file = _parse_stem(filename[:-3], corrections)
    if corrections:
        raise Rejected(
            "not-canonical",
            f"file name {_show(filename)} is not canonical: translate it to get its name",
        )
    return file


def _check_components(parts: list[str], file: _FileName) -> None:
    """Directory components valid and in agreement with the file name they lead to."""
    _, product, institute, model, experiment, frequency, realm, table, ensemble, version = parts[
        :10
    ]
    checks = (
        ("product", product in PRODUCTS),
        ("institute", _TOKEN.fullmatch(institute) is not None),
        ("frequency", frequency in FREQUENCIES),
        ("realm", realm in REALMS and realm == (file.gridspec_realm or realm)),
        ("version", version == "latest" or re.fullmatch(r"v\d+", version) is not None),
        ("model", model == file.model),
        ("experiment", experiment == file.experiment),
        ("table", table == file.table),
        ("ensemble", ensemble == file.ensemble),
        ("variable", parts[10] == file.variable),
    )
    for what, ok in checks:
        if not ok:
            raise Rejected(
                "invalid-component",
                f"{what} component of {_show('/'.join(parts))} is invalid or disagrees with "
                "the file name",
            )
