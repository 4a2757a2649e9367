"""One PNG per experiment, drawn from its JSON result (the notebook draws the same figures).

Every function takes the result dict an experiment returned (or its JSON, loaded) and a
matplotlib Figure to draw on, so notebooks/04 reuses them; :func:`save` writes a PNG.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from ndnsci.errors import missing

POLICY_STYLE = {"lru": "o-", "lfu": "s-", "fifo": "^-", "random": "d-"}


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise missing("matplotlib", "testbed", "drawing the testbed's plots") from exc
    return plt


def save(name: str, result: dict[str, Any], path: Path) -> Path:
    """Draw experiment ``name``'s figure into ``path`` (PNG)."""
    plt = _pyplot()
    fig = plt.figure(figsize=(11, 4.2), dpi=110)
    DRAW[name](result, fig)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _loaded_note(result: dict[str, Any]) -> str:
    machine = result.get("machine") or {}
    load, cpus = machine.get("loadavg", [0])[0], machine.get("cpus") or 1
    return f" (load {load:.1f} on {cpus} CPUs at start)" if load else ""


def link(result: dict[str, Any], fig: Any) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    probes = result["rtt_ms_probes"]
    ax1.hist(probes, bins=20, color="tab:blue", alpha=0.8, label="NDN ping probes")
    ax1.axvline(result["rtt_ms_set"], color="k", linestyle="--", label="asked")
    ax1.axvline(result["rtt_ms_measured"], color="tab:red", label="median")
    ax1.set_xlabel("round-trip time (ms)")
    ax1.set_ylabel("probes")
    ax1.set_title(
        f"WAN RTT: asked {result['rtt_ms_set']:g} ms, median {result['rtt_ms_measured']:.2f} ms"
    )
    ax1.legend()
    labels = ["asked", "B->A", "A->B"]
    values = [
        result["rate_mbps_set"],
        result["rate_b_to_a"]["mbps"],
        result["rate_a_to_b"]["mbps"],
    ]
    ax2.bar(labels, values, color=["0.6", "tab:blue", "tab:cyan"])
    for i, v in enumerate(values):
        ax2.text(i, v, f"{v:.1f}", ha="center", va="bottom")
    ax2.set_ylabel("Mbit/s on the wire")
    ax2.set_title("WAN rate (tbf), UDP probe" + _loaded_note(result))


def sweep(result: dict[str, Any], fig: Any) -> None:
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    fixed: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    adaptive: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for p in result["points"]:
        if p["cc"] == "fixed":
            fixed[p["segment_bytes"]][p["window"]].append(p["mbps"])
        else:
            adaptive[p["cc"]][p["segment_bytes"]].append(p["mbps"])
    for size in sorted(fixed):
        windows = sorted(fixed[size])
        line = ax1.plot(
            windows, [statistics.median(fixed[size][w]) for w in windows], "o-", label=f"{size} B"
        )
        ideal = result["ideal_mbps"][str(size)]
        ax1.plot(windows, [ideal[str(w)] for w in windows], ":", color=line[0].get_color())
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log")
    ax1.set_xlabel("fixed window (Interests in flight)")
    ax1.set_ylabel("throughput (Mbit/s)")
    rtt, rate = result["rtt_ms_set"], result["bottleneck_mbps_set"]
    ax1.set_title(f"RTT {rtt:g} ms, {rate:g} Mbit/s (dotted: min(window x segment / RTT, rate))")
    ax1.legend(title="segment", fontsize=8)
    sizes = sorted({s for cc in adaptive.values() for s in cc})
    width = 0.8 / max(1, len(adaptive))
    for i, cc in enumerate(sorted(adaptive)):
        xs = [j + i * width for j in range(len(sizes))]
        ax2.bar(xs, [statistics.median(adaptive[cc][s]) for s in sizes], width, label=cc.upper())
    ax2.set_xticks([j + width * (len(adaptive) - 1) / 2 for j in range(len(sizes))])
    ax2.set_xticklabels([str(s) for s in sizes], fontsize=8)
    ax2.set_xlabel("segment size (B)")
    ax2.set_ylabel("throughput (Mbit/s)")
    ax2.set_title("adaptive windows" + _loaded_note(result))
    ax2.legend()


def caching(result: dict[str, Any], fig: Any) -> None:
    ax = fig.subplots(1, 1)
    labels = [f"HTTP\n{h['consumer']}" for h in result["http"]]
    values = [h["mbps"] for h in result["http"]]
    colors = ["0.55"] * len(values)
    for n in result["ndn"]:
        labels.append(f"NDN {n['from']}\n{n['consumer']}")
        values.append(n["mbps"])
        colors.append("tab:orange" if n["from"] == "producer" else "tab:green")
    ax.bar(range(len(values)), values, color=colors)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("throughput (Mbit/s)")
    mb = result["file_bytes"] / 2**20
    ax.set_title(
        f"{mb:.0f} MiB file, 4 consumers in turn: cached NDN / HTTP = {result['gain']:.2f}x; "
        f"producer saw {result['producer_interests_during_cached']} segment Interests while "
        f"the cache served" + _loaded_note(result),
        fontsize=9,
    )


