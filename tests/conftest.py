"""Fixtures shared by the suites that need a real NDN forwarder (tests/ndn, tests/sdk, ...).

The forwarder is built once by deploy/forwarder/build.sh (a no-op when already built) and runs
for the whole session in a temp folder, with its always-on UDP listener and WebSocket face on
free ports so parallel sessions never clash (``fw``). It also gives the session a publisher key
and a cache of its own (NDNSCI_CONFIG_DIR, NDNSCI_CACHE_DIR), so no test touches the user's.
A test that stops or restarts a forwarder takes one of its own from ``make_forwarder``.

Every test process (the one of a serial run, each pytest-xdist worker of ``pytest -n N``) gets
folders of its own at start-up, before any test runs: XDG_STATE_HOME, XDG_DATA_HOME,
XDG_CACHE_HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR (the default forwarder socket),
NDNSCI_CONFIG_DIR and NDNSCI_CACHE_DIR point into a temp folder of the process, removed at the
end, so parallel workers share no user folder, no key and no default socket.

Two markers are applied here by :func:`pytest_collection_modifyitems` (registered in
pyproject.toml), from where a test lives and what fixtures it uses:

- ``serial``: must not run beside other tests (``make test`` runs these after the parallel
  pass, alone): tests/native (hugepages, the fixed veth pair and GraphQL ports) and
  tests/testbed (network namespaces, the host's UDP buffers, timing on an emulated link), plus
  those listed in ``SERIAL`` with the reason;
- ``system``: needs a running system (a forwarder, PostgreSQL, a server or a service in a
  subprocess): those that use a fixture of ``SYSTEM_FIXTURES``, run on the ``postgresql``
  backend, live in ``SYSTEM_FOLDERS``, or are listed in ``SYSTEM``. ``make check`` runs the
  others (``pytest -m "not system"``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from support import Forwarder

from ndnsci.ndn import keys

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"

# the process's own folders, made before any test module is imported (see the docstring)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
_PROCESS_DIR = Path(tempfile.mkdtemp(prefix=f"ndnsci-{_WORKER}-", dir="/tmp"))
ISOLATED = {
    "XDG_STATE_HOME": "state",
    "XDG_DATA_HOME": "data",
    "XDG_CACHE_HOME": "xdg-cache",
    "XDG_CONFIG_HOME": "xdg-config",
    "XDG_RUNTIME_DIR": "run",
    "NDNSCI_CONFIG_DIR": "config",
    "NDNSCI_CACHE_DIR": "cache",
}
for _variable, _folder in ISOLATED.items():
    (_PROCESS_DIR / _folder).mkdir(mode=0o700)
    os.environ[_variable] = str(_PROCESS_DIR / _folder)

# Hypothesis' per-example deadline (200 ms) measures the machine, not the code: on a loaded
# 2-core machine an example of test_uri_round_trip_matches_python_ndn took 907 ms once and
# 0.33 ms when replayed (FlakyFailure). The properties stay; the wall-clock limit goes.
hypothesis.settings.register_profile("ndnsci", deadline=None)
hypothesis.settings.load_profile("ndnsci")

# folders whose every test must run alone (``serial``) / needs a running system (``system``)
SERIAL_FOLDERS = ("native", "testbed")
SYSTEM_FOLDERS = ("native", "testbed", "federation")
# fixtures that start (or are) a real system: forwarders, producers, servers, PostgreSQL
SYSTEM_FIXTURES = frozenset(
    {
        "ndnd_binary",
        "fw",
        "make_forwarder",
        "stack",
        "serve",
        "postgres",
        "server",
        "site",
        "make_sites",
        "plane",
        "native_ready",
    }
)
# tests that start services themselves (in a subprocess), by node id's start: the reason
SYSTEM: dict[str, str] = {
    "tests/catalog/test_http_limits.py": "a `catalog serve` process, sent raw requests",
    "tests/catalog/test_load.py::test_a_hundred_clients_and_a_publish_never_wedge_the_catalog": (
        "a `catalog serve` process under a hundred clients and a publish"
    ),
    "tests/catalog/test_cli.py::test_a_killed_bulk_load_keeps_whole_batches": (
        "an `ndnsci publish` process killed during its load"
    ),
    "tests/catalog/test_cli.py::test_records_published_through_a_catalog_server": (
        "a `catalog serve` process"
    ),
    "tests/catalog/test_publish_http.py::test_the_server_starts_its_preparing_process_with_"
    "itself_and_joins_it_at_exit": "a `catalog serve` process and its preparing process",
    "tests/catalog/test_publish_http.py::test_a_server_whose_port_is_taken_before_it_binds_"
    "it_starts_on_another": "`catalog serve` processes, the first on a port already taken",
    "tests/catalog/test_publish_http.py::test_a_catalog_killed_during_a_publish_is_a_clear_"
    "error_and_keeps_what_was_published": "a `catalog serve` process, killed during a publish",
}
# tests elsewhere that fail beside others, by node id's start: the reason
SERIAL: dict[str, str] = {
    "tests/catalog/test_load.py": "a hundred clients against one catalog, timed: beside other"
    " workers on 2 cores its latencies measure the machine, not the catalog",
}


def _listed(nodeid: str, table: dict[str, str]) -> bool:
    return any(nodeid == key or nodeid.startswith(key + "[") or nodeid.startswith(key + "::")
               for key in table)  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(item.path).relative_to(TESTS).parts
        folder = parts[0] if len(parts) > 1 else ""
        if folder in SERIAL_FOLDERS or _listed(item.nodeid, SERIAL):
            item.add_marker(pytest.mark.serial)
        callspec = getattr(item, "callspec", None)
        on_postgres = callspec is not None and callspec.params.get("backend") == "postgresql"
        if (
            folder in SYSTEM_FOLDERS
            or on_postgres
            or SYSTEM_FIXTURES.intersection(getattr(item, "fixturenames", ()))
            or _listed(item.nodeid, SYSTEM)
        ):
            item.add_marker(pytest.mark.system)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fuzz-minutes",
        type=float,
        default=0.0,
        help="also fuzz the netCDF header reader this long (tests/translators/test_netcdf_fuzz.py)",
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_PROCESS_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def ndnd_binary() -> Path:
    # one build at a time: on a checkout without NDNd, every xdist worker (and any other pytest
    # of this checkout) would otherwise compile it at once, each slower than the timeout on 2
    # cores; the others wait on the lock, then find it built (a no-op)
    lock_path = REPO / ".cache" / "ndnd-build.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(
            [str(REPO / "deploy" / "forwarder" / "build.sh")],
            check=False,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if proc.returncode != 0:
        pytest.fail(f"cannot build ndnd (deploy/forwarder/build.sh):\n{proc.stderr}")
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
