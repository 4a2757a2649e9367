"""Header-only metadata of netCDF files, for naming, the catalog and ``ndnsci inspect``.

Reads what a catalog needs without reading data: global attributes, dimensions, variables and
their attributes, the CF time coverage (first and last steps only, decoded with cftime in every CF
calendar) and the lat/lon box (from 1-D coordinates or their bounds; large 2-D grids are sampled).

>>> from ndnsci_translators import netcdf
>>> path = "tests/data/netcdf/edge/esmvalcore_tas_nondrs_name.nc"
>>> meta = netcdf.extract(path)
>>> meta.time.start, meta.time.end, meta.time.calendar
('1850-01-01T00:00:00', '1850-03-01T00:00:00', '365_day')
>>> netcdf.read_global_attributes(path)["model_id"]
'CanESM2'

netCDF4, cftime and numpy (``pip install 'ndnsci[netcdf]'``) are imported inside the functions
that use them, so importing this module costs no more than the rest of ``ndnsci_translators``.

Errors: one exception class; a problem *inside* a readable file never raises, it is reported in
``FileMetadata.warnings`` (an :class:`Issue` with a code, e.g. ``time-undecodable``)::

    Exception
     └── MetadataError           the file cannot be read as netCDF; ``code`` says why:
           not-found             no such file
           not-a-file            a directory, FIFO, device, ...
           permission-denied     no read permission on the file or its directory
           empty                 zero bytes
           gzip-compressed       a .gz file: decompress it first
           compressed            bzip2, xz, zstd or zip
           grib                  a GRIB file (convert it, e.g. ``cdo -f nc copy``)
           not-netcdf            any other non-netCDF file (text, HDF4, ROOT, ...)
           truncated             shorter than its header says (interrupted download or copy)
           unreadable            netCDF signature but the library cannot read it (corrupt)
           missing-dependency    netCDF4/cftime/numpy are not installed

Callers that must keep going over many files (``ndnsci translate --metadata``, a catalog scan)
catch :class:`MetadataError` per file and use ``exc.code`` / ``exc.to_dict()``::

    try:
        attributes = netcdf.naming_attributes(path)
    except netcdf.MetadataError as exc:
        attributes = None          # name the file from its path; report exc.code, exc.message

:func:`naming_attributes` is what the translators want: the global attributes plus the main
variable (``variable_id``) and time coverage (``time_coverage_start``/``time_coverage_end``) a
CMIP file name is made of, so a file stored under another name can still be named.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import re
import stat
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO, NamedTuple

from ndnsci_translators._core import DERIVED_ATTRIBUTES

__all__ = [
    "COORDINATE_READ_LIMIT",
    "DimensionInfo",
    "FileMetadata",
    "Issue",
    "MetadataError",
    "SpatialBounds",
    "TimeCoverage",
    "VariableInfo",
    "attribute",
    "cmip5_ensemble",
    "cmip6_member_id",
    "derive_facets",
    "extract",
    "main_variable",
    "mip_table",
    "naming_and_metadata",
    "naming_attributes",
    "read_global_attributes",
    "sha256_file",
]

#: at most this many values of a lat/lon coordinate (or its bounds) are read; larger curvilinear
#: grids are sampled by whole rows (first and last included) and the box is marked approximate
COORDINATE_READ_LIMIT = 1_000_000

_HEAD_SIZE = 64
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
_CLASSIC_VERSIONS = {b"CDF\x01": 1, b"CDF\x02": 2, b"CDF\x05": 5}
_NC_ENOTNC = -51  # netCDF-C: "Unknown file format"

# signatures of files people mistake for netCDF: (prefix, code, what it is and what to do)
_FOREIGN_SIGNATURES = (
    (b"\x1f\x8b", "gzip-compressed", "gzip-compressed: decompress it first (gunzip)"),
    (b"GRIB", "grib", "a GRIB file, not netCDF: convert it (cdo -f nc copy) or use cfgrib"),
    (b"BZh", "compressed", "bzip2-compressed: decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", "compressed", "xz-compressed: decompress it first (unxz)"),
    (b"\x28\xb5\x2f\xfd", "compressed", "zstd-compressed: decompress it first (unzstd)"),
    (b"PK\x03\x04", "compressed", "a zip archive: extract it first"),
    (b"\x0e\x03\x13\x01", "not-netcdf", "an HDF4 file, not netCDF"),
    (b"root", "not-netcdf", "a ROOT file, not netCDF: name it by its LFN (scheme cms)"),
)


class MetadataError(Exception):
    """A file that cannot be read as netCDF: a stable kebab-case ``code`` and a message saying
    what is wrong and what to do. ``str(exc)`` is ``"<path>: <message>"``."""

    def __init__(self, code: str, message: str, path: str = "") -> None:
        super().__init__(code, message, path)
        self.code = code
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class Issue:
    """Something odd in a readable file (bad units, invalid bounds, ...): reported, not raised."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class DimensionInfo:
    name: str
    size: int
    unlimited: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "unlimited": self.unlimited}


@dataclass(frozen=True, slots=True)
class VariableInfo:
    """A variable's header: ``dtype`` is a numpy name (``float32``), ``char`` or ``string``;
    ``units``/``standard_name``/``long_name`` are lifted out of ``attributes`` (which keeps all)."""

    name: str
    dtype: str
    dimensions: tuple[str, ...]
    shape: tuple[int, ...]
    units: str | None
    standard_name: str | None
    long_name: str | None
    attributes: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "dtype": self.dtype,
            "dimensions": list(self.dimensions),
            "shape": list(self.shape),
            "units": self.units,
            "standard_name": self.standard_name,
            "long_name": self.long_name,
            "attributes": self.attributes,
        }


