"""The default engine, ``auto`` (ndnsci/native/auto.py), on a real plane: NDN-DPDK's fetcher for
what the plane's file server serves, ndnsci's own consumer for the rest, and a file the native
fetcher cannot finish (its process killed mid-file) finished by ndnsci's own, resuming from the
ranges the fetcher completed, verified."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

from native_support import PlaneFixture
from support import Serve, wait_for
from test_native_plane import FileServer, random_file, sha256, unique

from ndnsci.native.auto import AutoTransport
from ndnsci.native.fetcher import RANGE_SEGMENTS
from ndnsci.sdk import transports
from ndnsci.sdk.fetch import fetch_file
from ndnsci.sdk.report import Outcome


def test_auto_moves_what_the_file_server_serves_natively_and_the_rest_itself(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    transports.get_transport.cache_clear()
    native_root, own_root = tmp_path / "native", tmp_path / "own"
    random_file(native_root / "a.bin", 3_000_000)
    random_file(own_root / "b.bin", 1_000_000)
    native_prefix, own_prefix = unique("/test/auto-native"), unique("/test/auto-own")
    auto = AutoTransport()
    own_serve = Serve(own_root, own_prefix).start()
    try:
        with FileServer(native_root, native_prefix):
            assert auto.engine_for(f"{native_prefix}/a.bin") == "ndn-dpdk"
            assert auto.engine_for(f"{own_prefix}/b.bin") == "python"
            native = fetch_file(f"{native_prefix}/a.bin", tmp_path / "out")
            own = fetch_file(f"{own_prefix}/b.bin", tmp_path / "out")
    finally:
        own_serve.stop()
    # NDN-DPDK's file server publishes no SHA-256 (nor a signature): the bytes are compared here
    assert (native.status, native.engine, native.checksum) == ("done", "ndn-dpdk", "unavailable")
    assert (own.status, own.engine, own.checksum) == ("done", "python", "verified")
    assert sha256(tmp_path / "out" / "a.bin") == sha256(native_root / "a.bin")


def test_a_file_the_native_fetcher_cannot_finish_is_finished_by_ndnsci_s_own_resuming(
    own_plane: PlaneFixture, tmp_path: Path
) -> None:
    transports.get_transport.cache_clear()
    root = tmp_path / "root"
    original = random_file(root / "big.bin", 2 * RANGE_SEGMENTS * 8000 + 5_000_000)
    prefix = unique("/test/auto-fallback")
    out = tmp_path / "out"
    state = out / "big.bin.part.state"  # the native fetcher's record of its finished ranges
    result: dict[str, Outcome | BaseException] = {}

    def run() -> None:
        try:
            result["outcome"] = fetch_file(f"{prefix}/big.bin", out)
        except BaseException as exc:  # the test's thread reports it below
            result["outcome"] = exc

    def a_range_finished() -> bool:
        try:
            return bool(json.loads(state.read_text()).get("finished"))
        except (OSError, ValueError):
            return False

    with FileServer(root, prefix):
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wait_for(a_range_finished, 300, "the native fetcher to finish its first range")
        fetcher = own_plane.plane.load().pids["fetcher"]  # type: ignore[union-attr]
        os.kill(fetcher, signal.SIGKILL)
        thread.join(600)
        assert not thread.is_alive(), "the fetch did not end"
    outcome = result["outcome"]
    assert isinstance(outcome, Outcome), outcome
    assert (outcome.status, outcome.checksum) == ("done", "unavailable")  # compared below
    assert outcome.engine == "ndn-dpdk+python"
    assert outcome.resumed_segments >= RANGE_SEGMENTS  # the fetcher's ranges were kept
    assert any("NDN-DPDK's fetcher did not finish" in w for w in outcome.warnings)
    assert sha256(out / "big.bin") == sha256(original)
