"""``ndnsci fetch``'s plain command lines are read without argparse (DEVELOPERS.md, "Start-up
budget"): what ``parse_plain`` reads must be exactly what argparse reads, and it must leave to
argparse everything else (errors, --help, abbreviations, ``--opt=value``)."""

from __future__ import annotations

import contextlib
import io
import random

import pytest

from ndnsci.cli import build_parser
from ndnsci.cli.fetch import parse_plain

WORDS = [
    "/a/b.nc", "/c", "x", ".", "out dir", "", "-", "--", "-5", "64", "0", "+7", "1_0", "x1",
    "-o", "--output", "-q", "--quiet", "--json", "--ls", "--resume", "--restart", "--cc",
    "aimd", "cubic", "reno", "--window", "--max-window", "--lifetime", "--parallel",
    "--retries", "--trust", "--engine", "--transport", "ndn-dpdk", "--progress", "text",
    "--layout", "drs", "flat", "--query", "model=HadCM3", "--manifest", "--report",
    "--catalog", "http://h:1", "--win", "--window=8", "-qo", "-h", "--help", "--version",
    "--json=1", "-o.",
]  # fmt: skip


def argparse_reads(words: list[str]) -> dict[str, object] | None:
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            return vars(build_parser(only="fetch").parse_args(["fetch", *words]))
    except SystemExit:
        return None


def test_the_plain_reading_is_argparses_or_none() -> None:
    rng = random.Random(14)
    read = 0
    for _ in range(4000):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 7))]
        plain = parse_plain(words)
        if plain is not None:
            assert vars(plain) == argparse_reads(words), words
            read += 1
    assert read > 400  # the plain reader does read plain command lines


@pytest.mark.parametrize(
    "words",
    [
        ["/bench/ttfb/small.nc", "-o", ".", "-q", "--cc", "aimd", "--window", "64"],
        ["-o", "out", "/a", "/b", "--json"],
        ["/a", "--engine", "ndnc", "--progress", "none", "--retries", "0"],
        [],
    ],
)
def test_plain_command_lines_are_read_without_argparse(words: list[str]) -> None:
    plain = parse_plain(words)
    assert plain is not None
    assert vars(plain) == argparse_reads(words)


@pytest.mark.parametrize(
    "words",
    [
        ["/a", "-o"],  # a value missing
        ["/a", "--window", "many"],  # not a number
        ["/a", "--cc", "reno"],  # not a choice
        ["/a", "-q", "/b"],  # two runs of NAMEs: argparse refuses the second
        ["/a", "--win", "8"],  # an abbreviation
        ["/a", "--window=8"],
        ["/a", "-h"],
        ["/a", "-o", "-weird-dir"],
        ["", "/a"],
    ],
)
def test_anything_else_is_left_to_argparse(words: list[str]) -> None:
    assert parse_plain(words) is None
