"""The seed experiments, rerun on the emulated testbed (``ndnsci testbed run NAME``).

=========  =========================================================================
link       the WAN link as emulated: rate (UDP probe) and RTT (``ndnd ping``) asked vs measured
sweep      throughput against fixed windows x segment sizes, and AIMD / CUBIC (seed Fig. 4a/5a)
caching    4 consumers fetch one file in turn: producer, then the gateway cache; vs curl over
           HTTP on the same path (seed Fig. 4d)
cachehit   Zipf (alpha 1.15) cache-hit simulation, LRU/LFU/FIFO/Random x cache size,
           consumers, files; the same requests replayed on NDNd's real cache (seed Fig. 7)
fairness   4 consumers at once over the WAN with AIMD / CUBIC: Jain's index, utilisation
=========  =========================================================================

Each takes a running :class:`~ndnsci.testbed.bed.Testbed` of the default topology's shape
(consumers ``c1``..``c4``, gateways ``gwa``/``gwb``, a ``server``; any topology with the same
roles works) and returns a JSON-ready dict with every raw point. Throughputs are in Mbit/s
(10^6 bits per second) of file content, timed by the consumer from its first Interest to the
verified file.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ndnsci.errors import TestbedError
from ndnsci.testbed import cachesim
from ndnsci.testbed.bed import Testbed

WINDOWS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SEGMENT_SIZES = (1024, 4096, 8000)  # and the largest the producer allows
SWEEP_FILE_EXPONENTS = range(16, 27)  # 64 KiB .. 64 MiB


@dataclass
class Options:
    """Sizes and repeats; ``quick()`` makes every experiment a smoke test of a few seconds."""

    repeats: int = 2
    point_seconds: float = 2.0  # sweep: aim each fixed-window point at about this long
    caching_mb: int = 256
    fairness_mb: int = 64
    windows: tuple[int, ...] = WINDOWS
    segment_sizes: tuple[int, ...] = SEGMENT_SIZES
    seeds: int = 6
    replay_consumers: int = 20
    replay_requests_per_consumer: int = 3
    replay_fractions: tuple[float, ...] = (0.05, 0.2, 0.5)  # a subset of sim_fractions
    replay_window: int = 64  # a fixed window under the WAN's BDP: no loss, no double count
    sim_fractions: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)
    consumers_sweep: tuple[int, ...] = (10, 15, 20, 25, 30)
    files_sweep: tuple[int, ...] = (10, 20, 30, 40)
    files: int = 40
    requests_per_consumer: int = 5
    ping_count: int = 30
    probe_seconds: float = 4.0
    federation_records: int = 100_000
    federation_batch_changes: int = 2000  # the daemon's default
    federation_timeout: float = 1800.0  # for the publish, and again for the convergence
    log: Callable[[str], None] = field(default=lambda text: None)

    @classmethod
    def quick(cls, **kwargs: Any) -> Options:
        return cls(
            repeats=1,
            point_seconds=0.5,
            caching_mb=16,
            fairness_mb=8,
            windows=(1, 16, 128),
            segment_sizes=(1024, 8000),
            seeds=2,
            replay_consumers=4,
            replay_requests_per_consumer=2,
            replay_fractions=(0.1, 0.5),
            sim_fractions=(0.1, 0.5, 1.0),
            consumers_sweep=(10, 20),
            files_sweep=(10, 20),
            files=20,
            requests_per_consumer=2,
            # as many as a full run: the median of 10 moves by milliseconds when a loaded
            # machine delays a few replies (the test asks for the RTT within 20%)
            ping_count=30,
            probe_seconds=2.0,
            federation_records=5000,
            federation_timeout=600.0,
            **kwargs,
        )


def machine_load() -> dict[str, Any]:
    one, five, fifteen = os.getloadavg()
    return {"loadavg": [round(one, 2), round(five, 2), round(fifteen, 2)], "cpus": os.cpu_count()}


def _drops_since(bed: Testbed, before: dict[str, int]) -> dict[str, int]:
    """UDP datagrams dropped for want of receive buffer since ``before``, per node."""
    return {node: count - before.get(node, 0) for node, count in bed.udp_drops().items()}


def _write_random(path: Path, size: int) -> None:
    """A file of random bytes (incompressible, as science data mostly is), written once."""
    if path.exists() and path.stat().st_size == size:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = min(left, 8 << 20)
            f.write(os.urandom(chunk))
            left -= chunk


def _server(bed: Testbed) -> str:
    servers = [n for n in bed.topo.role("server") if n.serve and n.http_port]
    if not servers:
        raise TestbedError("the experiments need a server node with `serve` and `http_port`")
    return servers[0].name


def _consumers(bed: Testbed, count: int = 4) -> list[str]:
    # consumer nodes; a topology without them (``small``) fetches from its other non-servers
    consumers = sorted(n.name for n in bed.topo.role("consumer")) or sorted(
        n.name for n in bed.topo.role("router")
    )
    if not consumers:
        raise TestbedError("the experiments need consumer (or router) nodes")
    return (consumers * count)[:count]


def _gateway(bed: Testbed, consumer: str, server: str) -> str:
    """The first router from ``consumer`` on (whose cache the consumers share): the consumer
    node itself when it is a router."""
    here = consumer
    if bed.topo.nodes[here].role == "router":
        return here
    for link in bed.topo.path(consumer, server):
        here = link.other(here)
        if bed.topo.nodes[here].role == "router":
            return here
    raise TestbedError(f"no router between {consumer} and {server}")


def _routers(bed: Testbed) -> list[str]:
    return [n.name for n in bed.topo.role("router")]


@contextmanager
def _caches(bed: Testbed, capacity: dict[str, int]) -> Iterator[None]:
    """Routers' content stores set (restarted empty) for an experiment, then put back."""
    before = {name: bed.topo.nodes[name].cs_capacity for name in capacity}
    for name, packets in capacity.items():
        bed.restart_forwarder(name, cs_capacity=packets)
    try:
        yield
    finally:
        for name, packets in before.items():
            bed.restart_forwarder(name, cs_capacity=packets)


def _no_caches(bed: Testbed) -> Any:
    return _caches(bed, {name: 0 for name in _routers(bed)})


# --- link --------------------------------------------------------------------------------------


