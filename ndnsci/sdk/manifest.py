"""Manifests, and :class:`ManifestEntry`: the one item the fetch engine takes for a file.

Search results, NDN names, manifest lines and mappings all become a ``ManifestEntry`` (name,
path below the output, size and SHA-256 when known) before a fetch. A manifest is the list of
files a bulk download fetches, one JSON object per line.

The catalog writes them (``POST /api/v1/manifests``, or ``ndnsci search --json``)::

    {"name": "/CMIP5/output1/.../tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc",
     "size": 1234, "sha256": "9f...", "filename": "tas_...nc",
     "path": "CMIP5/output1/.../tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc"}

``name`` is required; ``path`` (where the file goes, relative to the output directory) defaults
to the name's components; ``size`` and ``sha256``, when given, are checked after the download.
A bare NDN name (``/CMIP5/...``) is a line too; blank lines and ``#`` comments are skipped.
A line the catalog could not resolve (``{"name": ..., "error": "not found"}``) is a failure to
report, not a file to fetch.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from ndnsci.errors import ManifestError, QueryError

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


def _is_sha256(text: str) -> bool:
    """A SHA-256 in lower-case hex, as ``re.fullmatch("[0-9a-f]{64}", text)``."""
    return len(text) == 64 and not text.strip("0123456789abcdef")


class ManifestEntry(NamedTuple):
    """One line of a manifest: a file to fetch and where it goes (``path``, relative).

    A NamedTuple: ``entry._replace(...)`` and ``entry._asdict()``.
    """

    name: str
    path: str
    size: int | None = None
    sha256: str | None = None
    filename: str | None = None


def relative_path(name: str) -> str:
    """The DRS path of a name below a download directory: its components joined by ``/``.

    Refuses names that could escape the directory (``..``, ``.``, empty or separator-bearing
    components), as the catalog refuses them at publish time.

    >>> relative_path("/CMIP5/output1/MOHC/HadCM3/tas_Amon_x.nc")
    'CMIP5/output1/MOHC/HadCM3/tas_Amon_x.nc'
    """
    from ndnsci_translators.names import UnsafePathError, safe_relative_path, split_name

    try:
        return safe_relative_path(split_name(name))
    except UnsafePathError as exc:
        raise QueryError(f"{name!r} is not safe as a path: {exc}") from exc
    except ValueError as exc:
        raise QueryError(f"{name!r} is not a valid NDN name: {exc}") from exc


def parse_line(line: str, number: int) -> ManifestEntry | tuple[str, str]:
    """One manifest line; ``(name, reason)`` for the catalog's "could not resolve" lines.

    >>> entry = parse_line('{"name": "/CMS/store/a.root", "size": 3}', 1)
    >>> entry.path, entry.size
    ('CMS/store/a.root', 3)

    Raises:
        ManifestError: the line is neither JSON with a ``name`` nor an NDN name.
    """
    import json  # not for a fetch by name (DEVELOPERS.md "Start-up budget")

    text = line.strip()
    if text.startswith("/"):
        return ManifestEntry(name=text, path=_checked(lambda: relative_path(text), number))
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise ManifestError(f"not JSON and not an NDN name: {exc}", number) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        raise ManifestError(
            "a manifest line needs a 'name' (an NDN name such as /CMIP5/...)", number
        )
    if obj.get("error"):
        return obj["name"], str(obj["error"])
    return _entry(obj, number)


def _entry(obj: dict[str, Any], number: int) -> ManifestEntry:
    name = obj["name"]
    path = obj.get("path")
    path = (
        _safe_path(path, number)
        if path is not None
        else _checked(lambda: relative_path(name), number)
    )
    size, sha256 = obj.get("size"), obj.get("sha256")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise ManifestError(f"'size' must be a byte count, not {size!r}", number)
    if sha256 is not None and (not isinstance(sha256, str) or not _is_sha256(sha256)):
        raise ManifestError("'sha256' must be 64 lower-case hex digits", number)
    filename = obj.get("filename") if isinstance(obj.get("filename"), str) else None
    return ManifestEntry(name=name, path=path, size=size, sha256=sha256, filename=filename)


def _checked(make: Any, number: int) -> str:
    try:
        path: str = make()
    except QueryError as exc:
        raise ManifestError(str(exc), number) from None
    return path


def _safe_path(path: object, number: int) -> str:
    """A relative path that stays inside the output directory, or ManifestError."""
    from ndnsci_translators.names import UnsafePathError, safe_relative_path

    if not isinstance(path, str):
        raise ManifestError(f"'path' must be a relative file path, not {path!r}", number)
    try:
        return safe_relative_path(path)
    except UnsafePathError as exc:
        raise ManifestError(
            f"'path' {path!r} would leave the output directory: {exc}", number
        ) from None


def parse(lines: Iterable[str]) -> Iterator[ManifestEntry | tuple[str, str] | ManifestError]:
    """Every line's entry, unresolved ``(name, reason)`` or error: nothing raises."""
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            yield parse_line(line, number)
        except ManifestError as exc:
            yield exc


def read_manifest(path: str | os.PathLike[str]) -> list[ManifestEntry]:
    """The entries of a manifest file, strictly.

    Example::

        >>> entries = ndnsci.read_manifest("tas.jsonl")
        >>> ndnsci.fetch(entries, "data")

    Raises:
        ManifestError: a line is malformed or names a file the catalog could not resolve
            (the message gives its number); nothing is returned then.
        OSError: the file cannot be read.
    """
    entries = []
    with open(path, encoding="utf-8") as f:
        for item in parse(f):
            if isinstance(item, ManifestEntry):
                entries.append(item)
            elif isinstance(item, ManifestError):
                raise item
            else:  # the catalog could not resolve it: (name, reason)
                raise ManifestError(f"{item[0]}: {item[1]}")
    return entries
