"""Fixtures shared by the suites that need a real NDN forwarder (tests/ndn, tests/sdk, ...).

The forwarder is built once by deploy/forwarder/build.sh (a no-op when already built) and runs
for the whole session in a temp folder, with its always-on UDP listener and WebSocket face on
free ports so parallel sessions never clash (``fw``). It also gives the session a publisher key
and a cache of its own (NDNSCI_CONFIG_DIR, NDNSCI_CACHE_DIR), so no test touches the user's.
A test that stops or restarts a forwarder takes one of its own from ``make_forwarder``.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import Forwarder

from ndnsci.ndn import keys

REPO = Path(__file__).resolve().parents[1]


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


@pytest.fixture
def make_forwarder(fw: Forwarder, session_dir: Path) -> Iterator[Callable[[str], Forwarder]]:
    """``make_forwarder(label)``: another NDNd, started, stopped after the test."""
    made: list[Forwarder] = []

    def make(label: str) -> Forwarder:
        other = Forwarder(session_dir / label)
        other.start()
        made.append(other)
        return other

    yield make
    for other in made:
        other.stop()


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample archive (``ndnsci sample``), with a smaller large file to keep tests quick."""
    from ndnsci import make_sample

    root = tmp_path_factory.mktemp("sample")
    make_sample(root, big_mib=8)
    return root


@pytest.fixture(scope="session")
def stack(fw: Forwarder, sample_dir: Path, session_dir: Path) -> Iterator[Any]:
    """The real system (``ndnsci up``): catalog on a free port with the sample published, and
    ``ndnsci serve --catalog`` on the session's forwarder. NDNSCI_CATALOG points at it."""
    from ndnsci import LocalStack

    with LocalStack(
        sample_dir, port=0, forwarder="shared", workdir=session_dir / "stack"
    ) as running:
        yield running
