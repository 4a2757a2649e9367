"""Fixtures of the federation tests: sites with real forwarders, catalogs and daemons."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .sites import Site

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def make_sites(ndnd_binary: Path) -> Iterator[Callable[..., list[Site]]]:
    """``make_sites("a", "b")``: started sites (forwarder, key, named catalog), closed after
    the module. Short paths: the forwarders' AF_UNIX sockets live there."""
    root = Path(tempfile.mkdtemp(prefix="ndnsci-f-", dir="/tmp"))
    made: list[Site] = []

    def make(*names: str) -> list[Site]:
        group = [Site(root, name).start() for name in names]
        made.extend(group)
        return group

    try:
        yield make
    finally:
        for site in made:
            site.close()
        shutil.rmtree(root, ignore_errors=True)
