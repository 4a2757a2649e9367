"""Fixtures for the NDN data plane: a real NDNd forwarder on a private socket, producers.

The forwarder is built once by deploy/forwarder/build.sh (a no-op when already built) and runs
for the whole session in a temp folder, with its always-on UDP listener and WebSocket face on
free ports so parallel sessions never clash. Producers run as real ``ndnsci serve`` processes
so tests can kill and restart them.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from ndn_support import Forwarder, Serve

from ndnsci.ndn import keys

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ndnd_binary() -> Path:
    proc = subprocess.run(
        [str(REPO / "deploy" / "forwarder" / "build.sh")],
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        pytest.fail(f"cannot build ndnd:\n{proc.stderr}")
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def session_dir() -> Iterator[Path]:
    # short: AF_UNIX socket paths are limited to ~100 bytes
    with tempfile.TemporaryDirectory(prefix="ndnsci-t-", dir="/tmp") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="session")
def fw(ndnd_binary: Path, session_dir: Path) -> Iterator[Forwarder]:
    saved = {
        k: os.environ.get(k)
        for k in ("NDN_CLIENT_TRANSPORT", "NDNSCI_CONFIG_DIR", "NDNSCI_CACHE_DIR", "NDND")
    }
    fwd = Forwarder(session_dir / "main")
    os.environ.update(
        NDN_CLIENT_TRANSPORT=fwd.uri,
        NDNSCI_CONFIG_DIR=str(session_dir / "config"),
        NDNSCI_CACHE_DIR=str(session_dir / "cache"),
        NDND=str(ndnd_binary),
    )
    keys.create()
    fwd.start()
    try:
        yield fwd
    finally:
        fwd.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_counter = iter(range(1_000_000))


@pytest.fixture
def serve(fw: Forwarder, tmp_path: Path) -> Iterator[Serve]:
    """A producer serving ``tmp_path/root`` under a prefix unique to the test."""
    root = tmp_path / "root"
    root.mkdir()
    server = Serve(root, f"/test/p{os.getpid()}-{next(_counter)}")
    yield server
    server.stop()
