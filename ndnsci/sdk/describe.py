"""Describe a file: the one step from a file below an archive to a publish record, or to a
quarantine entry saying why it cannot be published.

``ndnsci translate --metadata``, ``ndnsci scan --metadata``, ``ndnsci publish`` and
``ndnsci serve --catalog`` all name files here, so a file gets the same name (or the same
refusal) whichever of them looks at it:

- :func:`walk` lists the files below a directory in sorted order; :func:`found` lists those of
  several roots once each, with their path below the root (the record's ``original_path``).
- A file whose name ends in ``.nc`` or ``.nc4`` (any case) is netCDF. Its header is read (one
  open), and the translator gets :func:`ndnsci_translators.netcdf.naming_attributes`: the
  global attributes plus the main variable and the time coverage derived from the contents,
  so a file stored under a non-DRS name is named from what it holds. A netCDF file that
  cannot be read is quarantined with the reader's code (``truncated``, ``not-netcdf``, ...):
  naming it from its path alone would publish a damaged file.
- Every other file (CMS ``.root`` files, named by their LFN) is named from its path alone.
- A file no translator can name is quarantined with the translator's code.

The path a file is translated from is the path as walked (what the user gave, symbolic links
kept), so the DRS directories a translator reads are the ones the user sees.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ndnsci_translators import Translation, translate
from ndnsci_translators._core import failure
from ndnsci_translators.registry import AUTO

#: file name endings read as netCDF (compared lower-case)
NETCDF_SUFFIXES = (".nc", ".nc4")


@dataclass(frozen=True, slots=True)
class DescribedFile:
    """A file that can be published: its translation and what the catalog keeps of it."""

    #: the file as found (never published: names say what a file is, not where it lies)
    path: str
    translation: Translation
    size: int
    mtime: float
    mtime_ns: int
    #: the path below the directory it was found in (None for a file given by itself)
    original_path: str | None = None
    #: the netCDF header (``FileMetadata.to_dict()`` without the path), when read
    metadata: dict[str, Any] | None = None
    sha256: str | None = None

    @property
    def name(self) -> str:
        assert self.translation.name is not None
        return self.translation.name

    @property
    def source(self) -> str:
        """Where the record came from, for reports."""
        return self.path

    def to_json(self) -> dict[str, Any]:
        """The record as ``POST /publish`` takes it (``ndnsci_catalog.records``)."""
        t = self.translation
        return {
            "scheme": t.scheme,
            "name": t.name,
            "filename": t.filename,
            "facets": t.facets,
            "corrections": [c.to_dict() for c in t.corrections],
            "original": os.path.basename(self.path),  # the file name before corrections
            "original_path": self.original_path,
            "metadata": self.metadata,
            "size": self.size,
            "mtime": self.mtime,
            "sha256": self.sha256,
        }


@dataclass(frozen=True, slots=True)
class Quarantined:
    """A file that cannot be published: a stable ``code`` and a message saying why."""

    path: str
    code: str
    message: str

    @property
    def source(self) -> str:
        return self.path

    @property
    def reason(self) -> str:
        return f"{self.code}: {self.message}"

    def to_translation(self) -> Translation:
        """As ``ndnsci translate --json`` reports a file that cannot be named."""
        return failure(self.path, None, self.code, self.message)


Described = DescribedFile | Quarantined


def is_netcdf(path: str) -> bool:
    return path.lower().endswith(NETCDF_SUFFIXES)


def describe(
    path: str,
    scheme: str = AUTO,
    checksum: bool = True,
    *,
    header: bool = True,
    original_path: str | None = None,
) -> Described:
    """One file -> a :class:`DescribedFile`, or a :class:`Quarantined` entry (never raises for a
    bad file). ``checksum``: compute the SHA-256; ``header``: keep the netCDF header in the
    record (the name is the same either way).

    >>> r = describe("tests/data/netcdf/edge/esmvalcore_tas_nondrs_name.nc", checksum=False)
    >>> r.name.rsplit("/", 1)[1]
    'tas_Amon_CanESM2_historical_r1i1p1_185001-185002.nc'
    >>> describe("tests/data/netcdf/edge/truncated_fgco2_Omon_MIROC-ESM_esmHistorical_"
    ...          "r3i1p1_185001-200512.nc").code
    'truncated'

    Raises:
        UnknownSchemeError: ``scheme`` is not a registered naming scheme.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        return Quarantined(path, "cannot-read", f"cannot read the file: {exc.strerror}")
    attributes: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    sha256: str | None = None
    if is_netcdf(path):
        read = _read_netcdf(path, checksum, header)
        if isinstance(read, Quarantined):
            return read
        attributes, metadata, sha256 = read
    translation = translate(path, scheme, attributes)
    if not translation.ok:
        error = translation.error
        code, message = (error.code, error.message) if error else ("unnamed", "cannot be named")
        return Quarantined(path, code, message)
    if checksum and sha256 is None:
        from ndnsci_translators.netcdf import sha256_file

        try:
            sha256 = sha256_file(path)
        except OSError as exc:
            return Quarantined(path, "cannot-read", f"cannot read the file: {exc.strerror}")
    return DescribedFile(
        path=path,
        translation=translation,
        size=info.st_size,
        mtime=info.st_mtime,
        mtime_ns=info.st_mtime_ns,
        original_path=original_path,
        metadata=metadata,
        sha256=sha256,
    )