def cachehit(result: dict[str, Any], fig: Any) -> None:
    ax1, ax2, ax3 = fig.subplots(1, 3)
    sizes = result["cache_sizes"]
    for policy, points in result["simulated"].items():
        caps = sorted(points, key=int)
        ax1.plot(
            [100 * sizes[c]["fraction_of_catalog"] for c in caps],
            [points[c] for c in caps],
            POLICY_STYLE.get(policy, "o-"),
            label=f"{policy.upper()} (sim.)",
        )
    total = result["replay_parameters"]["catalog_segments"] if result.get("replayed") else None
    for policy, points in (result.get("replayed") or {}).items():
        caps = sorted(points, key=int)
        assert total is not None
        xs = [100 * int(c) / total for c in caps]
        ax1.plot(
            xs,
            [points[c] for c in caps],
            "k*",
            markersize=12,
            label=f"{policy.upper()} NDNd (replay)",
        )
        sim = result["replay_simulated"][policy]
        ax1.plot(
            xs,
            [sim[c] for c in caps],
            "kx",
            markersize=9,
            label=f"{policy.upper()} sim., same requests",
        )
    ax1.set_xlabel("cache size (% of the catalog)")
    ax1.set_ylabel("hit ratio (segments)")
    ax1.set_title("cache size", fontsize=9)
    ax1.legend(fontsize=7)
    for ax, key, label in ((ax2, "consumers", "consumers"), (ax3, "files", "files")):
        for policy, points in result[key].items():
            xs = sorted(points, key=int)
            ax.plot(
                [int(x) for x in xs],
                [points[x] for x in xs],
                POLICY_STYLE.get(policy, "o-"),
                label=policy.upper(),
            )
        ax.set_xlabel(label)
        ax.set_ylabel("hit ratio (segments)")
        packets = result["parameters"]["consumers_and_files_sweeps_cache_packets"]
        ax.set_title(f"{label} (cache {packets} packets)", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(
        f"Zipf alpha {result['parameters']['alpha']}, file sizes from {result['size_source']}",
        fontsize=9,
    )


def fairness(result: dict[str, Any], fig: Any) -> None:
    runs = result["runs"]
    axes = fig.subplots(1, len(runs) + 1)
    for ax, (cc, run) in zip(axes, sorted(runs.items()), strict=False):
        series = run["series"]
        for k, consumer in enumerate(run["consumers"]):
            ts, rates = _rate_series(series, lambda s, k=k: s["rx"][k])
            ax.plot(ts, rates, label=consumer, linewidth=1)
        ts, rates = _rate_series(series, lambda s: s["wan_rx"])
        ax.plot(ts, rates, "k--", label="WAN", linewidth=1)
        ax.axvspan(*run["window_seconds"], color="0.9")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("Mbit/s")
        ax.set_title(
            f"{cc.upper()}: Jain {run['jain']:.3f}, utilisation "
            f"{100 * (run['utilisation'] or 0):.0f}%",
            fontsize=9,
        )
        ax.legend(fontsize=7)
    ax = axes[-1]
    ccs = sorted(runs)
    ax.bar([c.upper() for c in ccs], [runs[c]["jain"] for c in ccs], color="tab:purple")
    ax.set_ylim(0, 1.05)
    ax.set_title("Jain's index (shaded window)" + _loaded_note(result), fontsize=9)


def _rate_series(series: list[dict[str, Any]], value: Any) -> tuple[list[float], list[float]]:
    ts, rates = [], []
    for a, b in itertools.pairwise(series):
        dt = b["t"] - a["t"]
        if dt > 0:
            ts.append(b["t"])
            rates.append((value(b) - value(a)) * 8 / dt / 1e6)
    return ts, rates


def federation(result: dict[str, Any], fig: Any) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    n = result["records"]
    ndn, http = result["series"]["ndn"], result["series"]["http"]
    ax1.plot([s["t"] for s in ndn], [s["records"] for s in ndn], "-", color="tab:blue",
             label="NDN (federate), from the publish start")  # fmt: skip
    # the mirror ran afterwards, from zero: drawn as if it had started when the publish ended
    shift = result["publish_seconds"]
    label = "HTTP mirror (run afterwards), from the publish end"
    ax1.plot([s["t"] + shift for s in http], [s["records"] for s in http], "-",
             color="tab:orange", label=label)  # fmt: skip
    ax1.axvline(shift, color="0.4", linestyle=":", label="publish done")
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel(f"records held at {result['sites']['subscriber']['node']}")
    ax1.set_ylim(0, n * 1.05)
    ax1.set_title(
        f"{n:,} records: NDN {result['convergence_seconds_after_publish']:.1f} s after the "
        f"publish, HTTP {result['http_mirror_seconds']:.1f} s" + _loaded_note(result),
        fontsize=9,
    )
    ax1.legend(fontsize=7)
    bars = {
        "signed\nbatches": result["batch_bytes_per_record"],
        "NDN\n(WAN faces)": result["ndn_bytes_per_record"],
        "NDN\n(WAN wire)": result["wan_bytes_per_record"],
        "HTTP\n(WAN wire)": result["http_wan_bytes_per_record"],
    }
    colours = ["0.6", "tab:blue", "tab:blue", "tab:orange"]
    ax2.bar(list(bars), list(bars.values()), color=colours)
    for i, value in enumerate(bars.values()):
        ax2.annotate(f"{value:.0f}", (i, value), ha="center", va="bottom", fontsize=8)
    ax2.set_ylabel("bytes per record (both directions)")
    wan = result["path"]["wan"]
    ax2.set_title(
        f"catalog traffic over the WAN ({wan['rate_mbps']:g} Mbit/s, {wan['rtt_ms']:g} ms RTT)",
        fontsize=9,
    )


DRAW = {
    "link": link,
    "sweep": sweep,
    "caching": caching,
    "cachehit": cachehit,
    "fairness": fairness,
    "federation": federation,
}
