"""Helpers of the native-plane tests (shared by conftest.py and the test modules)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from support import Forwarder, free_port

from ndnsci.base.processes import die_with_parent
from ndnsci.native import check
from ndnsci.native.layout import Layout
from ndnsci.native.plane import Plane, _alive

REQUIRED = os.environ.get("NDNSCI_REQUIRE_NATIVE") == "1"


def unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"NDNSCI_REQUIRE_NATIVE=1 but {reason}")
    pytest.skip(reason)


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
