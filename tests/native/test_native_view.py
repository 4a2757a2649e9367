"""The symlink view NDN-DPDK's file server mounts: one link per catalog name, kept in step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ndnsci.native import view
from ndnsci.ndn import name as ndnname
from ndnsci.ndn.producer import NameTable


def table(entries: dict[str, Path]) -> NameTable:
    return NameTable({tuple(ndnname.from_uri(n)): os.fsencode(p) for n, p in entries.items()})


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    root = tmp_path / "archive"
    (root / "deep" / "er").mkdir(parents=True)
    for rel in ("a.nc", "b.nc", "deep/er/c.root"):
        (root / rel).write_bytes(rel.encode() * 100)
    return root


def test_every_name_is_a_link_to_its_file(tmp_path: Path, archive: Path) -> None:
    v = tmp_path / "view"
    change = view.sync(
        v,
        table(
            {
                "/CMIP5/output1/MOHC/a.nc": archive / "a.nc",
                "/CMIP5/output1/MOHC/b.nc": archive / "b.nc",
                "/CMS/store/mc/c.root": archive / "deep" / "er" / "c.root",
            }
        ),
    )
    assert (change.added, change.removed, change.refused) == (3, 0, [])
    link = v / "CMIP5" / "output1" / "MOHC" / "a.nc"
    assert link.is_symlink() and os.readlink(link) == str(archive / "a.nc")
    assert (v / "CMS" / "store" / "mc" / "c.root").read_bytes() == b"deep/er/c.root" * 100
    # nothing but the names: the view has exactly three files
    files = [p for p in v.rglob("*") if p.is_symlink()]
    assert len(files) == 3
    assert view.mounts(v, table({"/CMIP5/x": archive / "a.nc", "/CMS/y": archive / "b.nc"})) == [
        {"prefix": "/CMIP5", "path": str(v / "CMIP5")},
        {"prefix": "/CMS", "path": str(v / "CMS")},
    ]


def test_sync_adds_repoints_and_removes_in_place(tmp_path: Path, archive: Path) -> None:
    v = tmp_path / "view"
    view.sync(v, table({"/CMIP5/p/a.nc": archive / "a.nc", "/CMIP5/q/r/b.nc": archive / "b.nc"}))
    top = os.stat(v / "CMIP5").st_ino
    change = view.sync(
        v, table({"/CMIP5/p/a.nc": archive / "b.nc", "/CMIP5/s/c.root": archive / "a.nc"})
    )
    assert (change.added, change.repointed, change.removed, change.kept) == (1, 1, 1, 0)
    assert os.readlink(v / "CMIP5" / "p" / "a.nc") == str(archive / "b.nc")
    assert not (v / "CMIP5" / "q").exists()  # emptied folders go
    assert os.stat(v / "CMIP5").st_ino == top  # the mount top stays (the file server holds it)
    again = view.sync(
        v, table({"/CMIP5/p/a.nc": archive / "b.nc", "/CMIP5/s/c.root": archive / "a.nc"})
    )
    assert (again.added, again.repointed, again.removed, again.kept) == (0, 0, 0, 2)


def test_links_point_at_real_paths(tmp_path: Path, archive: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(archive)
    v = tmp_path / "view"
    view.sync(v, table({"/CMS/a.nc": alias / "a.nc"}))
    assert os.readlink(v / "CMS" / "a.nc") == str(archive / "a.nc")


def test_names_that_are_no_paths_are_refused_and_counted(tmp_path: Path, archive: Path) -> None:
    v = tmp_path / "view"
    change = view.sync(
        v,
        table(
            {
                "/CMS/ok.nc": archive / "a.nc",
                "/CMS/v=3/x.nc": archive / "a.nc",  # a typed component is no file name
                "/CMS/%2E%2E/escape.nc": archive / "a.nc",  # ".."
                "/CMS/ok.nc/inside": archive / "b.nc",  # a file used as a folder
            }
        ),
    )
    assert change.added == 1
    assert len(change.refused) == 3
    assert [p.name for p in v.rglob("*") if p.is_symlink()] == ["ok.nc"]
    assert not (tmp_path / "escape.nc").exists()


def test_more_top_level_names_than_mounts_is_an_error(tmp_path: Path, archive: Path) -> None:
    names = {f"/T{i}/a.nc": archive / "a.nc" for i in range(view.MAX_MOUNTS + 1)}
    with pytest.raises(ValueError, match="at most 8"):
        view.mounts(tmp_path, table(names))
