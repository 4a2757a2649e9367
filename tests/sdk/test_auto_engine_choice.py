"""The default engine's choice per file (ndnsci/native/auto.py) without a plane: what the plane
serves is looked up once for the workers that ask together (the plane itself: tests/native)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from ndnsci.native.auto import AutoTransport
from ndnsci.ndn import name as ndnname


def test_workers_asking_at_once_all_wait_for_the_one_look(monkeypatch: pytest.MonkeyPatch) -> None:
    auto = AutoTransport()
    looks: list[float] = []

    def slow_look(self: Any) -> list[list[bytes]]:
        looks.append(time.monotonic())
        time.sleep(0.2)  # reading the plane's state, asking whether it is up
        return [ndnname.from_uri("/CMS")]

    monkeypatch.setattr(AutoTransport, "_look", slow_look)
    chosen: list[str] = []
    start = threading.Barrier(4)

    def worker() -> None:
        start.wait()
        chosen.append(auto.engine_for("/CMS/store/data/a.root"))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert chosen == ["ndn-dpdk"] * 4  # before: one ndn-dpdk, three python
    assert len(looks) == 1
    assert auto.engine_for("/CMIP5/output1/x.nc") == "python"  # not served: ndnsci's own


def test_no_plane_is_ndnsci_s_own_engine(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("NDNSCI_NATIVE_RUN", str(tmp_path))  # no state.json: no plane
    assert AutoTransport().engine_for("/CMS/store/data/a.root") == "python"
