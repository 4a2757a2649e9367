"""site/publishing.py: the publishing service ``ndnsci publish`` calls, used directly: a tally of
SDK objects from a database target, files skipped when unchanged, records in batches."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ndnsci.sdk.publish import Collision
from ndnsci.site import publishing
from ndnsci_translators import translate

TREE = Path(__file__).parents[1] / "data" / "netcdf" / "cmip5" / "output1" / "BNU"


@pytest.fixture
def target(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    db = publishing.open_target(None, None, f"sqlite:///{tmp_path / 'catalog.db'}")
    yield db
    db.close()


def test_files_are_published_once_then_skipped_while_unchanged(target):
    first = publishing.Tally()
    publishing.publish(target, first, dirs=[str(TREE)], target_key="t", jobs=1)
    files = len(list(TREE.rglob("*.nc")))
    assert (first.published, first.skipped, first.ok) == (files, 0, True)
    again = publishing.Tally()
    publishing.publish(target, again, dirs=[str(TREE)], target_key="t", jobs=1)
    assert (again.published, again.skipped) == (0, files)
    forced = publishing.Tally()
    publishing.publish(target, forced, dirs=[str(TREE)], target_key="t", jobs=1, force=True)
    assert (forced.published, forced.skipped) == (files, 0)  # already there: unchanged


def test_records_give_the_sdk_report_objects(target):
    good = translate("/archive/tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc").to_dict()
    other = dict(good, input="/elsewhere/tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc",
                 original_path="elsewhere/tas.nc", sha256="0" * 64)  # fmt: skip
    lines = f"{json.dumps(good)}\nnot json\n{json.dumps(other)}\n".encode()
    tally = publishing.Tally()
    publishing.publish(target, tally, records=io.BytesIO(lines), jobs=1)
    assert tally.published == 1
    assert [q["code"] for q in tally.quarantined] == ["refused"]
    assert "line 2" in tally.quarantined[0]["source"]
    assert len(tally.collisions) == 1 and isinstance(tally.collisions[0], Collision)
    assert tally.kept_out == 1 and not tally.ok
