"""``ndnsci translate``: file names, paths and LFNs -> NDN names, and back with ``--reverse``.

With ``--json`` the output is a contract other tools rely on: exactly one JSON object per input,
in input order, with the keys of :meth:`ndnsci_translators.Translation.to_dict`.
Exit status: 0 when every input was named, 1 when some could not be, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from ndnsci.sdk.describe import walk
from ndnsci_translators import Translation, get_translator, reverse, translate
from ndnsci_translators.registry import AUTO, ENTRY_POINT_GROUP, UnknownSchemeError


def _scheme_names() -> list[str]:
    """The registered schemes' names, without importing them (``ndnsci --help`` stays fast)."""
    from importlib.metadata import entry_points

    return sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "translate",
        help="translate file names or paths into NDN names (and back with --reverse)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "inputs",
        nargs="*",
        metavar="PATH",
        help="file names, paths, ESGF ids or LFNs; a directory is walked; '-' reads stdin",
    )
    p.add_argument("--stdin", action="store_true", help="read one input per line from stdin")
    p.add_argument(
        "--scheme",
        default=AUTO,
        help=f"naming scheme: auto (default) or one of {', '.join(_scheme_names())}",
    )
    p.add_argument(
        "--metadata",
        action="store_true",
        help="read the header of existing netCDF files to fill and check components (and to "
        "name files whose names are not DRS names from their contents), as `ndnsci publish` "
        "does; a netCDF file that cannot be read fails with the reader's code",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per input (JSON lines)")
    p.add_argument(
        "--reverse", action="store_true", help="inputs are NDN names: print the original file name"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.scheme != AUTO:
        try:
            get_translator(args.scheme)
        except UnknownSchemeError as exc:
            print(f"ndnsci translate: {exc}", file=sys.stderr)
            return 2
    if not args.inputs and not args.stdin:
        if sys.stdin.isatty():
            print("ndnsci translate: give PATH arguments or --stdin", file=sys.stderr)
            return 2
        args.stdin = True

    # table output writes undecodable file-name bytes back as they came
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="surrogateescape")
    convert = make_converter(args)
    writer = _JsonWriter(sys.stdout) if args.json else _TableWriter(sys.stdout, args.reverse)
    failed = 0
    for chunk in _input_chunks(args):
        results = [convert(text) for text in chunk]
        failed += sum(not r.ok for r in results)
        writer.write(results)
    writer.close()
    return 1 if failed else 0


def make_converter(args: argparse.Namespace) -> Callable[[str], Translation]:
    if args.reverse:
        return reverse
    scheme: str = args.scheme
    if not args.metadata:
        return lambda text: translate(text, scheme)

    from ndnsci.sdk.describe import DescribedFile, describe

    def with_metadata(text: str) -> Translation:
        if not os.path.isfile(text):
            return translate(text, scheme)  # a name, an ESGF id, an LFN: no file to read
        # a file is named exactly as `ndnsci publish` names it (ndnsci/sdk/describe.py)
        described = describe(text, scheme, checksum=False, header=False)
        if isinstance(described, DescribedFile):
            return described.translation
        return described.to_translation()

    return with_metadata


def _input_chunks(args: argparse.Namespace) -> Iterator[list[str]]:
    """Inputs in order, in chunks: stdin is read as it arrives so a pipe never stalls."""
    for item in args.inputs:
        if item == "-":
            yield from _stdin_chunks()
        elif os.path.isdir(item) and not args.reverse:
            yield list(walk(item))
        else:
            yield [item]
    if args.stdin:
        yield from _stdin_chunks()


def _stdin_chunks() -> Iterator[list[str]]:
    stream: io.BufferedReader = sys.stdin.buffer  # type: ignore[assignment]
    pending = b""
    while True:
        data = stream.read1(1 << 16)  # whatever is available, without waiting for a full buffer
        if not data:
            break
        lines = (pending + data).split(b"\n")
        pending = lines.pop()
        yield [_decode(line) for line in lines if line.strip()]
    if pending.strip():
        yield [_decode(pending)]


def _decode(line: bytes) -> str:
    # surrogateescape keeps undecodable bytes of real file names round-trippable
    return line.rstrip(b"\r").decode("utf-8", "surrogateescape")


class _JsonWriter:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        # ASCII output: undecodable bytes of real file names survive as \udcXX escapes
        self.dumps = json.JSONEncoder().encode

    def write(self, results: list[Translation]) -> None:
        dumps = self.dumps
        self.out.write("".join(dumps(r.to_dict()) + "\n" for r in results))
        self.out.flush()

    def close(self) -> None:
        pass


class _TableWriter:
    """Readable output: one line per input, corrections and errors indented under it."""

    def __init__(self, out: IO[str], reverse: bool = False) -> None:
        self.out = out
        self.reverse = reverse
        self.counts = {"ok": 0, "corrected": 0, "failed": 0}

    def write(self, results: list[Translation]) -> None:
        lines = []
        for r in results:
            if not r.ok:
                self.counts["failed"] += 1
                assert r.error is not None
                lines.append(f"FAIL  {r.input}\n      {r.error.code}: {r.error.message}")
                continue
            self.counts["corrected" if r.corrections else "ok"] += 1
            shown = r.filename if self.reverse else r.name
            lines.append(f"{'FIXED' if r.corrections else 'OK':<5} {r.input}\n      -> {shown}")
            if self.reverse:
                facets = ", ".join(f"{k}={v}" for k, v in r.facets.items() if v is not None)
                lines.append(f"      {facets}")
            lines.extend(f"      * {c.rule}: {c.message}" for c in r.corrections)
        if lines:
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()

    def close(self) -> None:
        c = self.counts
        total = sum(c.values())
        print(
            f"{total} inputs: {c['ok']} named, {c['corrected']} named after corrections, "
            f"{c['failed']} could not be named",
            file=sys.stderr,
        )
