"""XRootD on NDN for real: Debian's XRootD server with NDNc's storage plugin (deploy/xrootd,
``ndnsci xrootd up``) on the NDN-DPDK forwarder, reading CMS names served by ``ndnsci serve
--engine ndn-dpdk`` and by the Python producer (through NDNd and the plane's link), copied with
the real ``xrdcp`` and ``xrdfs``. Each file is compared byte for byte with its source."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from native_support import PlaneFixture, unavailable
from support import Serve, free_port, run_cli, wait_for
from test_native_plane import FileServer, random_file, sha256

from ndnsci.native import gql, install
from ndnsci.native.plane import NDNC_SOCKET_DIR
from ndnsci.native.xrootd import Settings, State, XrootdServer

_counter = iter(range(1_000_000))

# the tree one producer serves: LFN below /store/mc/<run> -> size
TREE = {
    "AODSIM/a.root": 3_000_000,
    "AODSIM/sub/b.root": 12_345,
    "AODSIM/sub/empty.root": 0,
    "MINIAOD/c.root": 8_000 * 7 + 1,  # one byte past a whole number of segments
}


def lfn_dir(kind: str) -> str:
    """A fresh LFN folder, so no name is already in a forwarder's cache."""
    return f"/store/{kind}/Run{os.getpid()}x{next(_counter)}"


def make_tree(root: Path) -> dict[str, str]:
    return {rel: sha256(random_file(root / rel, size)) for rel, size in TREE.items()}


