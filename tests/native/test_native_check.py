"""``ndnsci native check``: whether this machine can run the native plane, with its exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ndnsci.errors import NativePlaneError
from ndnsci.native import check, hugepages, install


def native(
    *args: str, env: dict[str, str] | None = None, user: str | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "ndnsci", "native", *args]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *argv]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_check_says_ready_on_this_machine(native_ready: install.Build) -> None:
    done = native("check", "--json")
    assert done.returncode == check.READY, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["can_run"] and report["built"]
    names = {f["name"]: f for f in report["findings"]}
    assert {
        "cpu",
        "kernel",
        "io_uring",
        "privileges",
        "hugepages",
        "memif",
        "veth",
        "build",
    } <= set(names)
    assert all(f["ok"] for f in report["findings"] if f["required"])
    assert str(native_ready.prefix) in names["build"]["detail"]


def test_check_without_a_build_says_make_native(
    tmp_path: Path, native_ready: install.Build
) -> None:
    env = {
        "NDNSCI_NATIVE_CACHE": str(tmp_path),
        "NDNSCI_NDNDPDK_PREFIX": "",
        "NDNSCI_NDNC_PREFIX": "",
    }
    done = native("check", env=env)
    assert done.returncode == check.NOT_BUILT, done.stdout + done.stderr
    assert " NO  build       NDN-DPDK is not built: run `make native`" in done.stdout
    assert "build it first: make native" in done.stdout


def test_check_as_an_unprivileged_user_says_why_not(native_ready: install.Build) -> None:
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is missing")
    # nobody, with nobody's own folders (not the test process's private XDG folders, which
    # nobody cannot enter)
    nobody = {
        "HOME": "/nonexistent",
        **{
            f"XDG_{kind}_HOME": f"/nonexistent/{kind.lower()}"
            for kind in ("CACHE", "CONFIG", "DATA", "STATE")
        },
    }
    done = native("check", user="65534", env=nobody)
    assert done.returncode == check.CANNOT_RUN, done.stdout + done.stderr
    assert " NO  privileges  not root" in done.stdout
    assert "cannot run the native plane" in done.stdout


def test_up_is_refused_without_ndnd_and_says_what_to_do(
    tmp_path: Path, native_ready: install.Build
) -> None:
    done = native("up", "--socket", str(tmp_path / "none.sock"))
    assert done.returncode == 1
    assert "no NDNd forwarder on" in done.stderr and "--no-ndnd" in done.stderr
    assert done.stdout == ""


# --- hugepages the kernel will not give (a fake /proc: the real one would starve the machine) ---


def fake_proc(tmp_path: Path, total: int, free: int, cap: int) -> Path:
    """A /proc whose nr_hugepages knob accepts at most ``cap`` pages, as a kernel short of
    memory does (the write succeeds, reading back gives what it could allocate)."""
    proc = tmp_path / "proc"
    (proc / "sys" / "vm").mkdir(parents=True)
    (proc / "meminfo").write_text(
        f"HugePages_Total: {total}\nHugePages_Free: {free}\nHugePages_Surp: 0\n"
    )
    knob = proc / "sys" / "vm" / "nr_hugepages"
    knob.write_text(f"{total}\n")
    return proc


class CappedKnob:
    def __init__(self, proc: Path, cap: int) -> None:
        self.proc, self.cap, self.writes = proc, cap, []

    def __call__(self, pages: int, proc: Path) -> int:
        self.writes.append(pages)
        given = min(pages, self.cap)
        used = 0
        meminfo = (proc / "meminfo").read_text().split()
        used = int(meminfo[1]) - int(meminfo[3])
        (proc / "meminfo").write_text(
            f"HugePages_Total: {given}\nHugePages_Free: {given - used}\nHugePages_Surp: 0\n"
        )
        return given


def test_hugepages_the_kernel_does_not_give_are_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = fake_proc(tmp_path, total=10, free=10, cap=50)
    knob = CappedKnob(proc, cap=50)
    monkeypatch.setattr(hugepages, "_set_total", knob)
    with pytest.raises(NativePlaneError) as caught:
        hugepages.reserve(100, proc)
    message = str(caught.value)
    assert message.startswith(
        "hugepages not available: NDN-DPDK needs 100 free 2 MB pages (200 MB)"
    )
    assert "the kernel gives only 50" in message and "hugepages=110" in message
    assert knob.writes[-1] == 10  # what it took is given back
    assert check.hugepage_counts(proc) == (10, 10)


def test_hugepages_reserve_adds_only_what_is_missing_and_release_gives_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = fake_proc(tmp_path, total=20, free=5, cap=1000)
    knob = CappedKnob(proc, cap=1000)
    monkeypatch.setattr(hugepages, "_set_total", knob)
    reservation = hugepages.reserve(100, proc)
    assert reservation.added == 95
    assert check.hugepage_counts(proc) == (115, 100)
    hugepages.release(reservation, proc)
    assert knob.writes[-1] == 20
