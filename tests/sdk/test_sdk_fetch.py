"""ndnsci.fetch / download / open_dataset over the real forwarder, producer and catalog."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading

import pytest

import ndnsci
from ndnsci.errors import DownloadError, ManifestError
from ndnsci.ndn.consumer import FetchOptions


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def cat(stack):
    with ndnsci.Catalog(stack.catalog_url) as catalog:
        yield catalog


def test_fetch_a_search_into_the_drs_layout(cat, tmp_path):
    found = cat.search(model="HadCM3", variable="tas")
    paths = ndnsci.fetch(found, tmp_path, progress=False)
    assert paths == [tmp_path / f.path for f in found]
    assert [sha256(p) for p in paths] == [f.sha256 for f in found]
    journal = [json.loads(line) for line in (tmp_path / ".ndnsci-fetch.jsonl").open()]
    assert {e["name"] for e in journal} == {f.name for f in found}


def test_a_second_run_skips_complete_files_and_refetches_a_damaged_one(cat, tmp_path):
    found = cat.search(model="MIROC5", variable="pr")
    first = ndnsci.download(found, tmp_path, progress=False)
    assert len(first.done) == 3
    damaged = tmp_path / found[1].path
    data = bytearray(damaged.read_bytes())
    data[100] ^= 0xFF  # same size, other bytes: only the checksum tells
    damaged.write_bytes(bytes(data))
    again = ndnsci.download(found, tmp_path, progress=False)
    assert [o.status for o in again.outcomes] == ["skipped", "done", "skipped"]
    assert sha256(damaged) == found[1].sha256


def test_flat_layout_and_collisions(cat, tmp_path):
    cms = list(cat.search(scheme="cms"))
    report = ndnsci.download(cms, tmp_path, layout="flat", progress=False)
    assert report.ok and {p.parent for p in report.paths} == {tmp_path}
    twin = ndnsci.ManifestEntry(name=cms[0].name + "x", path="elsewhere/" + cms[0].path)
    clash = ndnsci.download([cms[0], twin], tmp_path / "clash", layout="flat", progress=False)
    assert [(o.name, o.status) for o in clash.outcomes] == [
        (cms[0].name, "done"),
        (twin.name, "failed"),
    ]
    assert "use the drs layout" in clash.failed[0].error


def test_checksum_that_differs_from_the_catalog_is_reported_and_removed(cat, tmp_path):
    file = cat.search(model="CanESM2", variable="psl")[0]
    wrong = ndnsci.ManifestEntry(name=file.name, path=file.path, sha256="0" * 64)
    report = ndnsci.download([wrong], tmp_path, progress=False)
    assert report.failed and "not the catalog's" in report.failed[0].error
    assert not (tmp_path / file.path).exists()
    with pytest.raises(DownloadError, match="1 of 1 files failed") as info:
        ndnsci.fetch([wrong], tmp_path, progress=False)
    assert info.value.report.failed[0].name == file.name


def test_a_name_nobody_serves_fails_alone(cat, tmp_path):
    good = cat.search(model="HadCM3", variable="pr")[0]
    report = ndnsci.download([good, "/CMIP5/output1/NOPE/x.nc"], tmp_path, progress=False)
    assert [o.status for o in report.outcomes] == ["done", "failed"]
    assert "the producer says: not found" in report.outcomes[1].error


def test_manifest_with_a_bad_line(cat, tmp_path):
    entries = cat.manifest(cat.search(model="MIROC5", variable="tas"))
    lines = [json.dumps(e._asdict()) for e in entries]
    lines.insert(1, "{not json")
    lines.append(json.dumps({"name": "/CMIP5/x.nc", "path": "../../etc/passwd"}))
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(ManifestError, match="line 2"):
        ndnsci.read_manifest(manifest)
    from ndnsci.sdk.manifest import parse

    report = ndnsci.download(parse(manifest.open()), tmp_path / "out", progress=False)
    assert len(report.done) == 3
    reasons = [o.error for o in report.failed]
    assert any("line 2" in r for r in reasons) and any("leave the output" in r for r in reasons)


def test_interrupted_download_continues_where_it_stopped(cat, tmp_path):
    big = max(cat.search(scheme="cms"), key=lambda f: f.size or 0)
    stop = threading.Event()

    class StopSoon(ndnsci.NoProgress):
        def update(self, name, done, total):
            stop.set()  # the transfer stops at its next progress tick, 0.1 s later

    slow = FetchOptions(window=1, max_window=1, cc="fixed")  # ~0.2 s for the whole file
    with pytest.raises(ndnsci.Interrupted) as info:
        ndnsci.download([big], tmp_path, progress=StopSoon(), stop=stop, options=slow)
    assert info.value.report.cancelled
    part = tmp_path / (big.path + ".part")
    assert part.exists() and not (tmp_path / big.path).exists()
    report = ndnsci.download([big], tmp_path, progress=False)
    assert report.ok and report.done[0].resumed_segments > 0
    assert sha256(tmp_path / big.path) == big.sha256 and not part.exists()


def test_open_dataset_and_open_mfdataset(cat, tmp_path):
    found = cat.search(model="HadCM3", variable="tas", experiment="historical")
    ds = ndnsci.open_dataset(found[0], dest=tmp_path)
    assert ds.tas.attrs["units"] == "K" and ds.time.size == 120
    ds.close()
    combined = ndnsci.open_mfdataset(found, dest=tmp_path)
    assert combined.time.size == 192 and combined.attrs["model_id"] == "HadCM3"
    combined.close()
    local = tmp_path / found[0].path
    assert ndnsci.open_dataset(str(local)).tas.shape == (120, 12, 24)


def test_afetch(stack, tmp_path):
    async def main():
        async with ndnsci.AsyncCatalog(stack.catalog_url) as cat:
            found = await cat.search(model="CanESM2", variable="tas")
            return found, await ndnsci.afetch(found, tmp_path, progress=False)

    found, paths = asyncio.run(main())
    assert len(paths) == len(found) == 3 and all(p.exists() for p in paths)


def test_intake_esm_of_what_was_fetched(cat, tmp_path, monkeypatch):
    # one file at a time: netCDF4's HDF5 is not thread-safe, intake-esm opens in threads
    monkeypatch.setenv("ITK_ESM_THREADING", "False")
    report = ndnsci.download(cat.search(model="HadCM3", variable="tas"), tmp_path, progress=False)
    esm = cat.to_intake_esm("cmip5", local=report.local)
    assert len(esm.df) == 3 and set(esm.df["path"]) == {str(p) for p in report.paths}
    keys = esm.keys()
    datasets = [esm[key].to_dask() for key in keys]
    assert sorted(ds.time.size for ds in datasets) == [120, 192]


def test_the_engines_paths_are_spelled_as_pathlib_spells_them():
    """The fetch path joins paths without pathlib (DEVELOPERS.md, "Start-up budget"); what it
    reports and opens must be what ``str(Path(dest) / path)`` was."""
    import random
    from pathlib import PurePosixPath

    from ndnsci.sdk.fetch import _joined

    rng = random.Random(14)
    atoms = ["", "/", "//", "///", ".", "..", "a", "b c", "./", "a/", "/x", "//y", "a//b", "é"]
    for _ in range(5000):
        parts = [
            "".join(rng.choice(atoms) for _ in range(rng.randint(0, 4)))
            for _ in range(rng.randint(1, 3))
        ]
        assert _joined(*parts) == str(PurePosixPath(*parts)), parts


def test_the_journals_lines_are_jsons():
    """The journal writes its lines without json (which imports re and enum: DEVELOPERS.md,
    "Start-up budget"): what json.dumps wrote, and what json reads back."""
    import json
    import random

    from ndnsci.sdk.fetch import _line

    rng = random.Random(14)
    atoms = ["a", "/", "é", '"', "\\", "\n", "\x00", "\U0001f600", "\ud800", " ", "%41"]
    for _ in range(2000):
        entry = {
            "name": "".join(rng.choice(atoms) for _ in range(rng.randint(0, 8))),
            "path": "".join(rng.choice(atoms) for _ in range(rng.randint(0, 8))),
            "size": rng.choice([0, 1, 30_000, 2**63, -1]),
            "mtime_ns": rng.randrange(2**64),
            "sha256": rng.randbytes(32).hex(),
        }
        assert _line(entry) == json.dumps(entry), entry
        assert json.loads(_line(entry)) == entry
    # anything else: json's own answer
    odd = {"size": 1.5, "flag": True, "none": None, "list": [1], 3: "x"}
    assert _line(odd) == json.dumps(odd)
