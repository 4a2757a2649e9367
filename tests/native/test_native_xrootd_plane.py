"""``ndnsci native down`` stops the XRootD servers reading through its forwarder (their
plugin's pipeline closes for good without it), with a plane of its own: the plane of
test_native_xrootd.py stays up for its module."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from native_support import PlaneFixture
from support import free_port
from test_native_xrootd import xrootd_build  # noqa: F401 (a fixture)

from ndnsci.native import install
from ndnsci.native.plane import NDNC_SOCKET_DIR
from ndnsci.native.xrootd import Settings, XrootdServer, _alive


def test_native_down_stops_the_xrootd_server_on_its_forwarder(
    plane: PlaneFixture,
    xrootd_build: install.Build,  # noqa: F811
) -> None:
    with tempfile.TemporaryDirectory(prefix="ndnsci-xrd-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        server = XrootdServer(Path(tmp) / "run", plane.plane)
        state = server.up(Settings(port=free_port()))
        try:
            assert _alive(state.pid) and state.faces
            assert plane.plane.down() == []
            assert not _alive(state.pid)
            assert not list(NDNC_SOCKET_DIR.glob(f"ndnc-memif-{state.pid}-*"))
            assert server.status()["up"] is False
            assert server.down() == []  # the stale record goes, the forwarder being gone
            assert server.load() is None
        finally:
            server.down()
