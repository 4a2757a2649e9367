"""The emulated network for real, on the small topology (two nodes, one emulated link):
namespaces, veths, tbf, the delay element, NDNd on each node, a producer and a cache.

Needs root (network namespaces); CI runs as root. Each testbed is named after this process
(``nsci-<pid>-...``) and recorded in a state folder of the test's own, so parallel runs never
touch each other's namespaces.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import wait_for

from ndnsci.base import processes
from ndnsci.errors import TestbedError
from ndnsci.testbed import experiments, netns, topology
from ndnsci.testbed.bed import Testbed

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="network namespaces need root (CI runs the suite as root)"
)

SMALL = Path(__file__).resolve().parents[2] / "deploy" / "testbed" / "small.toml"
CLI = [sys.executable, "-m", "ndnsci", "testbed"]


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("testbed-state")
    saved = os.environ.get("NDNSCI_TESTBED_STATE")
    os.environ["NDNSCI_TESTBED_STATE"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("NDNSCI_TESTBED_STATE", None)
    else:
        os.environ["NDNSCI_TESTBED_STATE"] = saved


@pytest.fixture(scope="module")
def bed(state_dir, ndnd_binary):
    with Testbed(topology.load(SMALL), log=sys.stderr) as testbed:
        yield testbed
    assert not _ours(testbed.id)


def _ours(testbed_id: str) -> list[str]:
    """What is left of a testbed: its namespaces, and any interface of the host's naming it."""
    names = [ns for ns in netns.namespaces() if ns.startswith(testbed_id + "-")]
    links = subprocess.run(
        ["ip", "-o", "link", "show"], check=False, capture_output=True, text=True
    ).stdout
    return names + [line for line in links.splitlines() if testbed_id in line]


def _producer(bed):
    return next(p for name, p in bed.procs.items() if name.startswith("producer-s-"))


def test_bytes_cross_the_emulated_link(bed, tmp_path):
    data = os.urandom(3 << 20)
    (bed.data_dir("s") / "cross.bin").write_bytes(data)
    wan = bed.topo.wan()
    before = bed.delay_element_stats(wan)["directions"]
    out = tmp_path / "got"
    bed.ndnsci_cli("c", ["fetch", "/ndnsci/files/cross.bin", "-o", str(out), "-q"])
    assert (
        hashlib.sha256((out / "cross.bin").read_bytes()).digest() == hashlib.sha256(data).digest()
    )
    after = bed.delay_element_stats(wan)["directions"]
    s_to_c = next(i for i, d in enumerate(after) if d["from"] == "s")
    carried = after[s_to_c]["bytes"] - before[s_to_c]["bytes"]
    assert carried >= len(data)  # every byte went through the delay element
    assert after[s_to_c]["dropped_full"] == 0


def test_the_rate_limit_holds_within_10_percent(bed):
    wan = bed.topo.wan()
    for sender, receiver in (("s", "c"), ("c", "s")):
        measured = experiments.measure_rate(bed, sender=sender, receiver=receiver, seconds=2.5)
        assert measured["mbps"] == pytest.approx(wan.rate_mbps, rel=0.10), measured