def _read_netcdf(
    path: str, checksum: bool, header: bool
) -> tuple[dict[str, Any], dict[str, Any] | None, str | None] | Quarantined:
    """The naming attributes, the header (when wanted) and the SHA-256 (when computed)."""
    from ndnsci_translators import netcdf

    try:
        if not header:
            return netcdf.naming_attributes(path), None, None
        attributes, meta = netcdf.naming_and_metadata(path, checksum=checksum)
    except netcdf.MetadataError as exc:
        return Quarantined(path, exc.code, exc.message)
    except OSError as exc:  # the checksum's read
        return Quarantined(path, "cannot-read", f"cannot read the file: {exc.strerror}")
    except Exception as exc:  # a bug of the reader's on an odd file: one file, not the publish
        reason = f"the header reader failed on this file ({type(exc).__name__}: {exc})"
        return Quarantined(path, "reader-failed", reason[:500])
    metadata = meta.to_dict()
    metadata.pop("path", None)  # names are location independent: no provider paths
    return attributes, metadata, meta.sha256


def describe_all(
    files: Mapping[str, str | None] | Sequence[str],
    scheme: str = AUTO,
    checksum: bool = True,
    *,
    header: bool = True,
    jobs: int = 1,
) -> Iterator[Described]:
    """:func:`describe` of each file, in order, by ``jobs`` processes (netCDF's HDF5 library
    is not thread-safe). ``files`` may map each path to its ``original_path``."""
    paths = list(files)
    below = files if isinstance(files, Mapping) else {}
    work = [(p, scheme, checksum, header, below.get(p)) for p in paths]
    if jobs <= 1 or len(work) < 2:
        yield from map(_describe_args, work)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_describe_args, work, chunksize=4)


def _describe_args(item: tuple[str, str, bool, bool, str | None]) -> Described:
    path, scheme, checksum, header, original_path = item
    return describe(path, scheme, checksum, header=header, original_path=original_path)


def walk(root: str) -> Iterator[str]:
    """Every file below the directory ``root``, in sorted order (directories sorted too)."""
    for directory, subdirs, files in os.walk(root):
        subdirs.sort()
        for file in sorted(files):
            yield os.path.join(directory, file)


def found(roots: Iterable[str]) -> dict[str, str | None]:
    """Every file of ``roots`` (a root that is a file is itself) -> its path below the root
    it was found in (None for a file given by itself); a file under two roots is listed once,
    under the first (files are told apart by their real path)."""
    listed: dict[str, str | None] = {}
    seen: set[str] = set()
    for root in roots:
        if os.path.isdir(root):
            pairs: Iterable[tuple[str, str | None]] = (
                (path, os.path.relpath(path, root)) for path in walk(root)
            )
        else:
            pairs = [(root, None)]
        for path, below in pairs:
            real = os.path.realpath(path)
            if real not in seen:
                seen.add(real)
                listed[path] = below
    return listed
