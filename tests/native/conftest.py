"""Fixtures of the native-plane tests: the real NDN-DPDK (and NDNc) built by ``make native``.

They skip when this machine cannot run NDN-DPDK or it is not built, and fail instead when
``NDNSCI_REQUIRE_NATIVE=1`` (CI sets it: nothing native may silently skip there).

Every plane a test starts is brought down by the fixture, whatever the test did: the
``ndndpdk-svc`` processes stop, the veth pair goes, and the hugepages are given back (checked).
The instances also get PR_SET_PDEATHSIG, so a killed pytest does not leave them running.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from native_support import PlaneFixture, unavailable
from support import Forwarder

from ndnsci.native import check, install
from ndnsci.native.layout import Layout
from ndnsci.native.plane import Plane


@pytest.fixture(scope="session")
def native_ready() -> install.Build:
    report = check.run(Layout.for_machine().hugepages)
    if report.status == check.CANNOT_RUN:
        reasons = "; ".join(
            f"{f.name}: {f.detail}" for f in report.findings if f.required and not f.ok
        )
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


@pytest.fixture(scope="module")
def plane(native_ready: install.Build, native_run: Path, fw: Forwarder) -> Iterator[PlaneFixture]:
    """The plane (forwarder + fetcher, linked to the session's NDNd), up for a test module."""
    started = PlaneFixture(native_run, fw)
    try:
        yield started.up()
    finally:
        started.down()


@pytest.fixture
def own_plane(
    native_ready: install.Build, native_run: Path, fw: Forwarder
) -> Iterator[PlaneFixture]:
    """A plane of the test's own, for tests that kill parts of it; the default engine's
    memory of the plane is forgotten after it (``get_transport`` caches ``auto``)."""
    from ndnsci.sdk import transports

    started = PlaneFixture(native_run, fw)
    try:
        yield started.up()
    finally:
        started.down()
        transports.get_transport.cache_clear()
