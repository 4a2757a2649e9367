"""``ndnsci sample``: a real-looking CMIP5 + CMS archive that names and opens correctly."""

from __future__ import annotations

import netCDF4
from support import run_cli

import ndnsci


def test_sample_archive_names_and_contents(tmp_path):
    out = run_cli("sample", str(tmp_path), "--big-mib", "0")
    assert out.returncode == 0, out.stderr
    paths = out.stdout.split()
    assert len(paths) == 37 and "33 CMIP5 and 4 CMS files" in out.stderr
    names = [ndnsci.translate(p) for p in paths]
    assert all(t.ok for t in names), [t.error for t in names if not t.ok]
    # nothing to correct, but the directory the archive sits in (it is not part of an LFN)
    assert {c.rule for t in names for c in t.corrections} <= {"site-prefix-removed"}
    cmip5 = [t for t in names if t.scheme == "cmip5"]
    assert {t.facets["model"] for t in cmip5} == {"HadCM3", "CanESM2", "MIROC5"}
    assert {t.facets["variable"] for t in cmip5} == {"tas", "pr", "psl", "tos"}
    assert {t.facets["experiment"] for t in cmip5} == {"historical", "rcp45"}
    tiers = {t.facets["tier"] for t in names if t.scheme == "cms"}
    assert tiers == {"NANOAODSIM", "NANOAOD", "MINIAOD"}
    first = next(p for p in paths if "tas_Amon_HadCM3_historical_r1i1p1_199001-199912" in p)
    with netCDF4.Dataset(first) as ds:
        assert ds.project_id == "CMIP5" and ds.model_id == "HadCM3" and ds.frequency == "mon"
        assert ds["time"].calendar == "360_day" and ds["time"].bounds == "time_bnds"
        dates = netCDF4.num2date(ds["time"][[0, -1]], ds["time"].units, ds["time"].calendar)
        assert (dates[0].year, dates[0].month) == (1990, 1)
        assert (dates[-1].year, dates[-1].month) == (1999, 12)
        assert 200 < float(ds["tas"][:].mean()) < 320


def test_the_sample_is_deterministic(tmp_path):
    a = ndnsci.make_sample(tmp_path / "a", big_mib=1)
    b = ndnsci.make_sample(tmp_path / "b", big_mib=1)
    for x, y in zip(a.files, b.files, strict=True):
        assert x.read_bytes() == y.read_bytes()