def link(bed: Testbed, opts: Options) -> dict[str, Any]:
    """The WAN link: rate asked vs measured (both ways), RTT asked vs measured (NDN ping)."""
    wan = bed.topo.wan()
    started = machine_load()
    prefix_b = f"/ndnsci/ping/{wan.b}"
    pinger = bed.start_pingserver(wan.b, prefix_b)
    bed.add_routes(prefix_b, wan.b)
    try:
        bed.ndn_ping(wan.a, prefix_b, count=3, interval_ms=20)  # faces warm, PIT/FIB paths hot
        rtts = bed.ndn_ping(wan.a, prefix_b, count=opts.ping_count, interval_ms=50)
    finally:
        bed.stop(pinger)
    opts.log(f"link: RTT median {statistics.median(rtts):.2f} ms (asked {wan.rtt_ms:g})")
    rate_ba = measure_rate(bed, sender=wan.b, receiver=wan.a, seconds=opts.probe_seconds)
    rate_ab = measure_rate(bed, sender=wan.a, receiver=wan.b, seconds=opts.probe_seconds)
    opts.log(f"link: rate {rate_ba['mbps']:.1f} Mbit/s (asked {wan.rate_mbps})")
    end_to_end = _end_to_end_rtt(bed, opts)
    rtt_measured = statistics.median(rtts)
    return {
        "rate_mbps_set": wan.rate_mbps,
        "rate_mbps_measured": rate_ba["mbps"],
        "rtt_ms_set": wan.rtt_ms,
        "rtt_ms_measured": round(rtt_measured, 3),
        "rate_error": _error(rate_ba["mbps"], wan.rate_mbps),
        "rtt_error": _error(rtt_measured, wan.rtt_ms),
        "link": {"name": wan.name, "a": wan.a, "b": wan.b, "delay_ms_one_way": wan.delay_ms},
        "rate_b_to_a": rate_ba,
        "rate_a_to_b": rate_ab,
        "rtt_ms_probes": rtts,
        "rtt_ms_stats": _stats(rtts),
        "end_to_end": end_to_end,
        "delay_element": bed.delay_element_stats(wan) if wan.delay_ms > 0 else None,
        "method": (
            "rate: UDP datagrams of 8000 bytes sent as fast as the link's tbf takes them, "
            "counted at the far end after a 0.5 s warm-up, Ethernet+IP+UDP headers included "
            "(what tbf counts); RTT: `ndnd ping` from one gateway's forwarder to an `ndnd "
            "pingserver` on the other (two forwarders and the ping server included)"
        ),
        "machine": started,
    }


def measure_rate(bed: Testbed, sender: str, receiver: str, seconds: float) -> dict[str, Any]:
    import json

    port = 5299
    recv = bed.spawn(
        bed.ns(receiver),
        f"probe-recv-{receiver}",
        [bed.python, "-m", "ndnsci.testbed.probe", "recv", str(port), str(seconds)],
        env=bed.env(receiver),
    )
    try:
        bed._wait_log(recv, "listening", "listen")
        host = bed.address(receiver, toward=sender)
        bed.run(
            sender,
            [bed.python, "-m", "ndnsci.testbed.probe", "send", host, str(port), str(seconds)],
            timeout=seconds + 30,
        )
        recv.proc.wait(timeout=seconds + 15)
        lines = recv.log.read_text().strip().splitlines()
        result: dict[str, Any] = json.loads(lines[-1])
    finally:
        bed.stop(recv)
    return result


def _end_to_end_rtt(bed: Testbed, opts: Options) -> dict[str, Any]:
    server = _server(bed)
    consumer = _consumers(bed, 1)[0]
    prefix = f"/ndnsci/ping/{server}"
    pinger = bed.start_pingserver(server, prefix)
    bed.add_routes(prefix, server)
    try:
        bed.ndn_ping(consumer, prefix, count=3, interval_ms=20)
        rtts = bed.ndn_ping(consumer, prefix, count=opts.ping_count, interval_ms=50)
    finally:
        bed.stop(pinger)
    asked = bed.topo.rtt_ms(consumer, server)
    return {
        "from": consumer,
        "to": server,
        "hops": len(bed.topo.path(consumer, server)),
        "rtt_ms_set": asked,
        "rtt_ms_measured": round(statistics.median(rtts), 3),
        "rtt_ms_stats": _stats(rtts),
    }


def _error(measured: float, asked: float | None) -> float | None:
    return round((measured - asked) / asked, 4) if asked else None


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(values),
        "min": round(ordered[0], 3),
        "median": round(statistics.median(ordered), 3),
        "mean": round(statistics.fmean(ordered), 3),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "max": round(ordered[-1], 3),
    }


# --- sweep -------------------------------------------------------------------------------------


def sweep(bed: Testbed, opts: Options) -> dict[str, Any]:
    """Fixed windows x segment sizes (and AIMD / CUBIC per segment size), caches off."""
    from ndnsci.ndn import name as ndnname
    from ndnsci.ndn.producer import NAME_RESERVE, max_segment_size

    started = machine_load()
    server = _server(bed)
    consumer = _consumers(bed, 1)[0]
    root = bed.data_dir(server) / "sweep"
    for exponent in SWEEP_FILE_EXPONENTS:
        _write_random(root / f"f{exponent}", 1 << exponent)
    largest = max_segment_size(
        len(b"".join(ndnname.from_uri("/ndnsci/sweep/s0000"))) + NAME_RESERVE
    )
    sizes = sorted({*opts.segment_sizes, largest})
    rtt_ms = bed.topo.rtt_ms(consumer, server)
    rate = bed.topo.bottleneck_mbps(consumer, server) or 1000.0
    points: list[dict[str, Any]] = []
    drops = bed.udp_drops()
    with _no_caches(bed):
        producers = {s: bed.start_producer(server, root, f"/ndnsci/sweep/s{s}", s) for s in sizes}
        try:
            for repeat in range(opts.repeats):
                for size in sizes:
                    points.extend(
                        _sweep_size(bed, consumer, size, repeat, opts, rtt_ms=rtt_ms, rate=rate)
                    )
        finally:
            for proc in producers.values():
                bed.stop(proc)
    return {
        "points": points,
        "segment_sizes": sizes,
        "windows": list(opts.windows),
        "repeats": opts.repeats,
        "rtt_ms_set": rtt_ms,
        "bottleneck_mbps_set": rate,
        "udp_receive_buffer_drops": _drops_since(bed, drops),
        "ideal_mbps": {
            str(size): {
                str(w): round(min(rate, w * size * 8 / (rtt_ms / 1000) / 1e6), 3)
                for w in opts.windows
            }
            for size in sizes
        },
        "method": (
            "one consumer fetches a file of random bytes from the server over the WAN, "
            "`ndnsci fetch --cc fixed --window W` (AIMD/CUBIC: initial window 64, at most "
            "1024), producer `ndnsci serve --segment-size S`; router caches off; each file "
            "(64 KiB to 64 MiB) is picked so a point lasts about point_seconds (AIMD/CUBIC: "
            "twice that) at the rate the previous window reached; repeats interleaved"
        ),
        "machine": started,
        "machine_end": machine_load(),
    }