@dataclass(frozen=True, slots=True)
class TimeCoverage:
    """CF time coverage from the first and last steps only.

    ``start``/``end`` are ISO-8601 dates in the file's ``calendar`` (no time zone, rounded to the
    second), taken from the bounds variable when there is one (so ``end`` is the upper bound of the
    last cell, e.g. ``1850-03-01T00:00:00`` for Jan-Feb 1850) and else from the coordinate values;
    ``first``/``last`` are always the decoded coordinate values. ``raw_start``/``raw_end`` are the
    same instants as numbers in ``units``: the only values given when the units cannot be decoded
    (a warning then says why). ``calendar`` is the attribute as written, ``standard`` when absent.
    """

    variable: str
    units: str | None
    calendar: str
    length: int
    bounds: str | None
    start: str | None
    end: str | None
    first: str | None
    last: str | None
    raw_start: float | None
    raw_end: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "variable": self.variable,
            "units": self.units,
            "calendar": self.calendar,
            "length": self.length,
            "bounds": self.bounds,
            "start": self.start,
            "end": self.end,
            "first": self.first,
            "last": self.last,
            "raw_start": self.raw_start,
            "raw_end": self.raw_end,
        }


@dataclass(frozen=True, slots=True)
class SpatialBounds:
    """The lat/lon box.

    ``lat_min``..``lon_max`` are in the file's own convention (longitudes may be 0..360 or
    -180..180), from the cell bounds when present. ``west``/``east`` are the same longitudes in
    -180..180 for searching, as in GeoJSON/STAC: ``west > east`` means the box crosses the
    antimeridian, and a box spanning 360 degrees is -180..180. A file with only one of the two
    axes (a zonal mean has no longitude) has the other's fields None. ``source`` names the
    variables read; ``approximate`` is true when a large curvilinear grid was sampled (see
    COORDINATE_READ_LIMIT).
    """

    lat_min: float | None
    lat_max: float | None
    lon_min: float | None
    lon_max: float | None
    west: float | None
    east: float | None
    source: tuple[str, ...]
    approximate: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "lat_min": self.lat_min,
            "lat_max": self.lat_max,
            "lon_min": self.lon_min,
            "lon_max": self.lon_max,
            "west": self.west,
            "east": self.east,
            "source": list(self.source),
            "approximate": self.approximate,
        }