def test_the_delay_holds_within_20_percent(bed):
    bed.start_pingserver("s", "/ndnsci/ping/s")
    bed.add_routes("/ndnsci/ping/s", "s")
    bed.ndn_ping("c", "/ndnsci/ping/s", count=3, interval_ms=20)
    rtts = sorted(bed.ndn_ping("c", "/ndnsci/ping/s", count=20, interval_ms=30))
    median = rtts[len(rtts) // 2]
    assert median == pytest.approx(bed.topo.wan().rtt_ms, rel=0.20), rtts
    assert rtts[0] >= bed.topo.wan().rtt_ms  # nothing comes back faster than the delay


def test_a_second_fetch_is_served_by_the_gateway_cache(bed, tmp_path):
    (bed.data_dir("s") / "cached.bin").write_bytes(os.urandom(2 << 20))
    segments = -(-(2 << 20) // 8000)
    producer = _producer(bed)
    first = bed.producer_counters(producer)
    bed.fetch("c", "/ndnsci/files/cached.bin")
    second = bed.producer_counters(producer)
    assert second["segments"] - first["segments"] >= segments  # the first came from the producer
    hits_before = bed.cs_info("c")["nHits"]
    result = bed.fetch("c", "/ndnsci/files/cached.bin")
    third = bed.producer_counters(producer)
    assert result["checksum"] == "verified"
    # the producer saw no Interest for the content; at most the RDR discovery (MustBeFresh,
    # its metadata is fresh for 1 s) reached it
    assert third["segments"] == second["segments"]
    assert third["interests"] - second["interests"] == third["metadata"] - second["metadata"] <= 1
    assert bed.cs_info("c")["nHits"] - hits_before >= segments


def test_http_takes_the_same_emulated_path(bed):
    (bed.data_dir("s") / "web.bin").write_bytes(os.urandom(4 << 20))
    stats = bed.curl("c", f"http://{bed.address('s')}:8080/web.bin")
    assert stats["size_download"] == 4 << 20
    assert stats["mbit_s"] <= bed.topo.wan().rate_mbps * 1.05  # shaped by the link's tbf
    assert stats["time_connect"] >= bed.topo.wan().rtt_ms / 1000  # one RTT for the handshake


def _start_up(state_dir, *extra):
    env = {**os.environ, "NDNSCI_TESTBED_STATE": str(state_dir)}
    proc = subprocess.Popen(
        [*CLI, "up", "--topology", str(SMALL), "--duration", "120", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    if not line:
        proc.kill()
        pytest.fail(f"testbed up did not come up:\n{proc.stderr.read()}")
    described = json.loads(line)
    assert sorted(described["namespaces"]) == ["c", "s"]
    return proc, described


def test_down_removes_every_namespace_and_veth(state_dir):
    proc, described = _start_up(state_dir)
    testbed_id = described["id"]
    try:
        assert set(described["namespaces"].values()) <= netns.namespaces()
        down = subprocess.run(
            [*CLI, "down", testbed_id],
            check=False,
            capture_output=True,
            text=True,
            env={**os.environ, "NDNSCI_TESTBED_STATE": str(state_dir)},
            timeout=120,
        )
        assert down.returncode == 0, down.stderr
        assert proc.wait(timeout=60) == 130  # the builder stopped everything itself
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _ours(testbed_id) == []
    assert (
        testbed_id
        not in subprocess.run(
            ["ip", "netns", "list"], check=False, capture_output=True, text=True
        ).stdout
    )
    assert not (state_dir / f"{testbed_id}.json").exists()
    assert not Path(f"/tmp/{testbed_id}").exists()


def test_ctrl_c_removes_everything(state_dir):
    proc, described = _start_up(state_dir)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert _ours(described["id"]) == []


def test_a_killed_builder_leaves_nothing_running_and_down_removes_the_rest(tmp_path):
    state_dir = tmp_path / "state"  # its own: `down` without ID takes down all it lists
    proc, described = _start_up(state_dir)
    record = netns.BedRecord.load(state_dir / f"{described['id']}.json")
    pids = [pid for ns in record.namespaces for pid in netns.pids_in(ns)]
    assert pids  # forwarders, the producer, the HTTP server, the delay element
    proc.kill()  # no cleanup of its own
    proc.wait(timeout=10)
    wait_for(  # they died with their builder
        lambda: not any(processes.alive(p) for p in pids),
        20,
        "the builder's processes to die with it",
        detail=lambda: f": {[p for p in pids if processes.alive(p)]} still running",
    )
    down = subprocess.run(
        [*CLI, "down"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NDNSCI_TESTBED_STATE": str(state_dir)},
    )
    assert down.returncode == 0, down.stderr
    assert sorted(down.stdout.split()) == sorted(record.namespaces)
    assert _ours(described["id"]) == []


def test_a_failure_half_way_removes_what_was_made(state_dir, monkeypatch):
    monkeypatch.setenv("NDND", "/bin/false")  # every forwarder fails to start
    testbed = Testbed(topology.load(SMALL), log=sys.stderr)
    with pytest.raises(TestbedError, match="node c"):
        testbed.up()
    assert testbed.record is not None and len(testbed.record.namespaces) == 3  # made, then...
    assert _ours(testbed.id) == []  # ...removed
    assert not testbed.record.path.exists()


def test_run_link_json_follows_the_contract(state_dir, tmp_path):
    proc = subprocess.run(
        [
            *CLI,
            "run",
            "link",
            "--topology",
            str(SMALL),
            "--quick",
            "--json",
            "--out",
            str(tmp_path),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NDNSCI_TESTBED_STATE": str(state_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    topo = topology.load(SMALL)
    assert result["rate_mbps_set"] == topo.wan().rate_mbps
    assert result["rtt_ms_set"] == topo.wan().rtt_ms
    assert result["rate_mbps_measured"] == pytest.approx(result["rate_mbps_set"], rel=0.10)
    assert result["rtt_ms_measured"] == pytest.approx(result["rtt_ms_set"], rel=0.20)
    assert (tmp_path / "testbed-link.json").exists()
    assert (tmp_path / "testbed-link.png").read_bytes()[:4] == b"\x89PNG"


def test_run_sweep_caching_cachehit_follow_the_contract(state_dir, tmp_path):
    experiments_run = ("sweep", "caching", "cachehit")
    proc = subprocess.run(
        [
            *CLI,
            "run",
            *experiments_run,
            *("--topology", str(SMALL), "--quick", "--json", "--no-plot"),
            *("--out", str(tmp_path)),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NDNSCI_TESTBED_STATE": str(state_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    results = {r["experiment"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert sorted(results) == sorted(experiments_run)
    for name in experiments_run:
        assert json.loads((tmp_path / f"testbed-{name}.json").read_text()) == results[name]

    sweep = results["sweep"]
    quick = experiments.Options.quick()
    expected = {(w, s, "fixed") for w in quick.windows for s in sweep["segment_sizes"]} | {
        (64, s, cc) for s in sweep["segment_sizes"] for cc in ("aimd", "cubic")
    }
    assert {(p["window"], p["segment_bytes"], p["cc"]) for p in sweep["points"]} == expected
    assert all(p["mbps"] > 0 for p in sweep["points"])

    caching = results["caching"]
    assert caching["producer_interests_during_cached"] == 0
    assert caching["gain"] == pytest.approx(caching["ndn_cached_mbps"] / caching["http_mbps"], 1e-3)
    assert caching["http_mbps"] == pytest.approx(topology.load(SMALL).wan().rate_mbps, rel=0.2)

    cachehit = results["cachehit"]
    assert set(cachehit["simulated"]) == {"lru", "lfu", "fifo", "random"}
    # NDNd's real LRU content store gives the hit ratio the simulation predicts
    for capacity, ratio in cachehit["replayed"]["lru"].items():
        assert ratio == pytest.approx(cachehit["replay_simulated"]["lru"][capacity], abs=0.02)


ATTACHED = """
name = "attached"

[nodes]
h = { site = "A", role = "consumer", attach = "c" }
c = { site = "A", role = "router", cs_capacity = 65535 }
s = { site = "B", role = "server", serve = "/ndnsci/files", http_port = 8080 }

[[links]]
a = "h"
b = "c"
face = "tcp"

[[links]]
name = "wan"
a = "c"
b = "s"
rate_mbps = 50
delay_ms = 5
"""


def test_an_attached_host_fetches_through_its_routers_forwarder(state_dir, ndnd_binary, tmp_path):
    """A consumer with ``attach``: no NDNd of its own, its fetch goes to the router's forwarder
    over TCP, and a second fetch comes from that router's cache."""
    path = tmp_path / "attached.toml"
    path.write_text(ATTACHED)
    with Testbed(topology.load(path), log=sys.stderr) as bed:
        assert bed.forwarders() == ["c", "s"]
        assert not bed.socket("h").exists()  # no forwarder on h
        assert bed.transport("h") == f"tcp://{bed.address('c')}:6363"
        with pytest.raises(TestbedError, match="no forwarder of its own"):
            bed.cs_info("h")
        data = os.urandom(1 << 20)
        (bed.data_dir("s") / "a.bin").write_bytes(data)
        producer = _producer(bed)
        first = bed.fetch("h", "/ndnsci/files/a.bin")
        assert first["checksum"] == "verified" and first["size"] == len(data)
        before = bed.producer_counters(producer)
        hits = bed.cs_info("c")["nHits"]
        second = bed.fetch("h", "/ndnsci/files/a.bin")
        assert second["checksum"] == "verified"
        assert bed.producer_counters(producer)["segments"] == before["segments"]
        assert bed.cs_info("c")["nHits"] - hits >= -(-len(data) // 8000)
        # the router restarted (an experiment's empty cache): the host's next fetch reconnects
        bed.restart_forwarder("c", cs_capacity=0)
        assert bed.fetch("h", "/ndnsci/files/a.bin")["checksum"] == "verified"
        testbed_id = bed.id
    assert not _ours(testbed_id)
