"""The file server's owners (several ``ndnsci serve`` on one plane), as pure functions: who is
alive, which mounts are merged, which are refused. The real processes: test_native_faults."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import wait_for

from ndnsci.errors import NativePlaneError
from ndnsci.native.plane import State, _check_mounts, _live_owners, _union
from ndnsci.native.view import MAX_MOUNTS


def mount(prefix: str, path: str) -> dict[str, str]:
    return {"prefix": prefix, "path": path}


def test_the_union_has_each_mount_once_in_prefix_order() -> None:
    owners = {
        "1": [mount("/b", "/srv/b"), mount("/a", "/srv/a")],
        "2": [mount("/a", "/srv/a"), mount("/c", "/srv/c")],
    }
    assert _union(owners) == [mount("/a", "/srv/a"), mount("/b", "/srv/b"), mount("/c", "/srv/c")]
    assert _union({}) == []


def test_a_prefix_served_from_another_folder_is_refused_naming_the_owner() -> None:
    others = {"4242": [mount("/CMS/store/mc", "/data/mc")]}
    _check_mounts([mount("/CMS/store/mc", "/data/mc")], others)  # the same mount: shared
    _check_mounts([mount("/CMS/store/data", "/data/d")], others)
    with pytest.raises(NativePlaneError, match=r"already served from /data/mc .*pid 4242"):
        _check_mounts([mount("/CMS/store/mc", "/elsewhere")], others)


def test_more_mounts_than_the_file_server_takes_are_refused() -> None:
    others = {"1": [mount(f"/m{i}", f"/srv/{i}") for i in range(MAX_MOUNTS)]}
    _check_mounts([mount("/m0", "/srv/0")], others)  # no new mount
    with pytest.raises(NativePlaneError, match=f"at most {MAX_MOUNTS} mounts"):
        _check_mounts([mount("/new", "/srv/new")], others)


def test_dead_and_zombie_owners_are_dropped() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid names nobody (or somebody else, later)
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        stat = Path(f"/proc/{zombie.pid}/stat")
        wait_for(
            lambda: stat.read_text().split(")")[-1].split()[0] == "Z", 30, "a zombie", every=0.01
        )
        state = State(
            fileserver_owners={
                str(os.getpid()): [mount("/a", "/srv/a")],
                str(gone.pid): [mount("/b", "/srv/b")],
                str(zombie.pid): [mount("/c", "/srv/c")],
            }
        )
        assert _live_owners(state) == {str(os.getpid()): [mount("/a", "/srv/a")]}
        assert _live_owners(state, exclude=os.getpid()) == {}
    finally:
        zombie.wait()
