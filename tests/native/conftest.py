"""Fixtures of the native-plane tests: the real NDN-DPDK (and NDNc) built by ``make native``.

They skip when this machine cannot run NDN-DPDK or it is not built, and fail instead when
``NDNSCI_REQUIRE_NATIVE=1`` (CI sets it: nothing native may silently skip there).

Every plane a test starts is brought down by the fixture, whatever the test did: the
``ndndpdk-svc`` processes stop, the veth pair goes, and the hugepages are given back (checked).
The instances also get PR_SET_PDEATHSIG, so a killed pytest does not leave them running.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from ndn_support import Forwarder, free_port

from ndnsci._stack import die_with_parent
from ndnsci.native import check, install
from ndnsci.native.layout import Layout
from ndnsci.native.plane import Plane, _alive

REQUIRED = os.environ.get("NDNSCI_REQUIRE_NATIVE") == "1"


def unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"NDNSCI_REQUIRE_NATIVE=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def native_ready() -> install.Build:
    report = check.run(Layout.for_machine().hugepages)
    if report.status == check.CANNOT_RUN:
        reasons = "; ".join(f"{f.name}: {f.detail}" for f in report.findings if not f.ok)
        unavailable(f"this machine cannot run NDN-DPDK ({reasons})")
    build = install.ndn_dpdk()
    if build is None:
        unavailable("NDN-DPDK is not built (make native)")
    assert build is not None
    return build


@pytest.fixture(scope="session")
def ndnc_build(native_ready: install.Build) -> install.Build:
    build = install.ndnc()
    if build is None:
        unavailable("NDNc is not built (make native)")
    assert build is not None
    return build


@pytest.fixture(scope="session")
def native_run(session_dir: Path) -> Iterator[Path]:
    """The tests' own plane folder (state, logs, memif sockets, the file server's view)."""
    run = session_dir / "native"
    saved = os.environ.get("NDNSCI_NATIVE_RUN")
    os.environ["NDNSCI_NATIVE_RUN"] = str(run)
    yield run
    Plane(run).down()  # a last safety net; the plane fixtures have brought theirs down
    if saved is None:
        os.environ.pop("NDNSCI_NATIVE_RUN", None)
    else:
        os.environ["NDNSCI_NATIVE_RUN"] = saved


def free_base_port() -> int:
    """A port P with P, P+1 and P+2 free on loopback (the three GraphQL servers)."""
    for _ in range(50):
        base = free_port()
        if all(_free(base + i) for i in range(3)):
            return base
    raise RuntimeError("no three consecutive free ports")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def hugepages_total() -> int:
    return check.hugepage_counts()[0]


class PlaneFixture:
    """A started plane and what is needed to check it was cleaned up."""

    def __init__(self, run: Path, fw: Forwarder | None) -> None:
        self.plane = Plane(run)
        self.fw = fw
        self.hugepages_before = hugepages_total()
        self.layout = Layout.for_machine(base_port=free_base_port())

    def up(self) -> PlaneFixture:
        self.plane.up(self.fw.sock if self.fw else None, self.layout, preexec=die_with_parent)
        return self

    def down(self) -> None:
        state = self.plane.load()
        pids = list(state.pids.values()) if state else []
        problems = self.plane.down()
        assert problems == []
        assert not [pid for pid in pids if _alive(pid)], "ndndpdk-svc still running"
        assert hugepages_total() == self.hugepages_before, "hugepages not given back"
        assert not Path("/sys/class/net/ndnsci-dp0").exists(), "veth pair left behind"


@pytest.fixture(scope="module")
def plane(native_ready: install.Build, native_run: Path, fw: Forwarder) -> Iterator[PlaneFixture]:
    """The plane (forwarder + fetcher, linked to the session's NDNd), up for a test module."""
    started = PlaneFixture(native_run, fw)
    try:
        yield started.up()
    finally:
        started.down()
