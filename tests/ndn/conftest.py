"""Fixtures of the data-plane tests: producers as real ``ndnsci serve`` processes (so tests can
kill and restart them). The forwarder (``fw``) and its helpers are shared: tests/conftest.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import Forwarder, Serve

_counter = iter(range(1_000_000))


@pytest.fixture
def serve(fw: Forwarder, tmp_path: Path) -> Iterator[Serve]:
    """A producer serving ``tmp_path/root`` under a prefix unique to the test."""
    root = tmp_path / "root"
    root.mkdir()
    server = Serve(root, f"/test/p{os.getpid()}-{next(_counter)}")
    yield server
    server.stop()
