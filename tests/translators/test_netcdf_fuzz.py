"""The header reader on damaged files (issue 29.1): a file cut at any length, with bits flipped
in its header, or random bytes is described or refused with a MetadataError saying why, never
another exception; a publish of a folder of them quarantines each bad file with its reason and
publishes the rest.

Bounded and seeded here (a few seconds); ``pytest --fuzz-minutes M`` or
``bench/fuzz_headers.py --minutes M`` runs every cut of every file, then random cases.
"""

from __future__ import annotations

import collections
import itertools
import json
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import headerfuzz
import pytest
from headerfuzz import HDF5
from support import run_cli

SEED = 29
#: every cut below this many bytes (signatures, the HDF5 superblock, a classic header's start)
CUTS_UP_TO = 96
RANDOM_CASES = 240


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes]]:
    return headerfuzz.base_files(tmp_path_factory.mktemp("bases"))


@pytest.mark.parametrize("length", [9, 12, 13, 14, 20, 40])
def test_an_hdf5_file_cut_inside_its_superblock_is_refused_with_a_reason(tmp_path, length):
    cut = tmp_path / "t.nc"
    cut.write_bytes(HDF5[0].read_bytes()[:length])
    assert headerfuzz.outcome(cut, f"cut at {length}") in ("truncated", "unreadable")


def test_damaged_headers_are_described_or_refused_never_an_exception(bases, tmp_path, request):
    minutes = request.config.getoption("--fuzz-minutes")
    cases: Iterator[tuple[str, bytes]] = itertools.chain(
        headerfuzz.every_cut(bases, CUTS_UP_TO),
        itertools.islice(headerfuzz.random_cases(bases, random.Random(SEED)), RANDOM_CASES),
    )
    if minutes:  # then every cut of every file and random cases, until the minutes are up
        deadline = time.monotonic() + 60 * minutes
        more = itertools.chain(
            headerfuzz.every_cut(bases), headerfuzz.random_cases(bases, random.Random(SEED + 1))
        )
        cases = itertools.chain(
            cases, itertools.takewhile(lambda _: time.monotonic() < deadline, more)
        )
    seen: collections.Counter[str] = collections.Counter()
    path = tmp_path / "case.nc"
    for label, data in cases:
        path.write_bytes(data)
        seen[headerfuzz.outcome(path, label)] += 1
    # the cases reach the reader's branches, not only its first check
    assert {"empty", "truncated", "unreadable", "not-netcdf", "described"} <= set(seen), seen


def _summary(stderr: str) -> dict[str, int]:
    last = stderr.strip().splitlines()[
        -1
    ]  # "3 published, 0 unchanged (skipped), 2 quarantined, ..."
    words = last.replace(",", "").split()
    return {"published": int(words[0]), "quarantined": int(words[5]), "collisions": int(words[7])}


GOOD = sorted((headerfuzz.DATA / "cmip5").rglob("tasmax_*.nc"))[:3]


def _publish(folder: Path, tmp_path: Path) -> tuple[int, str, list[dict[str, str]]]:
    report = tmp_path / "quarantine.jsonl"
    done = run_cli("publish", str(folder), "--db", f"sqlite:///{tmp_path / 'c.db'}",
                   "--no-checksum", "--quarantine", str(report))  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = report.read_text().splitlines()
    return done.returncode, done.stderr, [json.loads(line) for line in lines]


def test_a_publish_quarantines_each_cut_file_and_publishes_the_good_ones(bases, tmp_path):
    folder = tmp_path / "archive"
    folder.mkdir()
    for good in GOOD:
        shutil.copy(good, folder / good.name)
    data = dict(bases)
    bad = {
        "t12.nc": data[HDF5[0].name][:12],
        "t13.nc": data[HDF5[0].name][:13],
        "t_classic.nc": data[headerfuzz.CLASSIC[1].name][:50],
        "t_cdf2.nc": data[f"cdf2_{headerfuzz.CLASSIC[1].name}"][:50],
        "t_hdf5_half.nc": data[HDF5[1].name][:1000],
    }
    for name, content in bad.items():
        (folder / name).write_bytes(content)
    code, stderr, quarantined = _publish(folder, tmp_path)
    assert code == 1, stderr[-2000:]
    assert _summary(stderr) == {"published": 3, "quarantined": len(bad), "collisions": 0}
    assert sorted(Path(q["source"]).name for q in quarantined) == sorted(bad)
    assert all(q["code"] and q["reason"] for q in quarantined), quarantined


def test_a_publish_of_a_fuzzed_folder_accounts_for_every_file(bases, tmp_path):
    folder = tmp_path / "fuzzed"
    folder.mkdir()
    for good in GOOD:
        shutil.copy(good, folder / good.name)
    cases = itertools.islice(headerfuzz.random_cases(bases, random.Random(SEED + 2)), 30)
    for i, (_, content) in enumerate(cases):
        (folder / f"fuzzed_{i:02}.nc").write_bytes(content)
    code, stderr, quarantined = _publish(folder, tmp_path)
    assert code in (0, 1), stderr[-2000:]
    tally = _summary(stderr)
    assert tally["published"] >= 3 - tally["collisions"]
    assert tally["published"] + tally["quarantined"] + tally["collisions"] == 33, stderr[-2000:]
    assert len(quarantined) == tally["quarantined"] + tally["collisions"]
    assert all(q["code"] and q["reason"] for q in quarantined), quarantined
