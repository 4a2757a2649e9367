"""Network namespaces, veth pairs and tbf through ``ip`` and ``tc``, and the record of what a
testbed made, so that ``ndnsci testbed down`` (or the next run) can remove exactly that.

Every namespace of a testbed is named ``<id>-<node>`` (links with a delay element:
``<id>-<a>-<b>``), where ``<id>`` is ``nsci-<pid of the process that built it>``: runs never
collide, and nothing here touches a namespace that is not in a testbed's record. The veths are
created directly inside those namespaces (``ip link add ... netns``), never in the host's, and
go away with them.

The record (``<state dir>/<id>.json``) is written before anything is created and updated as
things are, so a testbed whose builder was killed half-way is still removed completely.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ndnsci.base import processes
from ndnsci.errors import TestbedError

ID_PREFIX = "nsci-"
COMMAND_TIMEOUT = 30.0


def state_dir() -> Path:
    """Where testbed records live: ``$NDNSCI_TESTBED_STATE``, else /run/ndnsci-testbed."""
    from ndnsci.base.environment import settings

    return settings().testbed_state


def run(argv: list[str], *, timeout: float = COMMAND_TIMEOUT, check: bool = True) -> str:
    """Run a system command; returns its stdout. Raises TestbedError with its stderr."""
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise TestbedError(f"{argv[0]} not found: the testbed needs iproute2 (ip, tc)") from exc
    except subprocess.TimeoutExpired as exc:
        raise TestbedError(f"{' '.join(argv)} did not finish within {timeout:.0f} s") from exc
    if check and proc.returncode != 0:
        raise TestbedError(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def in_ns(ns: str, argv: list[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def namespaces() -> set[str]:
    """Every network namespace of the machine (``ip netns list``)."""
    return {line.split()[0] for line in run(["ip", "netns", "list"]).splitlines() if line.strip()}


@dataclass
class BedRecord:
    """What one testbed made: kept on disk while it exists."""

    id: str
    owner_pid: int
    owner_start: int | None
    topology: str
    rundir: str
    namespaces: list[str] = field(default_factory=list)
    created: float = field(default_factory=time.time)

    @property
    def path(self) -> Path:
        return state_dir() / f"{self.id}.json"

    def save(self) -> None:
        processes.save_state(self.path, self)

    def add_namespace(self, name: str) -> None:
        self.namespaces.append(name)
        self.save()

    @property
    def owner_alive(self) -> bool:
        return processes.alive(self.owner_pid, started=self.owner_start)

    @classmethod
    def load(cls, path: Path) -> BedRecord:
        record = processes.load_state(path, cls, TestbedError, "testbed record")
        if record is None:
            raise TestbedError(f"unreadable testbed record {path}: there is no such file")
        return record


def records() -> list[BedRecord]:
    folder = state_dir()
    if not folder.is_dir():
        return []
    return [BedRecord.load(p) for p in sorted(folder.glob(f"{ID_PREFIX}*.json"))]


# --- building --------------------------------------------------------------------------------


def add_namespace(record: BedRecord, name: str) -> None:
    """Create namespace ``name`` (recorded first, so a failure half-way is cleaned up too)."""
    if not name.startswith(record.id + "-"):
        raise TestbedError(f"namespace {name} is not named after testbed {record.id}")
    record.add_namespace(name)
    run(["ip", "netns", "add", name])
    run(["ip", "-n", name, "link", "set", "dev", "lo", "up"])


def add_veth(ns_a: str, if_a: str, ns_b: str, if_b: str, mtu: int) -> None:
    """A veth pair with one end in each namespace (made there: never visible in the host's)."""
    run(
        [
            "ip",
            "link",
            "add",
            if_a,
            "netns",
            ns_a,
            "mtu",
            str(mtu),
            "type",
            "veth",
            "peer",
            "name",
            if_b,
            "netns",
            ns_b,
            "mtu",
            str(mtu),
        ]
    )
    for ns, dev in ((ns_a, if_a), (ns_b, if_b)):
        # IPv6 would only add router solicitations and MLD reports to the links
        sysctl(ns, f"net.ipv6.conf.{dev}.disable_ipv6", "1")
        run(["ip", "-n", ns, "link", "set", "dev", dev, "up"])


def sysctl(ns: str, key: str, value: str) -> None:
    run(in_ns(ns, ["sysctl", "-qw", f"{key}={value}"]))


def address(ns: str, dev: str, cidr: str) -> None:
    run(["ip", "-n", ns, "addr", "add", cidr, "dev", dev])


def mac(ns: str, dev: str) -> str:
    info = json.loads(run(["ip", "-j", "-n", ns, "link", "show", "dev", dev]))
    return str(info[0]["address"])


def neighbour(ns: str, dev: str, ip: str, lladdr: str) -> None:
    """A permanent ARP entry: no address resolution across a delayed link, ever."""
    run(["ip", "-n", ns, "neigh", "replace", ip, "lladdr", lladdr, "dev", dev, "nud", "permanent"])


def route(ns: str, subnet: str, via: str) -> None:
    run(["ip", "-n", ns, "route", "replace", subnet, "via", via])


def rate_limit(ns: str, dev: str, rate_mbps: float, queue_bytes: int) -> None:
    """tbf on ``dev``'s egress: ``rate_mbps`` (bits on the wire, Ethernet header included).

    The bucket holds 1 ms at the rate (at least 64 KiB: a GSO frame must fit, else tbf splits
    it), the queue ``queue_bytes`` before tail drop.
    """
    rate_bps = rate_mbps * 1e6
    burst = max(64 * 1024, int(rate_bps / 8 / 1000))
    run(
        in_ns(
            ns,
            [
                "tc",
                "qdisc",
                "replace",
                "dev",
                dev,
                "root",
                "tbf",
                "rate",
                f"{int(rate_bps)}bit",
                "burst",
                str(burst),
                "limit",
                str(queue_bytes + burst),
            ],
        )
    )


def interface_bytes(ns: str, dev: str) -> tuple[int, int]:
    """(received, sent) bytes of ``dev`` in ``ns``."""
    info = json.loads(run(["ip", "-j", "-s", "-n", ns, "link", "show", "dev", dev]))
    stats = info[0]["stats64"]
    return int(stats["rx"]["bytes"]), int(stats["tx"]["bytes"])


def qdisc_drops(ns: str, dev: str) -> int:
    info = json.loads(run(in_ns(ns, ["tc", "-j", "-s", "qdisc", "show", "dev", dev])))
    return sum(int(q.get("drops", 0)) for q in info)


def udp_counters(ns: str) -> dict[str, int]:
    """The namespace's UDP counters (/proc/net/snmp): RcvbufErrors counts what was dropped."""
    lines = [line.split() for line in run(in_ns(ns, ["cat", "/proc/net/snmp"])).splitlines()]
    udp = [fields for fields in lines if fields and fields[0] == "Udp:"]
    return dict(zip(udp[0][1:], map(int, udp[1][1:]), strict=True))


# --- taking down ---------------------------------------------------------------------------


def pids_in(ns: str) -> list[int]:
    out = run(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def kill_all_in(names: list[str], grace: float = 5.0) -> None:
    """SIGTERM every process inside these (our) namespaces, SIGKILL what is left after grace."""
    existing = namespaces()
    names = [n for n in names if n in existing]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = [pid for ns in names for pid in pids_in(ns) if pid != os.getpid()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(pids_in(ns) for ns in names):
            time.sleep(0.05)


def remove(record: BedRecord) -> list[str]:
    """Remove a testbed's processes, namespaces (their veths go with them) and files.

    Returns the namespaces removed. Touches only what the record lists.
    """
    kill_all_in(record.namespaces)
    existing = namespaces()
    removed = []
    for name in reversed(record.namespaces):
        if name in existing:
            run(["ip", "netns", "del", name], check=False)  # its builder may be at it too
            removed.append(name)
    left = sorted(set(removed) & namespaces())
    if left:
        raise TestbedError(f"could not remove the namespaces {', '.join(left)}")
    if record.rundir and Path(record.rundir).name.startswith(ID_PREFIX):
        shutil.rmtree(record.rundir, ignore_errors=True)
    record.path.unlink(missing_ok=True)
    return removed


def take_down(record: BedRecord, wait: float = 60.0) -> list[str]:
    """Stop a testbed: ask its live builder to stop (it cleans up), then remove what is left."""
    if record.owner_alive and record.owner_pid != os.getpid():
        with contextlib.suppress(ProcessLookupError):
            os.kill(record.owner_pid, signal.SIGTERM)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and record.owner_alive and record.path.exists():
            time.sleep(0.1)
    left = set(record.namespaces) & namespaces()
    if left or record.path.exists():
        remove(record)
    return record.namespaces
