"""``ndnsci testbed run federation --quick`` for real on the small topology: two catalog sites
at either end of the emulated link, 5000 records published at one reach the other over NDN
(``ndnsci catalog federate`` at both), then a third catalog mirrors them over HTTP across the
same link; the result follows the output contract and its figures add up.

Needs root (network namespaces); CI runs as root. The testbed is recorded in a state folder of
the test's own, so parallel runs never touch each other's namespaces.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ndnsci.testbed import experiments, topology

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="network namespaces need root (CI runs the suite as root)"
)

SMALL = Path(__file__).resolve().parents[2] / "deploy" / "testbed" / "small.toml"
CLI = [sys.executable, "-m", "ndnsci", "testbed"]


def test_run_federation_follows_the_contract(ndnd_binary, tmp_path):
    state, out = tmp_path / "state", tmp_path / "out"
    argv = [*CLI, "run", "federation", "--topology", str(SMALL), "--quick", "--json"]
    proc = subprocess.run(
        [*argv, "--out", str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "NDNSCI_TESTBED_STATE": str(state)},
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["experiment"] == "federation"
    assert json.loads((out / "testbed-federation.json").read_text()) == result
    assert (out / "testbed-federation.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(state.glob("*.json"))  # the testbed is down, its record gone

    n = experiments.Options.quick().federation_records
    wan = topology.load(SMALL).wan()
    assert result["records"] == n
    assert result["subscriber_records"] == n  # over NDN
    assert result["mirror_records"] == n  # over HTTP
    assert result["sites"]["publisher"]["node"] == "s"
    assert result["sites"]["subscriber"]["node"] == "c"
    assert result["batches"] == math.ceil(n / result["batch_changes"])

    # every signed batch crossed the emulated link to the subscriber, over NDN and over HTTP,
    # and the rest (Sync Interests, metadata, the key, Interests) is small beside them
    batches = result["batch_bytes"]
    assert result["ndn_bytes_to_subscriber"] >= batches
    assert result["wan_bytes_to_subscriber"] >= batches
    assert result["http_wan_bytes"] >= batches
    assert result["wan_bytes"] < 3 * batches
    assert (
        result["wan_bytes"] == result["wan_bytes_to_subscriber"] + result["wan_bytes_to_publisher"]
    )
    assert result["wan_bytes_per_record"] == pytest.approx(result["wan_bytes"] / n, abs=0.01)
    # wire bytes carry the NDN packets plus Ethernet, IP and UDP headers (the NDN bytes were
    # read a moment after the last sample: a Sync Interest may have come in between)
    assert result["wan_bytes_to_subscriber"] >= 0.98 * result["ndn_bytes_to_subscriber"]

    # the clock: no site has the records before a round trip of the link after the publish
    after = result["convergence_seconds_after_publish"]
    assert after >= wan.rtt_ms / 1000
    assert result["convergence_seconds_from_publish_start"] == pytest.approx(
        result["publish_seconds"] + after, abs=0.01
    )
    assert result["ratio_ndn_after_publish_to_http"] == pytest.approx(
        after / result["http_mirror_seconds"], rel=0.01
    )
    for series in result["series"].values():
        counts = [s["records"] for s in series]
        assert counts == sorted(counts) and counts[-1] == n
    ndn = result["series"]["ndn"]
    assert ndn[-1]["t"] == pytest.approx(result["convergence_seconds_from_publish_start"], abs=0.01)