def xrd(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def memif_faces(url: str) -> list[str]:
    with gql.Client(url) as fw:
        return sorted(f["id"] for f in fw.faces() if f["locator"]["scheme"] == "memif")


@pytest.fixture(scope="module")
def xrootd_build(plane: PlaneFixture) -> install.Build:
    build = install.xrootd_ndn()
    if build is None:
        unavailable("NDNc's XRootD plugin is not built (make native)")
    if shutil.which("xrootd") is None or shutil.which("xrdcp") is None:
        unavailable("XRootD is not installed (deploy/xrootd/install.sh)")
    assert build is not None
    return build


@pytest.fixture(scope="module")
def xrd_run() -> Iterator[Path]:
    """The server's folder: the server runs as user xrootd, who must reach it (the session's
    temporary folder is private)."""
    with tempfile.TemporaryDirectory(prefix="ndnsci-xrd-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        yield Path(tmp)


@pytest.fixture(scope="module")
def server(plane: PlaneFixture, xrootd_build: install.Build, xrd_run: Path) -> Iterator[State]:
    """One XRootD server on the plane's forwarder, for the module."""
    xrd = XrootdServer(xrd_run / "ndn", plane.plane)
    faces_before = memif_faces(plane.layout.forwarder.url)
    state = xrd.up(Settings(port=free_port(), trace_aio=True))
    try:
        assert state.user == "xrootd"  # XRootD refuses root: it runs as the package's user
        assert state.faces and not set(state.faces) & set(faces_before)
        yield state
    finally:
        assert xrd.down() == []
        assert memif_faces(plane.layout.forwarder.url) == faces_before, "the plugin's face"
        assert not list(NDNC_SOCKET_DIR.glob(f"ndnc-memif-{state.pid}-*"))


@pytest.fixture(scope="module")
def mc_tree(
    tmp_path_factory: pytest.TempPathFactory, server: State
) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A CMS tree on NDN-DPDK's file server: (LFN folder, its files on disk, sha256 by path)."""
    lfn = lfn_dir("mc")
    root = tmp_path_factory.mktemp("mc")
    sums = make_tree(root)
    with FileServer(root, "/CMS" + lfn):
        yield lfn, root, sums


def url(state: State, lfn: str) -> str:
    return f"root://127.0.0.1:{state.port}/{lfn}"


# --- one file, stat, listing --------------------------------------------------------------


def test_xrdcp_of_a_file_is_byte_identical(
    server: State, mc_tree: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    lfn, _, sums = mc_tree
    for rel in ("AODSIM/a.root", "MINIAOD/c.root", "AODSIM/sub/empty.root"):
        out = tmp_path / Path(rel).name
        done = xrd("xrdcp", "--nopbar", url(server, f"{lfn}/{rel}"), str(out))
        assert done.returncode == 0, done.stderr
        assert sha256(out) == sums[rel], rel


def test_xrdfs_stat_and_ls_give_sizes_modes_and_kinds(
    server: State, mc_tree: tuple[str, Path, dict[str, str]]
) -> None:
    lfn, root, _ = mc_tree
    stat = xrd("xrdfs", f"root://127.0.0.1:{server.port}", "stat", f"{lfn}/AODSIM/a.root")
    assert stat.returncode == 0, stat.stderr
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", stat.stdout, re.MULTILINE))
    assert fields["Size"] == str(TREE["AODSIM/a.root"])
    assert fields["Flags"] == "16 (IsReadable)"  # not Offline (patch 04), not a directory
    assert int(fields["Id"]) > 0
    assert fields["Mode"] == oct((root / "AODSIM/a.root").stat().st_mode & 0o777)[2:].zfill(4)
    listing = xrd("xrdfs", f"root://127.0.0.1:{server.port}", "ls", "-l", f"{lfn}/AODSIM")
    assert listing.returncode == 0, listing.stderr
    rows = {line.split()[-1]: line.split() for line in listing.stdout.splitlines()}
    assert set(rows) == {f"{lfn}/AODSIM/a.root", f"{lfn}/AODSIM/sub"}
    assert rows[f"{lfn}/AODSIM/a.root"][0].startswith("-r")
    assert rows[f"{lfn}/AODSIM/a.root"][3] == str(TREE["AODSIM/a.root"])
    assert rows[f"{lfn}/AODSIM/sub"][0].startswith("d")


def test_xrdcp_recursive_copies_the_whole_tree(
    server: State, mc_tree: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    lfn, _, sums = mc_tree
    out = tmp_path / "copy"
    out.mkdir()  # xrdcp -r wants its target folder to exist
    done = xrd("xrdcp", "--nopbar", "-r", url(server, lfn), str(out))
    assert done.returncode == 0, done.stderr
    top = out / Path(lfn).name
    copied = {str(p.relative_to(top)): sha256(p) for p in top.rglob("*") if p.is_file()}
    assert copied == sums


def test_reads_are_asynchronous_and_right(
    server: State, mc_tree: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    """``xrootd.async force``: XRootD hands the plugin's Read(XrdSfsAio*) every read, in 64 KiB
    pages for kXR_pgread (xrdcp's default) and in 1 MiB segments (``segsize``) for kXR_read;
    each ``ofs_aioread`` log line is one (``ofs.trace aio``)."""
    lfn, _, sums = mc_tree
    log = Path(server.log)
    size = TREE["AODSIM/a.root"]
    for env, piece in (({}, 65536), ({"XRD_CPUSEPGWRTRD": "0"}, 1 << 20)):
        before = log.read_text(errors="replace").count("ofs_aioread")
        out = tmp_path / f"a{piece}.root"
        done = xrd("xrdcp", "--nopbar", url(server, f"{lfn}/AODSIM/a.root"), str(out), env=env)
        assert done.returncode == 0, done.stderr
        assert sha256(out) == sums["AODSIM/a.root"]
        reads = re.findall(r"ofs_aioread: (\d+)@", log.read_text(errors="replace"))[before:]
        assert len(reads) >= size // piece, (env, len(reads))
        assert max(int(n) for n in reads) == piece


# --- errors -------------------------------------------------------------------------------


def test_a_name_no_producer_serves_is_a_clean_xrootd_error(
    server: State, mc_tree: tuple[str, Path, dict[str, str]], tmp_path: Path
) -> None:
    lfn, _, _ = mc_tree
    # inside the file server's mount (it answers "no such file"), and where nothing serves
    for missing in (f"{lfn}/AODSIM/nothing.root", f"{lfn_dir('none')}/x.root"):
        done = xrd("xrdcp", "--nopbar", url(server, missing), str(tmp_path / "x"), timeout=120)
        assert done.returncode != 0
        assert "[3011]" in done.stderr and "no such file or directory" in done.stderr, done.stderr
        assert not (tmp_path / "x").exists()
        stat = xrd("xrdfs", f"root://127.0.0.1:{server.port}", "stat", missing, timeout=120)
        assert stat.returncode != 0 and "[3011]" in stat.stderr, stat.stderr
    # the server still serves after the errors
    done = xrd("xrdcp", "--nopbar", url(server, f"{lfn}/AODSIM/a.root"), str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr


def test_writing_is_refused(server: State, tmp_path: Path) -> None:
    src = random_file(tmp_path / "up.root", 1000)
    lfn = f"{lfn_dir('up')}/up.root"
    done = xrd("xrdcp", "--nopbar", str(src), url(server, lfn))
    # XRootD creates nothing (the plugin: -ENOTSUP) and opens for writing: the plugin's -EROFS
    assert done.returncode == 54, done.stderr  # xrdcp: the server answered with an error
    refused = f"[3025] Unable to open {lfn}; read-only file system"  # kXR_fsReadOnly
    assert f"[ERROR] Server responded with an error: {refused}" in done.stderr, done.stderr


# --- concurrency and faults ---------------------------------------------------------------


def test_two_concurrent_xrdcp_of_one_file(
    server: State, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lfn = lfn_dir("mc")
    root = tmp_path_factory.mktemp("two")
    digest = sha256(random_file(root / "big.root", 48 << 20))
    with FileServer(root, "/CMS" + lfn):
        copies = [
            subprocess.Popen(
                ["xrdcp", "--nopbar", url(server, f"{lfn}/big.root"), str(tmp_path / f"{i}.root")],
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(2)
        ]
        for copy in copies:
            _, err = copy.communicate(timeout=300)
            assert copy.returncode == 0, err
    assert [sha256(tmp_path / f"{i}.root") for i in range(2)] == [digest, digest]


def test_a_producer_killed_during_xrdcp_and_restarted(
    plane: PlaneFixture,
    xrootd_build: install.Build,
    xrd_run: Path,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # a server of its own whose reads wait long enough (8 tries of a 10 s lifetime) for a file
    # server that restarts slowly on a loaded machine (CI: 4 s tries ran out)
    xrd = XrootdServer(xrd_run / "kill", plane.plane)
    server = xrd.up(Settings(port=free_port(), lifetime_ms=10000))
    try:
        _killed_and_restarted(server, tmp_path, tmp_path_factory)
    finally:
        assert xrd.down() == []


def _killed_and_restarted(
    server: State, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lfn = lfn_dir("mc")
    root = tmp_path_factory.mktemp("kill")
    digest = sha256(random_file(root / "big.root", 128 << 20))
    out = tmp_path / "big.root"
    first = FileServer(root, "/CMS" + lfn).__enter__()
    copy = subprocess.Popen(
        ["xrdcp", "--nopbar", url(server, f"{lfn}/big.root"), str(out)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # wait for the copy to be under way (bytes written), then kill the producer

        def under_way() -> bool:
            if out.exists() and out.stat().st_size > 0:
                return True
            assert copy.poll() is None, copy.communicate()[1]
            return False

        wait_for(under_way, 60, "the copy's first bytes", every=0.02)
        first.serve.kill()  # SIGKILL: its file server dies with it
        assert copy.poll() is None, "the copy ended before the producer was killed"
        time.sleep(1)
        assert copy.poll() is None, "the copy gave up while the producer was away"
        with FileServer(root, "/CMS" + lfn):
            _, err = copy.communicate(timeout=300)
        assert copy.returncode == 0, err
        assert sha256(out) == digest
    finally:
        if copy.poll() is None:
            copy.kill()
        first.__exit__()


def test_the_python_producer_is_read_through_ndnd_and_the_link(
    server: State, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    lfn = lfn_dir("data")
    root = tmp_path_factory.mktemp("py")
    digest = sha256(random_file(root / "x" / "p.root", 2_000_003))
    producer = Serve(root, "/CMS" + lfn).start()
    try:
        out = tmp_path / "p.root"
        done = xrd("xrdcp", "--nopbar", url(server, f"{lfn}/x/p.root"), str(out))
        assert done.returncode == 0, done.stderr
        assert sha256(out) == digest
        listing = xrd("xrdfs", f"root://127.0.0.1:{server.port}", "ls", "-l", lfn)
        assert listing.returncode == 0, listing.stderr
        assert listing.stdout.split()[0].startswith("d"), listing.stdout
    finally:
        producer.stop()


# --- the command line ----------------------------------------------------------------------


def test_engine_ndnd_is_refused_saying_why() -> None:
    done = run_cli("xrootd", "up", "--engine", "ndnd", "--port", str(free_port()))
    assert done.returncode == 2
    assert "memif" in done.stderr and "--engine ndn-dpdk" in done.stderr
    assert done.stdout == ""


def test_up_without_the_plane_says_so(tmp_path: Path, xrootd_build: install.Build) -> None:
    run = tmp_path / "xrd"
    done = run_cli(
        "xrootd",
        "up",
        "--port",
        str(free_port()),
        env={"NDNSCI_NATIVE_RUN": str(tmp_path / "no-plane"), "NDNSCI_XROOTD_RUN": str(run)},
    )
    assert done.returncode == 1
    assert "not up" in done.stderr and "ndnsci native up" in done.stderr
    assert not (run / "state.json").exists()


def test_cli_up_status_down(
    plane: PlaneFixture, xrootd_build: install.Build, xrd_run: Path
) -> None:
    env = {"NDNSCI_XROOTD_RUN": str(xrd_run / "cli")}
    port = free_port()
    up = run_cli("xrootd", "up", "--port", str(port), "--window", "256", env=env)
    try:
        assert up.returncode == 0, up.stderr
        assert up.stdout.strip() == f"root://127.0.0.1:{port}/"  # stdout: the result only
        again = run_cli("xrootd", "up", "--port", str(free_port()), env=env)
        assert again.returncode == 1 and "already runs" in again.stderr
        status = run_cli("xrootd", "status", "--json", env=env)
        assert status.returncode == 0, status.stderr
        info = json.loads(status.stdout)
        assert info["up"] and info["engine"] == "ndn-dpdk" and info["settings"]["window"] == 256
        assert info["faces"]
        log = Path(info["log"]).read_text()
        assert "pipelineSize 256" in log and "prefix /CMS" in log
    finally:
        down = run_cli("xrootd", "down", env=env)
    assert down.returncode == 0, down.stderr
    status = run_cli("xrootd", "status", env=env)
    assert status.returncode == 1 and status.stdout.strip() == "down"
    assert not set(info["faces"]) & set(memif_faces(plane.layout.forwarder.url))


def test_a_taken_port_is_refused_clearly(
    plane: PlaneFixture, xrootd_build: install.Build, xrd_run: Path, server: State
) -> None:
    done = run_cli(
        "xrootd", "up", "--port", str(server.port), env={"NDNSCI_XROOTD_RUN": str(xrd_run / "t")}
    )
    assert done.returncode == 1
    assert f"port {server.port} is not free" in done.stderr