def _sweep_size(
    bed: Testbed,
    consumer: str,
    size: int,
    repeat: int,
    opts: Options,
    *,
    rtt_ms: float,
    rate: float,
) -> list[dict[str, Any]]:
    """The fixed windows, then AIMD and CUBIC, for one segment size. Each file is sized from
    the rate the previous window reached (a busy machine falls short of the window/RTT
    bound), so a point lasts about ``point_seconds`` whatever the machine does."""
    points: list[dict[str, Any]] = []
    for window in opts.windows:
        expected = min(0.9 * rate, window * size * 8 / (rtt_ms / 1000) / 1e6)
        if points:
            last = points[-1]
            expected = min(expected, last["mbps"] * window / last["window"])
        name = _sweep_file(expected, opts.point_seconds)
        points.append(
            _sweep_point(bed, consumer, name, _point(window, size, "fixed", repeat), opts)
        )
    reached = max(p["mbps"] for p in points)
    for cc in ("aimd", "cubic"):
        # twice as long: the window has to grow first
        name = _sweep_file(min(reached, 0.9 * rate), 2 * opts.point_seconds)
        points.append(_sweep_point(bed, consumer, name, _point(64, size, cc, repeat), opts))
    return points


def _sweep_file(expected_mbps: float, seconds: float) -> str:
    want = expected_mbps * 1e6 / 8 * seconds
    exponent = max(e for e in SWEEP_FILE_EXPONENTS if (1 << e) <= max(want, 1 << 16))
    return f"f{exponent}"


def _point(window: int, segment_bytes: int, cc: str, repeat: int) -> dict[str, Any]:
    return {"window": window, "segment_bytes": segment_bytes, "cc": cc, "repeat": repeat}


def _sweep_point(
    bed: Testbed, consumer: str, file: str, point: dict[str, Any], opts: Options
) -> dict[str, Any]:
    size, cc, window = point["segment_bytes"], point["cc"], point["window"]
    result = bed.fetch(consumer, f"/ndnsci/sweep/s{size}/{file}", cc=cc, window=window)
    point = {
        **point,
        "mbps": round(result["mbit_s"], 3),
        "bytes": result["size"],
        "seconds": round(result["seconds"], 4),
        "retransmissions": result["retransmissions"],
        "timeouts": result["timeouts"],
        "congestion_marks": result["congestion_marks"],
    }
    opts.log(f"sweep: {cc} w={window} s={size}: {point['mbps']:.1f} Mbit/s")
    return point


# --- caching -----------------------------------------------------------------------------------


