"""``ndnsci inspect``: what a netCDF file holds, read from its header only.

Prints, per file, the format and size, the time coverage and calendar, the lat/lon box, the
dimensions, the variables with their units and the global attributes. Data variables are never
read, so this is fast on files of any size; ``--checksum`` adds the SHA-256 of the whole file.

With ``--json`` the output is one JSON object per file, in input order: the keys of
``FileMetadata.to_dict()`` with ``"ok": true`` and ``"error": null``, or, for a file that cannot be
read, ``{"path": ..., "ok": false, "error": {"code": ..., "message": ...}}``.
A bad file never stops the command: the others are still inspected.
Exit status: 0 when every file was read, 1 when some could not be, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import IO, Any

from ndnsci_translators import netcdf

# values longer than this are cut in the readable summary (--json always has them whole)
_WIDTH = 100


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="show a netCDF file's metadata (header only: time, lat/lon, variables, attributes)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="netCDF files")
    p.add_argument("--json", action="store_true", help="one JSON object per file (JSON lines)")
    p.add_argument(
        "--checksum", action="store_true", help="also compute the SHA-256 of each whole file"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    failed = read = 0
    for path in args.files:
        try:
            meta = netcdf.extract(path, checksum=args.checksum)
        except netcdf.MetadataError as exc:
            failed += 1
            _report_failure(path, exc, as_json=args.json)
            continue
        if args.json:
            _write(sys.stdout, _dumps({"path": meta.path, "ok": True, **_rest(meta)}))
        else:
            _write(sys.stdout, ("\n" if read else "") + "\n".join(summary(meta)))
        read += 1
    if not args.json and len(args.files) > 1:
        print(f"{len(args.files)} files: {read} read, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


def _rest(meta: netcdf.FileMetadata) -> dict[str, Any]:
    record = meta.to_dict()
    del record["path"]
    record["error"] = None
    return record


def _report_failure(path: str, exc: netcdf.MetadataError, as_json: bool) -> None:
    if as_json:
        _write(sys.stdout, _dumps({"path": path, "ok": False, "error": exc.to_dict()}))
    else:
        print(f"ndnsci inspect: {path}: {exc.message} [{exc.code}]", file=sys.stderr, flush=True)


def _dumps(record: dict[str, Any]) -> str:
    # allow_nan=False: extract() already turned NaN into strings; never emit invalid JSON
    return json.dumps(record, ensure_ascii=False, allow_nan=False)


def _write(out: IO[str], text: str) -> None:
    out.write(text + "\n")
    out.flush()  # one file at a time, so a long run shows progress and pipes stay live


def summary(meta: netcdf.FileMetadata) -> list[str]:
    """The readable report of one file, as lines."""
    lines = [meta.path, _field("format", f"{meta.format}, {meta.size:,} bytes")]
    lines.append(_field("time", _time_line(meta.time)))
    lines.append(_field("lat/lon", _box_line(meta.spatial)))
    dims = ", ".join(
        f"{d.name}={d.size}" + (" (unlimited)" if d.unlimited else "") for d in meta.dimensions
    )
    lines.append(_field("dimensions", dims or "none"))
    if meta.sha256:
        lines.append(_field("sha256", meta.sha256))
    if meta.derived:
        lines.append(_field("derived", ", ".join(f"{k}={v}" for k, v in meta.derived.items())))
    lines.append(_field("variables", "" if meta.variables else "none"))
    lines.extend(_table(_variable_rows(meta.variables)))
    lines.append(_field("attributes", "" if meta.global_attributes else "none"))
    lines.extend(_table((k, _show(v)) for k, v in meta.global_attributes.items()))
    if meta.warnings:
        lines.append(_field("warnings", ""))
        lines.extend(f"    {w.code}: {w.message}" for w in meta.warnings)
    return [line.rstrip() for line in lines]


def _field(label: str, value: str) -> str:
    return f"  {label:<11} {value}"


def _time_line(time: netcdf.TimeCoverage | None) -> str:
    if time is None:
        return "none"
    steps = f"{time.length} step{'' if time.length == 1 else 's'}"
    source = f"{steps}, from {time.bounds}" if time.bounds else steps
    if time.raw_start is None:
        return f"{steps}, no values (variable {time.variable})"
    if time.start is None:
        raw = f"{time.raw_start:.10g} to {time.raw_end:.10g} {time.units or '(no units)'}"
        return f"{raw} (not decoded, see warnings; {steps})"
    return f"{time.start} to {time.end} (calendar {time.calendar}, {source})"


def _box_line(box: netcdf.SpatialBounds | None) -> str:
    if box is None:
        return "none"
    parts = []
    if box.lat_min is not None:
        parts.append(f"lat {box.lat_min:.10g} to {box.lat_max:.10g}")
    if box.lon_min is not None:
        parts.append(f"lon {box.lon_min:.10g} to {box.lon_max:.10g}")
    note = "sampled, " if box.approximate else ""
    return f"{', '.join(parts)} ({note}from {', '.join(box.source)})"


def _variable_rows(variables: list[netcdf.VariableInfo]) -> Iterable[tuple[str, str]]:
    for v in variables:
        described = [f"{v.dtype}({', '.join(v.dimensions)})"]
        if v.units:
            described.append(f"[{v.units}]")
        if v.long_name or v.standard_name:
            described.append(str(v.long_name or v.standard_name))
        yield v.name, _show(" ".join(described))


def _table(rows: Iterable[tuple[str, str]]) -> list[str]:
    rows = list(rows)
    width = min(24, max((len(name) for name, _ in rows), default=0))
    return [f"    {name:<{width}}  {value}" for name, value in rows]


def _show(value: Any) -> str:
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    text = " ".join(text.split())  # history and licence attributes hold newlines
    return text if len(text) <= _WIDTH else text[: _WIDTH - 3] + "..."
