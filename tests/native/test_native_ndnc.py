"""NDNc for real, through the NDN-DPDK forwarder: ``ndncping`` both ends, and ``ndncft-client``
(the ``ndnc`` engine) reading from NDN-DPDK's file server, byte-identical. NDNc is built from
the pinned sources with the patches in deploy/ndnc/patches (start-up order, writing the file,
a clean exit); each test here fails without one of them."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from native_support import PlaneFixture
from support import wait_for
from test_native_plane import FileServer, random_file, sha256, unique

from ndnsci.errors import FetchError, FetchTimeout, NotFoundError, TransportError
from ndnsci.native import gql, install
from ndnsci.native.ndnc import NdncTransport, _failure
from ndnsci.native.plane import NDNC_SOCKET_DIR
from ndnsci.sdk.transports import FetchOptions, Job, Received


def memif_faces(plane: PlaneFixture) -> list[str]:
    with gql.Client(plane.layout.forwarder.url) as fw:
        return sorted(f["id"] for f in fw.faces() if f["locator"]["scheme"] == "memif")


def ndnc_receive(plane: PlaneFixture, name: str, part: Path, **options: object) -> Received:
    part.touch()
    job = Job(
        name=name,
        part=str(part),
        state=str(part) + ".state",
        resume=False,
        options=FetchOptions(**options),  # type: ignore[arg-type]
        progress=lambda done, total: None,
        stop=threading.Event(),
    )
    return NdncTransport(plane.plane).receive(job)


STATS = re.compile(rb"(\d+) packets transmitted, (\d+) packets received")


def stop_with_stats(proc: subprocess.Popen[bytes]) -> tuple[int, bytes]:
    """SIGINT (NDNc's clean exit), then its exit status and output."""
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    return proc.returncode, out


def test_ndncping_client_and_server_through_the_ndndpdk_forwarder(
    plane: PlaneFixture, ndnc_build: install.Build
) -> None:
    url = plane.layout.forwarder.url
    name = unique("/test/ndncping")
    faces_before = memif_faces(plane)
    NDNC_SOCKET_DIR.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [str(ndnc_build.bin("ndncping-server")), "--gqlserver", url, "--name", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    client: subprocess.Popen[bytes] | None = None
    try:
        time.sleep(2)  # its face and FIB entry (NDNc waits a second after making the face)
        assert server.poll() is None, server.communicate()[0].decode(errors="replace")
        client = subprocess.Popen(
            [str(ndnc_build.bin("ndncping-client")), "--gqlserver", url, "--name", name],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        time.sleep(4)
        status, out = stop_with_stats(client)
        assert status == 0, out.decode(errors="replace")
        sent, replies = map(int, STATS.search(out).groups())  # type: ignore[union-attr]
        # every Interest answered but the one in flight at SIGINT, RTTs reported per reply
        assert replies >= 100, out.decode(errors="replace")
        assert sent - replies <= 2, out.decode(errors="replace")
        assert len(re.findall(rb"%s/.* \d+ us" % name.encode(), out)) >= replies - 2
    finally:
        if client is not None and client.poll() is None:
            client.kill()
        status, out = stop_with_stats(server)
    assert status == 0, out.decode(errors="replace")
    served, asked = map(int, STATS.search(out).groups())  # type: ignore[union-attr]
    assert served == asked >= replies
    # both deleted their faces on the way out
    assert memif_faces(plane) == faces_before


@pytest.mark.parametrize("size", [1, 8000, 24_000_001])
def test_ndnc_engine_fetches_from_the_ndndpdk_file_server(
    plane: PlaneFixture, ndnc_build: install.Build, tmp_path: Path, size: int
) -> None:
    root = tmp_path / "root"
    original = random_file(root / "d" / "f.bin", size)
    prefix = unique("/test/ndncft")
    faces_before = memif_faces(plane)
    with FileServer(root, prefix):
        got = ndnc_receive(plane, f"{prefix}/d/f.bin", tmp_path / "f.part")
    assert sha256(tmp_path / "f.part") == sha256(original)  # NDNc wrote every byte in place
    assert got.size == size
    assert got.segments == -(-size // 8000)
    assert memif_faces(plane) == faces_before  # the client's face went with it (clean exit)


def test_ndncft_client_on_a_missing_file_exits_1_without_crashing(
    plane: PlaneFixture, ndnc_build: install.Build, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    random_file(root / "x.bin", 100)
    prefix = unique("/test/ndncnf")
    out = tmp_path / "never.bin"
    with FileServer(root, prefix):
        done = subprocess.run(
            [
                str(ndnc_build.bin("ndncft-client")),
                "--gqlserver",
                plane.layout.forwarder.url,
                "--name-prefix",
                "/",
                "--copy",
                f"{prefix}/missing.bin",
                "--output-file",
                str(out),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )
        # through the engine, the metadata (asked through NDNd) says so first and clearly
        with pytest.raises(NotFoundError):
            ndnc_receive(plane, f"{prefix}/missing.bin", tmp_path / "m.part")
    text = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 1, text  # not 0 (unpatched: success), not -11 (the exit crash)
    assert "no metadata for" in text
    assert not out.exists()


def test_ndnc_engine_times_out_when_the_file_server_dies_mid_transfer(
    plane: PlaneFixture, ndnc_build: install.Build, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    random_file(root / "big.bin", 400_000_000)
    prefix = unique("/test/ndncgone")
    part = tmp_path / "big.part"
    outcome: list[BaseException | None] = []

    def fetch() -> None:
        try:
            ndnc_receive(plane, f"{prefix}/big.bin", part, stall_seconds=3.0)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    server = FileServer(root, prefix).__enter__()
    try:
        thread = threading.Thread(target=fetch, daemon=True)
        thread.start()

        def arrived() -> bool:
            if part.exists() and part.stat().st_blocks * 512 > 4_000_000:
                return True
            assert thread.is_alive(), f"the fetch ended before 4 MB arrived: {outcome}"
            return False

        wait_for(arrived, 120, "4 MB to arrive", every=0.05)
        server.serve.kill()  # ndnsci serve, and with it its file server
        thread.join(120)
    finally:
        server.__exit__()
    assert not thread.is_alive(), "the NDNc fetch did not end"
    (error,) = outcome
    if error is None:
        pytest.fail("the fetch finished before the file server died: make the file bigger")
    # the forwarder either lets NDNc's Interests time out (the stall) or, once the producer's
    # route is gone, answers them with Nacks (NDNc exits 1): both say so, both worth a retry
    assert isinstance(error, FetchTimeout), error
    text = str(error)
    assert "NDNc received nothing for 3 s" in text or "answered NDNc with a Nack" in text, text


# NDNc's output when the forwarder Nacks its Interests mid-transfer (the messages of its AIMD
# pipeline and file client, the zf_log line format, the progress bar redrawn with \r)
NACKED_LOG = (
    "total size 400000000 bytes\n\n"
    "Transferring [▊                    ] 1% 4.9 MB\r"
    "Transferring [▊▊                   ] 2% 9.8 MB\r"
    "11-27 23:44:01.123  4242  4243 F received unsupported NACK packet\n"
    "11-27 23:44:01.124  4242  4244 F pipeline error on receive file content\n"
    "Transfer failed [▊▊                 ] 2% 9.8 MB\n"
    "610 data packets received, 0 timeout retries\n"
    "average delay: 109 milliseconds\n"
)


def test_a_nack_mid_transfer_is_a_timeout_worth_a_retry_that_says_so() -> None:
    error = _failure("/p/big.bin", 1, NACKED_LOG, written=4_880_000, total=400_000_000)
    assert isinstance(error, FetchTimeout)
    text = str(error)
    assert "Nack after 4880000 of 400000000 bytes" in text
    # the quoted log keeps NDNc's errors and leaves its progress bar out
    assert "received unsupported NACK packet" in text
    assert "▊" not in text
    # any other failure stays a plain FetchError (not retried), exit 3 is the face
    other = _failure("/p/big.bin", 1, "11-27 F write /x: No space left on device\n")
    assert type(other) is FetchError and "exit status 1" in str(other)
    assert "No space left" in str(other)
    assert isinstance(_failure("/p/big.bin", 3, ""), TransportError)
    assert "signal 11" in str(_failure("/p/big.bin", -11, ""))