def caching(bed: Testbed, opts: Options) -> dict[str, Any]:
    """The same file, four consumers in turn: first from the producer, then from the cache."""
    started = machine_load()
    server = _server(bed)
    consumers = _consumers(bed, 4)
    gateway = _gateway(bed, consumers[0], server)
    size = opts.caching_mb << 20
    _write_random(bed.data_dir(server) / "caching.bin", size)
    node = bed.topo.nodes[server]
    url = f"http://{bed.address(server)}:{node.http_port}/caching.bin"
    http = []
    for consumer in consumers:
        stats = bed.curl(consumer, url)
        if int(stats["size_download"]) != size:
            raise TestbedError(f"curl got {stats['size_download']} bytes of {size}")
        http.append(
            {
                "consumer": consumer,
                "mbps": round(stats["mbit_s"], 3),
                "seconds": stats["time_total"],
            }
        )
        opts.log(f"caching: HTTP to {consumer}: {stats['mbit_s']:.1f} Mbit/s")
    producer = _producer_of(bed, server)
    segment_packets = -(-size // node.segment_size) + 16
    needed = {r: max(segment_packets, bed.topo.nodes[r].cs_capacity) for r in _routers(bed)}
    ndn = []
    drops = bed.udp_drops()
    with _caches(bed, needed):
        for i, consumer in enumerate(consumers):
            before = bed.producer_counters(producer)
            cs_before = bed.cs_info(gateway)
            result = bed.fetch(consumer, f"{node.serve}/caching.bin")
            after = bed.producer_counters(producer)
            cs_after = bed.cs_info(gateway)
            ndn.append(
                {
                    "consumer": consumer,
                    "from": "producer" if i == 0 else "cache",
                    "mbps": round(result["mbit_s"], 3),
                    "seconds": round(result["seconds"], 4),
                    "retransmissions": result["retransmissions"],
                    "checksum": result["checksum"],
                    "producer_interests": after["interests"] - before["interests"],
                    "producer_segment_interests": after["segments"] - before["segments"],
                    "producer_metadata_interests": after["metadata"] - before["metadata"],
                    "gateway_cs_hits": cs_after.get("nHits", 0) - cs_before.get("nHits", 0),
                    "gateway_cs_misses": cs_after.get("nMisses", 0) - cs_before.get("nMisses", 0),
                }
            )
            opts.log(f"caching: NDN to {consumer}: {result['mbit_s']:.1f} Mbit/s")
    http_mbps = statistics.fmean(h["mbps"] for h in http)
    cached = [n for n in ndn if n["from"] == "cache"]
    cached_mbps = statistics.fmean(n["mbps"] for n in cached)
    return {
        "http_mbps": round(http_mbps, 3),
        "ndn_first_mbps": ndn[0]["mbps"],
        "ndn_cached_mbps": round(cached_mbps, 3),
        "gain": round(cached_mbps / http_mbps, 3),
        # the file's content: segment Interests that reached the producer while the cache served
        "producer_interests_during_cached": sum(n["producer_segment_interests"] for n in cached),
        # RDR discovery (MustBeFresh, one per fetch by design) is answered by the producer
        "producer_metadata_interests_during_cached": sum(
            n["producer_metadata_interests"] for n in cached
        ),
        "gain_vs_first": round(cached_mbps / ndn[0]["mbps"], 3),
        "file_bytes": size,
        "gateway": gateway,
        "udp_receive_buffer_drops": _drops_since(bed, drops),
        "http": http,
        "ndn": ndn,
        # None: each consumer runs its own NDNd; else the router its applications connect to
        "consumers_attach": bed.topo.nodes[consumers[0]].attach,
        "path": {
            "rtt_ms_set": bed.topo.rtt_ms(consumers[0], server),
            "bottleneck_mbps_set": bed.topo.bottleneck_mbps(consumers[0], server),
            "lan_mbps_set": bed.topo.bottleneck_mbps(consumers[0], gateway),
        },
        "method": (
            "curl (python -m http.server on the server) then `ndnsci fetch` (AIMD) of the same "
            "file of random bytes by c1..c4 in turn over the same path; gain = mean cached NDN "
            "throughput / mean HTTP throughput"
        ),
        "machine": started,
        "machine_end": machine_load(),
    }


def _producer_of(bed: Testbed, server: str) -> Any:
    for name, proc in bed.procs.items():
        if name.startswith(f"producer-{server}-") and "sweep" not in name:
            return proc
    raise TestbedError(f"no producer running on {server}")


# --- cachehit ----------------------------------------------------------------------------------


def catalog_sizes(bed: Testbed | None = None) -> tuple[list[int], str]:
    """File sizes of a real catalog: the server's sample archive, else a freshly made one."""
    roots = []
    if bed is not None:
        roots = [bed.data_dir(n.name) for n in bed.topo.role("server") if n.data == "sample"]
    if roots:
        return _sizes(roots[0]), "ndnsci sample (the testbed server's)"
    import tempfile

    from ndnsci.sdk.sample import make_sample

    with tempfile.TemporaryDirectory(prefix="ndnsci-sizes-") as tmp:
        make_sample(tmp)
        return _sizes(Path(tmp)), "ndnsci sample"


def _sizes(root: Path) -> list[int]:
    return sorted(p.stat().st_size for p in root.rglob("*") if p.is_file())


def simulate_study(sizes: list[int], opts: Options) -> dict[str, Any]:
    """Hit ratio by policy against cache size, consumers and files (the simulation alone)."""
    catalog = cachesim.make_catalog(sizes, opts.files, seed=0)
    total = cachesim.Workload(catalog, [], 8000).catalog_segments
    capacities = {f: max(1, round(f * total)) for f in opts.sim_fractions}
    fraction = 0.2  # of the full catalog: the cache of the consumers and files sweeps

    def ratio(files: list[int], policy: str, capacity: int, consumers: int) -> float:
        return round(
            cachesim.mean_hit_ratio(
                files,
                policy,
                capacity=capacity,
                consumers=consumers,
                requests_per_consumer=opts.requests_per_consumer,
                seeds=range(opts.seeds),
            ),
            4,
        )

    fixed = round(fraction * total)  # packets: the cache of the consumers and files sweeps

    def catalog_of(n: int) -> list[int]:
        # the first n files of the catalog (make_catalog draws in order): nested catalogs
        return cachesim.make_catalog(sizes, n, seed=0)

    catalogs = {n: catalog_of(n) for n in opts.files_sweep}
    simulated: dict[str, dict[str, float]] = {}
    by_consumers: dict[str, dict[str, float]] = {}
    by_files: dict[str, dict[str, float]] = {}
    for policy in cachesim.POLICIES:
        simulated[policy] = {str(c): ratio(catalog, policy, c, 20) for c in capacities.values()}
        by_consumers[policy] = {
            str(k): ratio(catalog, policy, fixed, k) for k in opts.consumers_sweep
        }
        by_files[policy] = {
            str(n): ratio(files, policy, fixed, 20) for n, files in catalogs.items()
        }
        opts.log(f"cachehit: simulated {policy}")
    return {
        "simulated": simulated,
        "consumers": by_consumers,
        "files": by_files,
        "cache_sizes": {
            str(c): {"fraction_of_catalog": f, "bytes": c * 8000} for f, c in capacities.items()
        },
        "catalog": {
            "files": opts.files,
            "bytes": sum(catalog),
            "segments": total,
            "sizes": catalog,
        },
        "parameters": {
            "alpha": cachesim.ALPHA,
            "segment_bytes": 8000,
            "seeds": opts.seeds,
            "consumers": 20,
            "requests_per_consumer": opts.requests_per_consumer,
            "consumers_and_files_sweeps_cache_packets": fixed,
            "consumers_and_files_sweeps_cache_fraction_of_full_catalog": fraction,
        },
    }


def cachehit(bed: Testbed | None, opts: Options) -> dict[str, Any]:
    """The simulation, and (with a testbed) its requests replayed on NDNd's LRU content store."""
    started = machine_load()
    sizes, source = catalog_sizes(bed)
    result = simulate_study(sizes, opts)
    result["size_source"] = source
    result["size_distribution"] = sizes
    result["replayed"] = {}
    if bed is not None:
        result.update(replay(bed, sizes, opts))
    result["machine"] = started
    return result


def replay(bed: Testbed, sizes: list[int], opts: Options) -> dict[str, Any]:
    """One Zipf request sequence, simulated (LRU) and fetched through the gateway's real cache
    of the same capacity (1 forwarding thread: one LRU, as simulated)."""
    server = _server(bed)
    consumer = _consumers(bed, 1)[0]
    gateway = _gateway(bed, consumer, server)
    catalog = cachesim.make_catalog(sizes, opts.files, seed=0)
    workload = cachesim.make_workload(
        catalog,
        consumers=opts.replay_consumers,
        requests_per_consumer=opts.replay_requests_per_consumer,
        seed=1,
    )
    root = bed.data_dir(server) / "cachehit"
    for i, size in enumerate(catalog):
        _write_random(root / f"file{i:02d}", size)
    prefix = "/ndnsci/cachehit"
    producer = bed.start_producer(server, root, prefix)
    names = [f"{prefix}/file{r.file:02d}" for r in workload.requests]
    total = workload.catalog_segments
    replayed: dict[str, float] = {}
    predicted: dict[str, float] = {}
    runs = []
    others = {r: 0 for r in _routers(bed) if r != gateway}
    original = bed.topo.nodes[gateway]
    drops = bed.udp_drops()
    try:
        with _caches(bed, others):
            for fraction in opts.replay_fractions:
                capacity = max(1, round(fraction * total))
                bed.restart_forwarder(gateway, cs_capacity=capacity, threads=1)
                before = bed.producer_counters(producer)
                cs_before = bed.cs_info(gateway)
                fetched = _fetch_many(bed, consumer, names, opts.replay_window)
                after = bed.producer_counters(producer)
                cs_after = bed.cs_info(gateway)
                misses = after["segments"] - before["segments"]
                ratio = 1 - misses / workload.requested_segments
                sim = cachesim.simulate(workload, "lru", capacity)
                replayed[str(capacity)] = round(ratio, 4)
                predicted[str(capacity)] = round(sim.hit_ratio, 4)
                runs.append(
                    {
                        "capacity": capacity,
                        "fraction_of_catalog": fraction,
                        "requests": len(names),
                        "segments_requested": workload.requested_segments,
                        "producer_segments": misses,
                        "hit_ratio": round(ratio, 4),
                        "simulated_lru_same_requests": round(sim.hit_ratio, 4),
                        "gateway_cs_hits": cs_after.get("nHits", 0) - cs_before.get("nHits", 0),
                        "gateway_cs_misses": cs_after.get("nMisses", 0)
                        - cs_before.get("nMisses", 0),
                        "retransmissions": sum(f["retransmissions"] for f in fetched),
                    }
                )
                opts.log(
                    f"cachehit: replay at {capacity} packets: {ratio:.3f} "
                    f"(simulated {sim.hit_ratio:.3f})"
                )
    finally:
        bed.restart_forwarder(gateway, cs_capacity=original.cs_capacity, threads=original.threads)
        bed.stop(producer)
    return {
        "replayed": {"lru": replayed},
        "replay_simulated": {"lru": predicted},
        "replay_runs": runs,
        "udp_receive_buffer_drops": _drops_since(bed, drops),
        "replay_parameters": {
            "gateway": gateway,
            "consumer": consumer,
            "consumers": opts.replay_consumers,
            "requests_per_consumer": opts.replay_requests_per_consumer,
            "request_seed": 1,
            "fetch": f"ndnsci fetch --parallel 1 --cc fixed --window {opts.replay_window}",
            "catalog_segments": total,
            "policies_offered_by_ndnd": ["lru"],
        },
    }


def _fetch_many(bed: Testbed, consumer: str, names: list[str], window: int) -> list[dict[str, Any]]:
    """The requests in order, by ``ndnsci fetch`` processes (``--parallel 1``): a new process
    wherever a name comes again, since one fetch takes each file once."""
    import json

    out = bed.node_dir(consumer) / "replay"
    out.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    for run in _runs_without_repeats(names):
        args = ["fetch", *run, "-o", str(out), "--parallel", "1", "--json", "-q"]
        args += ["--cc", "fixed", "--window", str(window), "--max-window", str(window)]
        stdout = bed.ndnsci_cli(consumer, args, timeout=1800)
        results += [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    failed = [r for r in results if r.get("status") != "done"]
    if failed or len(results) != len(names):
        raise TestbedError(
            f"replay: {len(failed)} of {len(names)} fetches failed, {len(results)} answered: "
            f"{failed[:3]}"
        )
    return results


# --- fairness ----------------------------------------------------------------------------------


def _runs_without_repeats(names: list[str]) -> list[list[str]]:
    """``names`` cut, in order, into runs where no name comes twice."""
    runs: list[list[str]] = [[]]
    for name in names:
        if name in runs[-1]:
            runs.append([])
        runs[-1].append(name)
    return [run for run in runs if run]


def fairness(bed: Testbed, opts: Options) -> dict[str, Any]:
    """Four consumers at once, each its own file, AIMD then CUBIC; caches off."""
    started = machine_load()
    server = _server(bed)
    consumers = _consumers(bed, 4)
    wan = bed.topo.wan()
    node = bed.topo.nodes[server]
    runs = []
    drops = bed.udp_drops()
    with _no_caches(bed):
        for cc in ("aimd", "cubic"):
            for i in range(len(consumers)):
                _write_random(bed.data_dir(server) / f"fair-{cc}-{i}", opts.fairness_mb << 20)
            files = [f"{node.serve}/fair-{cc}-{i}" for i in range(len(consumers))]
            runs.append(_concurrent(bed, dict(zip(consumers, files, strict=True)), cc, opts))
    return {
        "runs": {run["cc"]: run for run in runs},
        "jain": {run["cc"]: run["jain"] for run in runs},
        "utilisation": {run["cc"]: run["utilisation"] for run in runs},
        "wan_mbps_set": wan.rate_mbps,
        "file_bytes": opts.fairness_mb << 20,
        "udp_receive_buffer_drops": _drops_since(bed, drops),
        "method": (
            "c1..c4 start `ndnsci fetch --cc CC` of different files at once; each consumer's "
            "LAN interface and the WAN interface are sampled every 0.2 s; Jain's index and "
            "utilisation over the time all four were receiving"
        ),
        "machine": started,
        "machine_end": machine_load(),
    }


def _concurrent(bed: Testbed, names: dict[str, str], cc: str, opts: Options) -> dict[str, Any]:
    """Each consumer fetches its name, all at once; rates while all four are receiving."""
    consumers = list(names)
    wan = bed.topo.wan()
    gateway = _gateway(bed, consumers[0], _server(bed))
    if len(set(consumers)) < len(consumers) or gateway in consumers:
        raise TestbedError(
            "fairness needs separate consumer nodes behind a gateway router (each consumer's "
            "own link is where its rate is measured), as in the default topology"
        )
    samples: list[tuple[float, list[int], int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            now = time.monotonic()
            try:
                rx = [bed.interface_bytes(c, gateway)[0] for c in consumers]
                wan_rx = bed.interface_bytes(wan.a, wan.b)[0]
            except TestbedError:
                return  # the testbed is coming down
            samples.append((now, rx, wan_rx))
            stop.wait(0.2)

    results: dict[str, Any] = {}
    spans: dict[str, tuple[float, float]] = {}

    def one(consumer: str) -> None:
        t0 = time.monotonic()
        try:
            results[consumer] = bed.fetch(consumer, names[consumer], cc=cc)
        except TestbedError as exc:
            results[consumer] = {"error": str(exc)}
        spans[consumer] = (t0, time.monotonic())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    workers = [threading.Thread(target=one, args=(c,)) for c in consumers]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    sampler.join()
    failed = {c: r["error"] for c, r in results.items() if r.get("error")}
    if failed:
        raise TestbedError(f"fairness: fetches failed: {failed}")
    window = _all_active(samples, len(consumers))
    per_consumer = _rates(samples, window, len(consumers))
    wan_mbps = _wan_rate(samples, window)
    opts.log(f"fairness: {cc}: {[round(r, 1) for r in per_consumer]} Mbit/s, WAN {wan_mbps:.1f}")
    return {
        "cc": cc,
        "consumers": consumers,
        "mbps_while_all_active": [round(r, 3) for r in per_consumer],
        "jain": round(jain(per_consumer), 4),
        "wan_mbps_while_all_active": round(wan_mbps, 3),
        "utilisation": round(wan_mbps / wan.rate_mbps, 4) if wan.rate_mbps else None,
        "window_seconds": [
            round(window[0] - samples[0][0], 3),
            round(window[1] - samples[0][0], 3),
        ],
        "fetch_mbps": {c: round(results[c]["mbit_s"], 3) for c in consumers},
        "fetch_seconds": {c: round(results[c]["seconds"], 3) for c in consumers},
        "retransmissions": {c: results[c]["retransmissions"] for c in consumers},
        "congestion_marks": {c: results[c]["congestion_marks"] for c in consumers},
        "series": [
            {"t": round(t - samples[0][0], 3), "rx": rx, "wan_rx": w} for t, rx, w in samples
        ],
    }


def jain(rates: list[float]) -> float:
    """Jain's fairness index: 1 when all equal, 1/n when one takes everything."""
    total = sum(rates)
    squares = sum(r * r for r in rates)
    return total * total / (len(rates) * squares) if squares else 0.0


def _all_active(samples: list[tuple[float, list[int], int]], n: int) -> tuple[float, float]:
    """From when every consumer has received a first MB to when the first one stops."""
    start = end = None
    for i in range(1, len(samples)):
        t, rx, _ = samples[i]
        base = samples[0][1]
        growing = [rx[k] - samples[i - 1][1][k] > 0 for k in range(n)]
        if start is None and all(rx[k] - base[k] > 1 << 20 for k in range(n)):
            start = t
        elif start is not None and not all(growing):
            end = samples[i - 1][0]
            break
    if start is None or end is None or end - start < 0.4:
        raise TestbedError("fairness: the four transfers never overlapped long enough")
    return start, end


def _at(samples: list[tuple[float, list[int], int]], t: float) -> int:
    for i, sample in enumerate(samples):
        if sample[0] >= t:
            return i
    return len(samples) - 1


def _rates(
    samples: list[tuple[float, list[int], int]], window: tuple[float, float], n: int
) -> list[float]:
    a, b = samples[_at(samples, window[0])], samples[_at(samples, window[1])]
    seconds = b[0] - a[0]
    return [(b[1][k] - a[1][k]) * 8 / seconds / 1e6 for k in range(n)]


def _wan_rate(samples: list[tuple[float, list[int], int]], window: tuple[float, float]) -> float:
    a, b = samples[_at(samples, window[0])], samples[_at(samples, window[1])]
    return (b[2] - a[2]) * 8 / (b[0] - a[0]) / 1e6


# --- federation --------------------------------------------------------------------------------

FEDERATION_GROUP = "/ndnsci/catalog/sync"  # the daemon's default sync group
MULTICAST = "/localhost/nfd/strategy/multicast"
CATALOG_PORT = 8100  # `ndnsci catalog serve` at the publishing site, for the HTTP mirror
SAMPLE_SECONDS = 0.25


class _Catalog:
    """One site's SQLite catalog on a testbed node, with a key of its own (its own
    NDNSCI_CONFIG_DIR); its commands run in the node's namespace, against the node's forwarder."""

    def __init__(self, bed: Testbed, node: str, name: str) -> None:
        import shutil

        self.bed, self.node, self.name, self.prefix = bed, node, name, f"/{name}"
        self.dir = bed.node_dir(node) / f"catalog-{name}"
        shutil.rmtree(self.dir, ignore_errors=True)  # a key of its own, made afresh
        self.dir.mkdir(parents=True)
        self.db = f"sqlite:///{self.dir / 'catalog.db'}"
        self.env = {
            "NDNSCI_CONFIG_DIR": str(self.dir / "config"),
            "NDNSCI_CACHE_DIR": str(self.dir / "cache"),
        }
        self.public_key = ""
        self._engine: Any = None
        self._factory: Any = None

    def cli(self, args: list[str], timeout: float = 600.0) -> str:
        return self.bed.ndnsci_cli(self.node, args, timeout=timeout, env=self.env)

    def init(self) -> None:
        """``ndnsci keys create``, ``ndnsci catalog site init NAME``."""
        import json

        self.cli(["keys", "create"])
        out = self.cli(["catalog", "site", "init", self.name, "--prefix", self.prefix,
                        "--db", self.db])  # fmt: skip
        self.public_key = json.loads(out.strip().splitlines()[-1])["public_key"]

    def trust(self, other: _Catalog) -> None:
        self.cli(["catalog", "trust", "add", other.name, other.public_key, "--prefix",
                  other.prefix, "--db", self.db])  # fmt: skip

    def spawn(self, part: str, args: list[str]) -> Any:
        argv = [self.bed.python, "-m", "ndnsci", *args]
        env = self.bed.env(self.node, **self.env)
        return self.bed.spawn(self.bed.ns(self.node), f"{part}-{self.name}", argv, env=env)

    def session(self) -> Any:
        from ndnsci_catalog.database import make_engine, make_sessionmaker

        if self._factory is None:
            self._engine = make_engine(self.db)
            self._factory = make_sessionmaker(self._engine)
        return self._factory()

    def count(self, origin: str) -> int:
        """Records of site ``origin`` this catalog holds."""
        from sqlalchemy import func, select

        from ndnsci_catalog.models import File

        with self.session() as session:
            query = select(func.count()).select_from(File).where(File.site == origin)
            return int(session.scalar(query) or 0)

    def sealed(self) -> tuple[int, int]:
        """(batches this site sealed, their bytes)."""
        from ndnsci_catalog import sites

        with self.session() as session:
            local = sites.local_site(session)
            return (local.applied if local else 0), sites.batch_bytes(session)

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = self._factory = None


def _federation_records(path: Path, n: int) -> None:
    """bench/catalog.py's records (GLADE CMIP5 rows, 10% CMS LFNs; seed 1, as
    bench/federation.py), as the JSON lines ``ndnsci publish --records`` reads."""
    import subprocess
    import sys

    from ndnsci.ndn.forwarder import repo_dir

    repo = repo_dir()
    if repo is None or not (repo / "bench" / "catalog.py").exists():
        raise TestbedError("federation: its records come from the source checkout's bench/")
    code = (
        "import json, random, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from catalog import records\n"
        "with open(sys.argv[3], 'w') as out:\n"
        "    for r in records(int(sys.argv[2]), random.Random(1)):\n"
        "        out.write(json.dumps(r) + '\\n')\n"
    )
    argv = [sys.executable, "-c", code, str(repo / "bench"), str(n), str(path)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
    if proc.returncode != 0:
        raise TestbedError(f"federation: the records could not be made:\n{proc.stderr[-2000:]}")


class _Traffic:
    """The catalog traffic over the WAN: bytes on the wire (the WAN interface's counters at
    the end nearer the publisher: Ethernet, IP and UDP or TCP headers included) and, for NDN,
    the bytes each gateway's forwarder received on its WAN face (NDN packets only)."""

    def __init__(self, bed: Testbed, publisher: str) -> None:
        wan = bed.topo.wan()
        near = len(bed.topo.path(publisher, wan.a)) <= len(bed.topo.path(publisher, wan.b))
        self.bed = bed
        # "pub" is the WAN's end on the publisher's side (possibly the publisher itself)
        self.pub, self.sub = (wan.a, wan.b) if near else (wan.b, wan.a)

    def wire(self) -> tuple[int, int]:
        """(bytes toward the subscriber, bytes toward the publisher) on the WAN so far."""
        received, sent = self.bed.interface_bytes(self.pub, self.sub)
        return sent, received

    def ndn(self) -> tuple[int, int]:
        """NDN bytes received on the WAN faces: (at the subscriber's end, at the publisher's)."""
        return self._face_in(self.sub, self.pub), self._face_in(self.pub, self.sub)

    def _face_in(self, node: str, peer: str) -> int:
        from ndnsci.ndn import control
        from ndnsci.ndn.transport import Face

        wanted = self.bed.faces[(node, peer)]
        with Face(self.bed.transport(node)) as face:
            table = control.faces(face)
        for entry in table:
            if entry.get("face_id") == wanted:
                return int(entry.get("in_bytes", 0))
        raise TestbedError(f"federation: {node} has no face {wanted} toward {peer}")


class _Watch:
    """Samples, every SAMPLE_SECONDS, of how many of ``origin``'s records ``catalog`` holds
    and of the WAN's bytes, from :meth:`start` until it holds ``n`` (or :meth:`stop`)."""

    def __init__(self, catalog: _Catalog, origin: str, n: int, traffic: _Traffic) -> None:
        self.catalog, self.origin, self.n, self.traffic = catalog, origin, n, traffic
        self.series: list[dict[str, Any]] = []
        self.done_at: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="watch", daemon=True)

    def start(self) -> _Watch:
        self._thread.start()
        return self

    def _run(self) -> None:
        from sqlalchemy.exc import SQLAlchemyError

        while not self._stop.is_set():
            now = time.monotonic()
            try:
                held = self.catalog.count(self.origin)
                to_sub, to_pub = self.traffic.wire()
            except (SQLAlchemyError, TestbedError):  # a busy database, a slow `ip`: next sample
                self._stop.wait(SAMPLE_SECONDS)
                continue
            self.series.append({"t": now, "records": held, "to_subscriber": to_sub,
                                "to_publisher": to_pub})  # fmt: skip
            if held >= self.n:
                self.done_at = now
                return
            self._stop.wait(SAMPLE_SECONDS)

    def wait(self, timeout: float, alive: Callable[[], None]) -> float:
        """When the catalog held all ``n`` (TestbedError after ``timeout`` seconds; ``alive``
        raises if a process the run needs has died)."""
        deadline = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < deadline:
            alive()
            self._thread.join(1.0)
        self.stop()
        if self.done_at is None:
            held = self.series[-1]["records"] if self.series else 0
            raise TestbedError(
                f"federation: {self.catalog.name} holds {held} of {self.origin}'s {self.n} "
                f"records after {timeout:.0f} s"
            )
        return self.done_at

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def relative(self, t0: float, wire: tuple[int, int]) -> list[dict[str, Any]]:
        """The samples with times from ``t0`` and bytes from ``wire`` (:meth:`_Traffic.wire`)."""
        return [
            {
                "t": round(s["t"] - t0, 3),
                "records": s["records"],
                "to_subscriber": s["to_subscriber"] - wire[0],
                "to_publisher": s["to_publisher"] - wire[1],
            }
            for s in self.series
        ]


def federation(bed: Testbed, opts: Options) -> dict[str, Any]:
    """Two catalog sites at either end of the WAN: N records published at one, the time until
    the other holds them all over NDN (``ndnsci catalog federate`` at both) and the catalog
    traffic on the WAN; then a third catalog at the subscriber's node mirrors the publisher
    over HTTP (``ndnsci catalog mirror``) across the same WAN, from zero."""
    started = machine_load()
    publisher = _server(bed)
    subscriber = _consumers(bed, 1)[0]
    # a catalog site's daemon registers its prefix with a forwarder of its own: a consumer
    # attached to its router has none, so the site's catalog runs on that router's node
    subscriber = bed.topo.nodes[subscriber].attach or subscriber
    wan = bed.topo.wan()
    if wan not in bed.topo.path(subscriber, publisher):
        raise TestbedError(f"federation: the path from {subscriber} to {publisher} skips the WAN")
    n = opts.federation_records
    traffic = _Traffic(bed, publisher)
    pub = _Catalog(bed, publisher, publisher)
    sub = _Catalog(bed, subscriber, subscriber)
    mirror = _Catalog(bed, subscriber, "mirror")
    catalogs = (pub, sub, mirror)
    daemons: list[Any] = []
    try:
        for catalog in catalogs:
            catalog.init()
        pub.trust(sub)
        sub.trust(pub)
        mirror.trust(pub)
        # the testbed's routers route each site's prefix to it and the sync group both ways,
        # multicast on the routers between (each daemon sets it on its own forwarder)
        bed.add_routes(pub.prefix, publisher)
        bed.add_routes(sub.prefix, subscriber)
        bed.add_routes(FEDERATION_GROUP, publisher)
        bed.add_routes(FEDERATION_GROUP, subscriber)
        on_path = {end for link in bed.topo.path(subscriber, publisher) for end in (link.a, link.b)}
        for node in sorted(on_path - {publisher, subscriber}):
            bed.set_strategy(node, FEDERATION_GROUP, MULTICAST)
        for catalog in (pub, sub):
            args = ["catalog", "federate", "--db", catalog.db,
                    "--batch-changes", str(opts.federation_batch_changes)]  # fmt: skip
            daemons.append(catalog.spawn("federate", args))
        for daemon in daemons:
            bed._wait_log(daemon, " in group ", "join its sync group")
        records = bed.node_dir(publisher) / "federation-records.jsonl"
        _federation_records(records, n)

        # --- over NDN ---
        cpu_before = [_cpu_seconds(d.proc.pid) for d in daemons]
        ndn_before, wire_before = traffic.ndn(), traffic.wire()
        drops = bed.udp_drops()
        watch = _Watch(sub, pub.name, n, traffic)
        start = time.monotonic()
        watch.start()
        try:
            pub.cli(["publish", "--records", str(records), "--db", pub.db],
                    timeout=opts.federation_timeout)  # fmt: skip
            published = time.monotonic()
            opts.log(f"federation: {n} records published at {publisher} in "
                     f"{published - start:.1f} s")  # fmt: skip
            converged = watch.wait(opts.federation_timeout, bed.check_alive)
        finally:
            watch.stop()
        ndn_after = traffic.ndn()
        cpu = [_cpu_delta(d.proc.pid, b) for d, b in zip(daemons, cpu_before, strict=True)]
        ndn_series = watch.relative(start, wire_before)
        to_sub = ndn_series[-1]["to_subscriber"]
        to_pub = ndn_series[-1]["to_publisher"]
        ndn_to_sub, ndn_to_pub = (a - b for a, b in zip(ndn_after, ndn_before, strict=True))
        batches, batch_bytes = pub.sealed()
        opts.log(f"federation: {subscriber} holds all {n} {converged - published:.1f} s after "
                 f"the publish, {to_sub + to_pub:,} bytes on the WAN")  # fmt: skip
        for daemon in daemons:  # the HTTP figure alone on the WAN
            bed.stop(daemon)
        daemons.clear()

        # --- over HTTP ---
        serve = ["catalog", "serve", "--db", pub.db, "--host", "0.0.0.0",
                 "--port", str(CATALOG_PORT), "--no-migrate", "--no-gateway"]  # fmt: skip
        server = pub.spawn("catalog-serve", serve)
        try:
            url = f"http://{bed.address(publisher, toward=subscriber)}:{CATALOG_PORT}"
            _wait_http(bed, subscriber, f"{url}/api/v1/health", server)
            wire_before = traffic.wire()
            watch = _Watch(mirror, pub.name, n, traffic)
            http_start = time.monotonic()
            watch.start()
            try:
                mirror.cli(["catalog", "mirror", "--from", url, "--db", mirror.db],
                           timeout=opts.federation_timeout)  # fmt: skip
                http_end = time.monotonic()
                wire_after = traffic.wire()
                watch.wait(30, bed.check_alive)
            finally:
                watch.stop()
        finally:
            bed.stop(server)
        http_series = watch.relative(http_start, wire_before)
        http_to_sub = wire_after[0] - wire_before[0]
        http_to_pub = wire_after[1] - wire_before[1]
        mirrored = mirror.count(pub.name)
        held = sub.count(pub.name)
    finally:
        for daemon in daemons:
            bed.stop(daemon)
        for catalog in catalogs:
            catalog.close()
    http = http_end - http_start
    wan_bytes = to_sub + to_pub
    opts.log(f"federation: HTTP mirror {http:.1f} s, {http_to_sub + http_to_pub:,} bytes")
    return {
        "records": n,
        "subscriber_records": held,
        "mirror_records": mirrored,
        "publish_seconds": round(published - start, 3),
        "convergence_seconds_after_publish": round(converged - published, 3),
        "convergence_seconds_from_publish_start": round(converged - start, 3),
        "wan_bytes": wan_bytes,
        "wan_bytes_to_subscriber": to_sub,
        "wan_bytes_to_publisher": to_pub,
        "wan_bytes_per_record": round(wan_bytes / n, 2),
        "ndn_bytes_on_wan_faces": ndn_to_sub + ndn_to_pub,
        "ndn_bytes_to_subscriber": ndn_to_sub,
        "ndn_bytes_to_publisher": ndn_to_pub,
        "ndn_bytes_per_record": round((ndn_to_sub + ndn_to_pub) / n, 2),
        "batches": batches,
        "batch_changes": opts.federation_batch_changes,
        "batch_bytes": batch_bytes,
        "batch_bytes_per_record": round(batch_bytes / n, 2),
        "wan_bytes_over_batch_bytes": round(wan_bytes / batch_bytes, 3) if batch_bytes else None,
        "records_file_bytes": records.stat().st_size,
        "daemon_cpu_seconds": {"publisher": _round(cpu[0]), "subscriber": _round(cpu[1])},
        "http_mirror_seconds": round(http, 3),
        "http_wan_bytes": http_to_sub + http_to_pub,
        "http_wan_bytes_per_record": round((http_to_sub + http_to_pub) / n, 2),
        "ratio_ndn_after_publish_to_http": round((converged - published) / http, 3),
        "udp_receive_buffer_drops": _drops_since(bed, drops),
        "sites": {
            "publisher": {"node": publisher, "site": pub.name, "prefix": pub.prefix},
            "subscriber": {"node": subscriber, "site": sub.name, "prefix": sub.prefix},
            "mirror": {"node": subscriber, "site": mirror.name, "from": url},
        },
        "path": {
            "hops": len(bed.topo.path(subscriber, publisher)),
            "rtt_ms_set": bed.topo.rtt_ms(subscriber, publisher),
            "bottleneck_mbps_set": bed.topo.bottleneck_mbps(subscriber, publisher),
            "wan": {
                "name": wan.name,
                "rate_mbps": wan.rate_mbps,
                "rtt_ms": wan.rtt_ms,
                "counted_at": traffic.pub,
            },
        },
        "series": {"ndn": ndn_series, "http": http_series},
        "method": (
            "two catalog sites (SQLite, a key each, `ndnsci catalog site init`, each trusting "
            "the other) on the server and a consumer node, `ndnsci catalog federate` at both "
            "against their node's forwarder; the testbed routes each site's prefix and the "
            "sync group (multicast on the routers between); bench/catalog.py's records "
            "(seed 1) published at the server with `ndnsci publish --records`; the clock "
            "stops at the first sample (every 0.25 s) where the subscriber's catalog holds "
            "them all. WAN bytes: the WAN interface's counters (wire bytes, all headers) from "
            "the publish start to that sample; NDN bytes: what the two gateways' forwarders "
            "received on their WAN faces. Then the daemons stop, `ndnsci catalog serve` runs "
            "at the server and a third catalog at the consumer node runs `ndnsci catalog "
            "mirror --from URL` from zero over the same WAN (HTTP/1.1 over TCP), timed as a "
            "process"
        ),
        "machine": started,
        "machine_end": machine_load(),
    }


def _round(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def _cpu_delta(pid: int, before: float | None) -> float | None:
    now = _cpu_seconds(pid)
    return now - before if now is not None and before is not None else None


def _cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` used so far; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_http(bed: Testbed, node: str, url: str, server: Any, timeout: float = 120) -> None:
    """Until ``url`` answers from ``node`` (curl in its namespace)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise TestbedError(f"{server.name} exited:\n{server.tail()}")
        probe = bed.run(node, ["curl", "--silent", "--fail", "--max-time", "5", url],
                        timeout=30, check=False)  # fmt: skip
        if probe.returncode == 0:
            return
        time.sleep(0.5)
    raise TestbedError(f"{url} did not answer from {node} within {timeout:.0f} s:\n{server.tail()}")


EXPERIMENTS: dict[str, Callable[[Testbed, Options], dict[str, Any]]] = {
    "link": link,
    "sweep": sweep,
    "caching": caching,
    "cachehit": cachehit,
    "fairness": fairness,
    "federation": federation,
}