@dataclass(slots=True)
class FileMetadata:
    """Everything :func:`extract` reads from one file; ``to_dict()`` is plain JSON (no NaN).

    ``global_attributes`` are raw (names and values as written, converted to JSON types);
    ``derived`` holds naming values computed from them (see :func:`derive_facets`).
    """

    path: str
    size: int
    modified: str
    format: str
    global_attributes: dict[str, Any]
    dimensions: list[DimensionInfo]
    variables: list[VariableInfo]
    groups: list[str]
    time: TimeCoverage | None
    spatial: SpatialBounds | None
    derived: dict[str, str]
    sha256: str | None = None
    warnings: list[Issue] = field(default_factory=list)

    def variable(self, name: str) -> VariableInfo | None:
        return next((v for v in self.variables if v.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "modified": self.modified,
            "format": self.format,
            "time": None if self.time is None else self.time.to_dict(),
            "spatial": None if self.spatial is None else self.spatial.to_dict(),
            "dimensions": [d.to_dict() for d in self.dimensions],
            "variables": [v.to_dict() for v in self.variables],
            "groups": self.groups,
            "global_attributes": self.global_attributes,
            "derived": self.derived,
            "sha256": self.sha256,
            "warnings": [w.to_dict() for w in self.warnings],
        }


# --------------------------------------------------------------------------- public functions


def read_global_attributes(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The file's global attributes as plain JSON values (str, int, float, lists).

    Names are kept as written (see :func:`attribute` for a case-insensitive look-up); numpy values
    become Python ones, non-finite floats become the strings ``"NaN"``, ``"Infinity"``,
    ``"-Infinity"``.

    Raises:
        MetadataError: the file cannot be read as netCDF (see the module docstring for codes).
    """
    path = os.fspath(path)
    ds, _ = _open(path)
    with ds:
        attributes: dict[str, Any] = _guarded(path, _attributes, ds)
    return attributes


def naming_attributes(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The global attributes (as :func:`read_global_attributes`) plus, for each one the file does
    not carry (names compared ignoring case), what a CMIP file name needs from its contents:

    - ``variable_id``: the file's one data variable (:func:`main_variable`); absent when there is
      not exactly one;
    - ``time_coverage_start``/``time_coverage_end`` (ACDD): ISO 8601 times of the first and last
      time coordinate values, the records a CMIP DRS time range names (not the cell bounds: a
      monthly mean of January 1850 is ``1850-01-16T12:00:00``), decoded with cftime in the
      axis's calendar. When the axis has cell bounds, a record time outside its cell or on its
      upper bound (a mean stamped at the period's end) is replaced by the cell's middle, so
      the time is in the period the record stands for. For a CF climatology
      (``time:climatology``) they are the climatology bounds' first and last instants, the
      period the DRS names a climatology by. Absent when there is no time axis or it cannot be
      decoded.

    The names of what was derived are listed under ``"ndnsci:derived"``
    (``translators._core.DERIVED_ATTRIBUTES``): a translator that names the file with them
    records it. Header only: one open, the first and last time values (and their cells' bounds)
    read, no data variable read.

    >>> attributes = naming_attributes("tests/data/netcdf/edge/esmvalcore_tas_nondrs_name.nc")
    >>> [attributes[k] for k in ("variable_id", "time_coverage_start", "time_coverage_end")]
    ['tas', '1850-01-16T12:00:00', '1850-02-15T00:00:00']
    >>> attributes["ndnsci:derived"]
    ['time_coverage_end', 'time_coverage_start', 'variable_id']

    Raises:
        MetadataError: the file cannot be read as netCDF (see the module docstring for codes).
    """
    path = os.fspath(path)
    ds, _ = _open(path)
    with ds:
        attributes: dict[str, Any] = _guarded(path, _naming_attributes, ds)
    return attributes


def extract(path: str | os.PathLike[str], checksum: bool = False) -> FileMetadata:
    """Read one file's header into a :class:`FileMetadata`; never reads data variables.

    With ``checksum=True`` the whole file is also streamed through SHA-256 (``sha256``).

    Raises:
        MetadataError: the file cannot be read as netCDF (see the module docstring for codes).
    """
    path = os.fspath(path)
    ds, info = _open(path)
    with ds:
        meta: FileMetadata = _guarded(path, _read_header, ds, path, info)
    if checksum:
        meta.sha256 = sha256_file(path)
    return meta


def naming_and_metadata(
    path: str | os.PathLike[str], checksum: bool = False
) -> tuple[dict[str, Any], FileMetadata]:
    """:func:`naming_attributes` and :func:`extract` of one file, from one open (what a
    catalog publishes: the name and the header).

    Raises:
        MetadataError: the file cannot be read as netCDF (see the module docstring for codes).
    """
    path = os.fspath(path)
    ds, info = _open(path)
    with ds:
        naming: dict[str, Any] = _guarded(path, _naming_attributes, ds)
        meta: FileMetadata = _guarded(path, _read_header, ds, path, info)
    if checksum:
        meta.sha256 = sha256_file(path)
    return naming, meta


def sha256_file(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, streamed in ``chunk_size`` pieces (never the whole file in memory).

    Raises:
        OSError: the file cannot be opened or read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


# ------------------------------------------------------------ naming helpers for translators


_TABLE_SENTENCE = re.compile(r"^\s*Table\s+(\S+)", re.IGNORECASE)


def attribute(attributes: Mapping[str, Any], name: str) -> Any:
    """``attributes[name]``, else a case-insensitive match (some producers write ``TITLE``), else
    None."""
    if name in attributes:
        return attributes[name]
    folded = name.lower()
    return next((v for k, v in attributes.items() if k.lower() == folded), None)


def mip_table(table_id: str) -> str | None:
    """MIP table name: CMIP5 ``"Table Omon (26 July 2011) 1f4ad..."`` -> ``"Omon"``; a bare
    CMIP6 ``"Omon"`` is returned as is.

    >>> mip_table("Table Omon (26 July 2011) 2a5bd1f1b8a0bd1bc0c9d4e6c7f2b7b3")
    'Omon'
    """
    match = _TABLE_SENTENCE.match(table_id)
    if match:
        return match.group(1)
    words = table_id.split()
    return words[0] if len(words) == 1 else None


def cmip5_ensemble(attributes: Mapping[str, Any]) -> str | None:
    """CMIP5 files carry no ensemble attribute: build ``r<N>i<M>p<L>`` from ``realization``,
    ``initialization_method`` and ``physics_version``; None when one is missing or not a number.

    >>> cmip5_ensemble({"realization": 1, "initialization_method": 1, "physics_version": 124})
    'r1i1p124'
    """
    parts = [attribute(attributes, k) for k in _RIP]
    try:
        r, i, p = (_whole_number(v) for v in parts)
    except (TypeError, ValueError):
        return None
    return f"r{r}i{i}p{p}"


_RIP = ("realization", "initialization_method", "physics_version")


def _whole_number(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        raise TypeError("not a number")
    number = float(value)  # numbers and numeric strings; lists raise TypeError
    if not number.is_integer():
        raise ValueError("not a whole number")
    return int(number)


def cmip6_member_id(attributes: Mapping[str, Any]) -> str | None:
    """CMIP6 ``member_id``; when absent (it often is), ``variant_label`` prefixed by
    ``sub_experiment_id`` unless that is ``none``.

    >>> cmip6_member_id({"variant_label": "r1i1p1f1", "sub_experiment_id": "s1960"})
    's1960-r1i1p1f1'
    """
    member = attribute(attributes, "member_id")
    if isinstance(member, str) and member.strip():
        return member.strip()
    variant = attribute(attributes, "variant_label")
    if not isinstance(variant, str) or not variant.strip():
        return None
    sub = attribute(attributes, "sub_experiment_id")
    if isinstance(sub, str) and sub.strip() and sub.strip().lower() != "none":
        return f"{sub.strip()}-{variant.strip()}"
    return variant.strip()


#: attributes by which a CF variable names others that serve it: lists of names, and lists of
#: ``term: variable`` pairs (grid_mapping, which may be either, is read on its own)
_REFERENCES = ("bounds", "climatology", "coordinates", "ancillary_variables")
_PAIRED_REFERENCES = ("cell_measures", "formula_terms")
_PAIR_TARGET = re.compile(r"\S+:\s+(\S+)")


def main_variable(variables: Iterable[VariableInfo]) -> str | None:
    """The one data variable of a file, as CMOR writes CMIP files (one variable per file): the
    variable that is not a coordinate variable (named like its first dimension: 1-D, or a
    character array such as CMIP5's ``basin(basin, strlen)``), not scalar
    (``height``, ``p0``: auxiliary), not named by another's ``bounds``, ``climatology``,
    ``coordinates``, ``ancillary_variables``, ``cell_measures``, ``formula_terms`` or
    ``grid_mapping``, and not an unreferenced ``<coordinate>_bnds``/``_bounds``. None unless
    exactly one remains.
    """
    by_name = {v.name: v for v in variables}
    served: set[str] = set()
    for info in by_name.values():
        for key in _REFERENCES:
            value = attribute(info.attributes, key)
            if isinstance(value, str):
                served.update(value.split())
        for key in _PAIRED_REFERENCES:
            value = attribute(info.attributes, key)
            if isinstance(value, str):
                served.update(_PAIR_TARGET.findall(value))
        mapping = attribute(info.attributes, "grid_mapping")
        if isinstance(mapping, str):  # "crs" or CF 1.7's "crs: x y"
            served.update(w.rstrip(":") for w in mapping.split() if ":" in w or ":" not in mapping)
        for guess in (f"{info.name}_bnds", f"{info.name}_bounds"):
            if guess in by_name and _fits(by_name[guess], info):
                served.add(guess)
    candidates = [
        info.name
        for info in by_name.values()
        if info.dimensions and info.dimensions[0] != info.name and info.name not in served
    ]
    return candidates[0] if len(candidates) == 1 else None


def derive_facets(attributes: Mapping[str, Any]) -> dict[str, str]:
    """Naming values the attributes imply but do not state: ``ensemble`` (CMIP5 r/i/p),
    ``table`` (the MIP table out of a CMIP5 ``table_id`` sentence), ``member_id`` (CMIP6).
    Only the keys that can be derived are present."""
    derived: dict[str, str] = {}
    ensemble = cmip5_ensemble(attributes)
    if ensemble is not None:
        derived["ensemble"] = ensemble
    table_id = attribute(attributes, "table_id")
    table = mip_table(table_id) if isinstance(table_id, str) else None
    if table is not None:
        derived["table"] = table
    member = cmip6_member_id(attributes)
    if member is not None:
        derived["member_id"] = member
    return derived


# ------------------------------------------------------------------------- opening a file


def _open(path: str) -> tuple[Any, os.stat_result]:
    """An open ``netCDF4.Dataset`` and the file's stat, or MetadataError saying why not."""
    head, info = _sniff(path)
    version = _CLASSIC_VERSIONS.get(head[:4])
    if version is not None:
        # netCDF-C opens a classic file cut short, even one cut inside its header, and then reads
        # zeros: only comparing the size with what the header declares catches it
        _check_classic_length(path, version, info.st_size)
    netCDF4 = _import("netCDF4")
    try:
        return netCDF4.Dataset(path, "r"), info
    except (OSError, RuntimeError) as exc:
        raise _open_failure(path, head, info.st_size, exc) from exc
    except UnicodeError as exc:  # netCDF4 decodes each name while opening: a corrupt one
        raise MetadataError(
            "unreadable", f"a name in the header is not UTF-8 ({exc})", path
        ) from exc


def _sniff(path: str) -> tuple[bytes, os.stat_result]:
    """The first bytes and the stat of a regular, readable, non-empty file that may be netCDF."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise MetadataError("not-a-file", f"{kind}: give the netCDF files inside it", path)
        with open(path, "rb") as f:
            head = f.read(_HEAD_SIZE)
    except FileNotFoundError:
        raise MetadataError("not-found", "no such file", path) from None
    except PermissionError:
        raise MetadataError("permission-denied", "no permission to read the file", path) from None
    except OSError as exc:
        raise MetadataError("unreadable", f"cannot read: {exc.strerror or exc}", path) from exc
    if not head:
        raise MetadataError("empty", "the file is empty (0 bytes)", path)
    for signature, code, message in _FOREIGN_SIGNATURES:
        if head.startswith(signature):
            raise MetadataError(code, message, path)
    return head, info


def _open_failure(path: str, head: bytes, size: int, exc: OSError | RuntimeError) -> MetadataError:
    errno = getattr(exc, "errno", None)
    reason = getattr(exc, "strerror", None) or str(exc)
    if head.startswith(_HDF5_SIGNATURE):
        declared = _hdf5_declared_size(head)
        if declared is not None and size < declared:
            return _truncated(path, size, declared)
        return MetadataError("unreadable", f"corrupt netCDF-4/HDF5 file ({reason})", path)
    if head[:4] in _CLASSIC_VERSIONS:
        return MetadataError("unreadable", f"corrupt netCDF classic file ({reason})", path)
    # decided by the signature, not only by the library's errno, which depends on what the
    # library opened before (HDF5 error state)
    if errno == _NC_ENOTNC or not head.startswith(b"CDF"):
        return MetadataError("not-netcdf", f"not a netCDF file ({_describe(head)})", path)
    return MetadataError("unreadable", f"the netCDF library cannot read it ({reason})", path)


def _describe(head: bytes) -> str:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return f"it starts with {head[:8]!r}"
    if all(c.isprintable() or c.isspace() for c in text):
        return "a text file"
    return f"it starts with {head[:8]!r}"


def _truncated(path: str, size: int, declared: int) -> MetadataError:
    return MetadataError(
        "truncated",
        f"truncated: {size} bytes but its header declares {declared} "
        "(interrupted download or copy?): fetch it again",
        path,
    )


def _hdf5_declared_size(head: bytes) -> int | None:
    """End-of-file address from an HDF5 superblock at offset 0 (versions 0-3), or None."""
    if len(head) < 12 or not head.startswith(_HDF5_SIGNATURE):
        return None
    version = head[8]
    if version in (0, 1):
        offset_field, base = 13, 24 + 4 * version
    elif version in (2, 3):
        offset_field, base = 9, 12
    else:
        return None
    if len(head) <= offset_field:  # cut inside the superblock: its size is unknown
        return None
    offset_size = head[offset_field]
    fmt = {4: "<I", 8: "<Q"}.get(offset_size)
    if fmt is None or len(head) < base + 3 * offset_size:
        return None
    base_address = struct.unpack_from(fmt, head, base)[0]
    end_address = struct.unpack_from(fmt, head, base + 2 * offset_size)[0]
    return int(base_address + end_address)


def _check_classic_length(path: str, version: int, size: int) -> None:
    try:
        with open(path, "rb") as f:
            declared = _ClassicHeader(f, version, size).declared_size()
    except EOFError:
        raise MetadataError(
            "truncated",
            f"truncated inside its header ({size} bytes; interrupted download or copy?): "
            "fetch it again",
            path,
        ) from None
    except (ValueError, KeyError, IndexError, struct.error) as exc:
        raise MetadataError("unreadable", f"corrupt netCDF classic header ({exc})", path) from exc
    if size < declared:
        raise _truncated(path, size, declared)


_NC_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}
_TAG_DIMENSION, _TAG_VARIABLE, _TAG_ATTRIBUTE = 0x0A, 0x0B, 0x0C


def _pad4(n: int) -> int:
    return (n + 3) & ~3


class _ClassicHeader:
    """Just enough of a netCDF classic header (CDF-1, CDF-2, CDF-5; the "NetCDF Classic and
    64-bit Offset Format" spec) to know how long the file must be."""

    def __init__(self, f: BinaryIO, version: int, size: int) -> None:
        self.f = f
        self.size = size
        self.count = ">Q" if version == 5 else ">I"  # nelems, dimension ids, numrecs
        self.offset = ">I" if version == 1 else ">Q"
        self.streaming = 2 ** (64 if version == 5 else 32) - 1

    def declared_size(self) -> int:
        self._take(4)  # magic, already checked
        numrecs = self._unpack(self.count)
        dims = [self._dimension() for _ in range(self._list(_TAG_DIMENSION))]
        self._skip_attributes()
        ends = [self.f.tell()]
        records: list[tuple[int, int]] = []  # (begin, bytes per record) of record variables
        for _ in range(self._list(_TAG_VARIABLE)):
            begin, lengths, item = self._variable(dims)
            if lengths and lengths[0] == 0:
                records.append((begin, math.prod(lengths[1:]) * item))
            else:
                ends.append(begin + math.prod(lengths) * item)
        if records and 0 < numrecs != self.streaming:
            # the spec pads each record variable to 4 bytes except a lone one; unpadded is the
            # lenient reading, so a valid file is never called truncated
            recsize = sum(_pad4(n) for _, n in records) if len(records) > 1 else records[0][1]
            ends.extend(begin + (numrecs - 1) * recsize + n for begin, n in records)
        return max(ends)

    def _take(self, n: int) -> bytes:
        if n > self.size - self.f.tell():
            raise EOFError  # checked first: a corrupt length must not allocate gigabytes
        return self.f.read(n)

    def _unpack(self, fmt: str) -> int:
        value: int = struct.unpack(fmt, self._take(struct.calcsize(fmt)))[0]
        return value

    def _list(self, tag: int) -> int:
        found, n = self._unpack(">I"), self._unpack(self.count)
        if found == 0 and n == 0:
            return 0  # ABSENT
        if found != tag:
            raise ValueError(f"expected list tag {tag:#x}, found {found:#x}")
        return n

    def _skip_name(self) -> None:
        self._take(_pad4(self._unpack(self.count)))

    def _dimension(self) -> int:
        self._skip_name()
        return self._unpack(self.count)

    def _skip_attributes(self) -> None:
        for _ in range(self._list(_TAG_ATTRIBUTE)):
            self._skip_name()
            item = _NC_TYPE_SIZES[self._unpack(">I")]
            self._take(_pad4(self._unpack(self.count) * item))

    def _variable(self, dims: list[int]) -> tuple[int, list[int], int]:
        self._skip_name()
        lengths = [dims[self._unpack(self.count)] for _ in range(self._unpack(self.count))]
        self._skip_attributes()
        item = _NC_TYPE_SIZES[self._unpack(">I")]
        self._unpack(self.count)  # vsize: wrong for variables over 4 GiB, recomputed instead
        return self._unpack(self.offset), lengths, item


def _import(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise MetadataError(
            "missing-dependency",
            f"reading netCDF needs {name}: pip install 'ndnsci[netcdf]'",
        ) from exc


def _guarded(path: str, func: Any, *args: Any) -> Any:
    """Run a header reader; a library failure after a successful open (a corrupt metadata
    block, an undecodable name) becomes MetadataError("unreadable") instead of a traceback.
    Other exceptions are bugs of ours and propagate."""
    try:
        return func(*args)
    except (OSError, RuntimeError, UnicodeError) as exc:
        raise MetadataError("unreadable", f"cannot read the header ({exc})", path) from exc


# ----------------------------------------------------------------------- reading a header


def _naming_attributes(ds: Any) -> dict[str, Any]:
    attributes = _attributes(ds)
    wanted = [
        key
        for key in ("variable_id", "time_coverage_start", "time_coverage_end")
        if attribute(attributes, key) is None
    ]
    if not wanted:
        return attributes
    by_name = {info.name: info for info in (_variable_info(v) for v in ds.variables.values())}
    derived: dict[str, Any] = {}
    if "variable_id" in wanted:
        derived["variable_id"] = main_variable(by_name.values())
    if "time_coverage_start" in wanted or "time_coverage_end" in wanted:
        derived["time_coverage_start"], derived["time_coverage_end"] = _naming_times(ds, by_name)
    added = sorted(k for k, v in derived.items() if k in wanted and v is not None)
    attributes.update((k, derived[k]) for k in added)
    if added:
        attributes[DERIVED_ATTRIBUTES] = added  # the translators record where they came from
    return attributes


def _naming_times(ds: Any, by_name: Mapping[str, VariableInfo]) -> tuple[str | None, str | None]:
    """First and last time coordinate values (a climatology: its bounds' extremes), ISO 8601."""
    info = _find_time(by_name)
    if info is None:
        return None, None
    warnings: list[Issue] = []  # the header's oddities are extract()'s business, not naming's
    length = info.shape[0] if info.shape else 1
    climatology = attribute(info.attributes, "climatology")
    bounds = by_name.get(climatology) if isinstance(climatology, str) else None
    if bounds is not None and _fits(bounds, info):
        first, last = _bounds_range(ds, bounds.name, length, warnings)
    else:
        first, last = _first_last(ds.variables[info.name], length, info.name, warnings)
        cells = _bounds_of(info, by_name, warnings)
        if cells is not None and info.shape and length:
            first, last = _records_in_cells(ds.variables[cells], length, first, last, warnings)
    calendar = _text(attribute(info.attributes, "calendar")) or "standard"
    start, end = _decode_times([first, last], info.units, calendar, info, warnings)
    return start, end


def _records_in_cells(
    bounds: Any, length: int, first: float | None, last: float | None, warnings: list[Issue]
) -> tuple[float | None, float | None]:
    """The first and last record times, checked against their cells' bounds: a time that lies
    in its cell (lower bound included) is kept; one outside it, or on its upper bound (a
    model that stamps a monthly mean at the month's end), or missing, is replaced by the
    cell's middle, which is in the period the record stands for (``time-range-from-axis``)."""
    rows = _values(bounds, (_ends(length), slice(None)), bounds.name, warnings)
    vertices = int(bounds.shape[-1]) if bounds.ndim else 0
    if vertices < 1 or len(rows) != vertices * (2 if length > 1 else 1):
        return first, last
    cells = [rows[:vertices], rows[-vertices:]]
    return _in_cell(first, cells[0]), _in_cell(last, cells[1])


def _in_cell(value: float | None, cell: list[float | None]) -> float | None:
    ends = [v for v in cell if v is not None]
    if not ends:
        return value
    low, high = min(ends), max(ends)
    if value is not None and low <= value < high:
        return value
    return (low + high) / 2


def _read_header(ds: Any, path: str, info: os.stat_result) -> FileMetadata:
    warnings: list[Issue] = []
    attributes = _attributes(ds)
    variables = [_variable_info(v) for v in ds.variables.values()]
    by_name = {v.name: v for v in variables}
    return FileMetadata(
        path=path,
        size=info.st_size,
        modified=_dt.datetime.fromtimestamp(info.st_mtime, _dt.UTC).isoformat(timespec="seconds"),
        format=str(ds.file_format),
        global_attributes=attributes,
        dimensions=[
            DimensionInfo(name, len(dim), dim.isunlimited()) for name, dim in ds.dimensions.items()
        ],
        variables=variables,
        groups=list(ds.groups),
        time=_time_coverage(ds, by_name, warnings),
        spatial=_spatial_bounds(ds, by_name, warnings),
        derived=derive_facets(attributes),
        warnings=warnings,
    )


def _attributes(obj: Any) -> dict[str, Any]:
    return {name: _plain(obj.getncattr(name)) for name in obj.ncattrs()}


def _plain(value: Any) -> Any:
    """An attribute value as JSON: numpy scalars and arrays become Python values and lists, bytes
    are decoded, non-finite floats become strings (JSON has no NaN)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        if dtype.kind == "f" and dtype.itemsize < 8:
            # float32 1e20 is 1.0000000200408773e+20 as a double: keep the digits as written
            value = [float(str(x)) for x in value.flat] if value.ndim else float(str(value))
            return _plain(value)
        return _plain(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else _NON_FINITE[str(value)]
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _variable_info(var: Any) -> VariableInfo:
    attributes = _attributes(var)
    return VariableInfo(
        name=var.name,
        dtype=_dtype_name(var),
        dimensions=tuple(var.dimensions),
        shape=tuple(int(n) for n in var.shape),
        units=_text(attribute(attributes, "units")),
        standard_name=_text(attribute(attributes, "standard_name")),
        long_name=_text(attribute(attributes, "long_name")),
        attributes=attributes,
    )


def _dtype_name(var: Any) -> str:
    if var.dtype is str:  # netCDF-4 variable-length strings
        return "string"
    datatype = var.datatype
    kind = getattr(datatype, "kind", None)
    if kind is None:  # a user-defined compound, vlen or enum type of a netCDF-4 file
        return f"{type(datatype).__name__}:{getattr(datatype, 'name', None)}"
    if kind == "S" and datatype.itemsize == 1:
        return "char"
    return str(datatype.name)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# ---------------------------------------------------------------------------- CF time axis


def _time_coverage(
    ds: Any, by_name: Mapping[str, VariableInfo], warnings: list[Issue]
) -> TimeCoverage | None:
    info = _find_time(by_name)
    if info is None:
        return None
    var = ds.variables[info.name]
    length = info.shape[0] if info.shape else 1
    bounds = _bounds_of(info, by_name, warnings, "climatology")
    first, last = _first_last(var, length, info.name, warnings)
    low, high = (None, None) if bounds is None else _bounds_range(ds, bounds, length, warnings)
    ends = [v for v in (low, high) if v is not None] or [v for v in (first, last) if v is not None]
    raw_start, raw_end = (min(ends), max(ends)) if ends else (None, None)
    units = info.units
    calendar = _text(attribute(info.attributes, "calendar")) or "standard"
    decoded = _decode_times([raw_start, raw_end, first, last], units, calendar, info, warnings)
    return TimeCoverage(
        variable=info.name,
        units=units,
        calendar=calendar,
        length=length,
        bounds=bounds,
        start=decoded[0],
        end=decoded[1],
        first=decoded[2],
        last=decoded[3],
        raw_start=raw_start,
        raw_end=raw_end,
    )


def _find_time(by_name: Mapping[str, VariableInfo]) -> VariableInfo | None:
    """The time coordinate: CF markers (standard_name, axis, "<unit> since <date>") on a 1-D or
    scalar variable, a coordinate variable (named like its dimension) first, the name last."""
    best, best_score = None, 0
    for info in by_name.values():
        if len(info.shape) > 1:
            continue
        score = _time_score(info)
        if score and info.dimensions == (info.name,):
            score += 10
        if score > best_score:
            best, best_score = info, score
    return best


def _time_score(info: VariableInfo) -> int:
    if info.standard_name == "time":
        return 4
    if str(attribute(info.attributes, "axis")).upper() == "T":
        return 3
    if info.units is not None and " since " in info.units:
        return 2
    return 1 if info.name.lower() == "time" else 0


def _bounds_of(
    info: VariableInfo, by_name: Mapping[str, VariableInfo], warnings: list[Issue], *alt: str
) -> str | None:
    """Name of the valid bounds variable of ``info``: the one its CF ``bounds`` (or e.g.
    ``climatology``) attribute names, else one named ``<name>_bnds`` or ``<name>_bounds``
    (files whose attribute was lost in post-processing still have them)."""
    declared = next(
        (v for k in ("bounds", *alt) if isinstance(v := attribute(info.attributes, k), str)),
        None,
    )
    if declared is None:
        guesses = (f"{info.name}_bnds", f"{info.name}_bounds")
        return next((g for g in guesses if g in by_name and _fits(by_name[g], info)), None)
    bounds = by_name.get(declared)
    if bounds is None:
        warnings.append(Issue("bounds-missing", f"{info.name}: bounds {declared!r} absent"))
        return None
    if not _fits(bounds, info):
        warnings.append(
            Issue(
                "bounds-invalid",
                f"{info.name}: bounds variable {declared!r} has shape {list(bounds.shape)}, "
                f"expected {[*info.shape, 'n']}; ignored",
            )
        )
        return None
    return declared


def _fits(bounds: VariableInfo, info: VariableInfo) -> bool:
    """CF bounds have the coordinate's shape plus one trailing dimension (the vertices)."""
    return len(bounds.shape) == len(info.shape) + 1 and bounds.shape[:-1] == info.shape


def _first_last(
    var: Any, length: int, name: str, warnings: list[Issue]
) -> tuple[float | None, float | None]:
    if length == 0:
        warnings.append(Issue("time-empty", f"{name}: the time axis has no steps"))
        return None, None
    values = _values(var, _ends(length) if var.ndim else (), name, warnings)
    first, last = (values[0], values[-1]) if values else (None, None)
    if first is None or last is None:
        which = "all steps" if first is None and last is None else "first or last step"
        warnings.append(Issue("time-missing-values", f"{name}: {which} missing (fill values)"))
    return first, last


def _ends(length: int) -> slice:
    """Index of the first and last entries in one strided read (one library call, not two)."""
    return slice(0, length, max(length - 1, 1))


def _values(var: Any, index: Any, name: str, warnings: list[Issue]) -> list[float | None]:
    """``var[index]`` flattened, None for missing and non-finite values, [] when unreadable."""
    np = _import("numpy")
    try:
        data = np.ma.atleast_1d(var[index])
        missing = np.ma.getmaskarray(data).ravel()
        numbers = np.ma.getdata(data).ravel()
        finite = np.isfinite(numbers)
    except Exception as exc:  # any library or conversion error: the header is still useful
        warnings.append(Issue("values-unreadable", f"{name}: cannot read values ({exc})"))
        return []
    return [
        float(_plain(x)) if ok and not gone else None
        for x, ok, gone in zip(numbers, finite, missing, strict=True)
    ]


def _bounds_range(
    ds: Any, name: str, length: int, warnings: list[Issue]
) -> tuple[float | None, float | None]:
    """Earliest and latest bound of the first and last cells (either order: an axis may
    decrease)."""
    var = ds.variables[name]
    extremes = _min_max(var, [_ends(length) if var.ndim == 2 else ()], name, warnings)
    return (None, None) if extremes is None else extremes


def _min_max(
    var: Any, rows: list[Any], name: str, warnings: list[Issue]
) -> tuple[float, float] | None:
    """Smallest and largest finite value of ``var[row]`` over ``rows``; None when there is none.

    Never raises: a read failure (corrupt chunk, a string-typed axis) becomes a warning, because
    the rest of the header is still worth having."""
    np = _import("numpy")
    var.set_always_mask(False)  # a plain ndarray unless values are missing: much cheaper
    parts = []
    for row in rows:
        try:
            data = var[row]
            if np.ma.isMaskedArray(data):
                data = data.compressed()
            data = np.ravel(data)
            parts.append(data[np.isfinite(data)])
        except Exception as exc:  # any library or conversion error, see docstring
            warnings.append(Issue("values-unreadable", f"{name}: cannot read values ({exc})"))
            return None
    values = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if values.size == 0:
        return None
    # _plain keeps float32 digits as written (-89.5, not -89.49999237060547)
    return float(_plain(values.min())), float(_plain(values.max()))


def _decode_times(
    values: list[float | None],
    units: str | None,
    calendar: str,
    info: VariableInfo,
    warnings: list[Issue],
) -> list[str | None]:
    if units is None or " since " not in units:
        problem = "no units" if units is None else f"units {units!r} are not '<unit> since <date>'"
        warnings.append(Issue("time-units-invalid", f"{info.name}: {problem}; raw values reported"))
        return [None] * len(values)
    present = [v for v in values if v is not None]
    if not present:
        return [None] * len(values)
    cftime = _import("cftime")
    try:
        dates = iter(cftime.num2date(present, units, calendar.lower()))
    except (ValueError, TypeError, OverflowError) as exc:
        warnings.append(
            Issue(
                "time-undecodable",
                f"{info.name}: cannot decode {units!r} in calendar {calendar!r} ({exc}); "
                "raw values reported",
            )
        )
        return [None] * len(values)
    return [None if v is None else _iso(next(dates)) for v in values]


def _iso(date: Any) -> str:
    """ISO-8601 of a cftime date, rounded to the second (float days give 11:59:59.999987)."""
    if date.microsecond >= 500_000:
        date = date + _dt.timedelta(seconds=1)
    return str(date.replace(microsecond=0).isoformat())


# --------------------------------------------------------------------------- lat/lon box


_LAT_UNITS = {"degrees_north", "degree_north", "degree_n", "degrees_n", "degreen", "degreesn"}
_LON_UNITS = {"degrees_east", "degree_east", "degree_e", "degrees_e", "degreee", "degreese"}
_AXES = {
    "latitude": (_LAT_UNITS, ("lat", "latitude", "nav_lat")),
    "longitude": (_LON_UNITS, ("lon", "longitude", "nav_lon")),
}


class _Range(NamedTuple):
    low: float
    high: float
    source: str  # the variable read: the coordinate or its bounds
    sampled: bool


def _spatial_bounds(
    ds: Any, by_name: Mapping[str, VariableInfo], warnings: list[Issue]
) -> SpatialBounds | None:
    found = [_find_axis(by_name, axis) for axis in ("latitude", "longitude")]
    if found == [None, None]:
        return None
    lat, lon = (None if i is None else _coordinate_range(ds, i, by_name, warnings) for i in found)
    if lat is None and lon is None:
        warnings.append(Issue("spatial-missing-values", "latitude/longitude hold no values"))
        return None
    if lat is not None and (lat.low < -90.000001 or lat.high > 90.000001):
        warnings.append(
            Issue("latitude-out-of-range", f"{lat.source}: {lat.low}..{lat.high} degrees")
        )
    west, east = (None, None) if lon is None else _west_east(lon.low, lon.high)
    return SpatialBounds(
        lat_min=None if lat is None else lat.low,
        lat_max=None if lat is None else lat.high,
        lon_min=None if lon is None else lon.low,
        lon_max=None if lon is None else lon.high,
        west=west,
        east=east,
        source=tuple(r.source for r in (lat, lon) if r is not None),
        approximate=any(r.sampled for r in (lat, lon) if r is not None),
    )


def _find_axis(by_name: Mapping[str, VariableInfo], axis: str) -> VariableInfo | None:
    """Latitude or longitude: by standard_name, then units, then name; geographic only (rotated
    ``grid_latitude`` is skipped); a coordinate variable wins over 2-D auxiliary ones."""
    units, names = _AXES[axis]
    bounds = {
        b for v in by_name.values() if isinstance(b := attribute(v.attributes, "bounds"), str)
    }
    best, best_score = None, 0
    for info in by_name.values():
        if info.name in bounds:
            continue
        if info.standard_name == axis:
            score = 3
        elif (info.units or "").lower() in units:
            score = 2
        else:
            score = 1 if info.name.lower() in names else 0
        if score and info.dimensions == (info.name,):
            score += 10
        if score > best_score:
            best, best_score = info, score
    return best


def _coordinate_range(
    ds: Any, info: VariableInfo, by_name: Mapping[str, VariableInfo], warnings: list[Issue]
) -> _Range | None:
    """The coordinate's range, from its bounds when they are valid and hold values."""
    bounds = _bounds_of(info, by_name, warnings)
    for name in (bounds, info.name) if bounds else (info.name,):
        extremes, sampled = _read_limited(ds.variables[name], name, warnings)
        if extremes is not None:
            return _Range(*extremes, name, sampled)
    return None


def _read_limited(
    var: Any, name: str, warnings: list[Issue]
) -> tuple[tuple[float, float] | None, bool]:
    """(min, max) of a coordinate's finite values and whether it was sampled: at most
    COORDINATE_READ_LIMIT values are read; a bigger curvilinear grid is read as evenly spaced
    whole rows (first and last included), which keeps the extremes of the usual ocean and
    regional grids."""
    size = math.prod(var.shape)
    if size <= COORDINATE_READ_LIMIT or var.ndim == 0:
        return _min_max(var, [()], name, warnings), False
    count = max(2, COORDINATE_READ_LIMIT // max(1, size // var.shape[0]))
    last = var.shape[0] - 1
    rows: list[Any] = sorted({round(i * last / (count - 1)) for i in range(count)})
    return _min_max(var, rows, name, warnings), True


def _west_east(lon_min: float, lon_max: float) -> tuple[float, float]:
    if lon_max - lon_min >= 360.0:
        return -180.0, 180.0
    west = (lon_min + 180.0) % 360.0 - 180.0
    east = (lon_max + 180.0) % 360.0 - 180.0
    if east == -180.0 and lon_max > lon_min:
        east = 180.0  # an eastern edge on the antimeridian is +180, not -180
    # 313.08163 - 360 is -46.91836999999998: drop the noise the subtraction adds
    return round(west, 9), round(east, 9)
