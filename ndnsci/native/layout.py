"""How the NDN-DPDK instances are sized: lcores, memory, mempools, and the activation documents.

Three ``ndndpdk-svc`` processes make the plane: the forwarder, the fetcher (a traffic generator
with a fetcher, driven by ``ndnsci fetch --engine ndn-dpdk``) and the file server (``ndnsci
serve --engine ndn-dpdk``). Each is a DPDK application that wants a CPU per lcore and polls; on a
small machine they must share, so (docs/native.md has the measurements behind the numbers):

- every instance runs the minimum of lcores its role needs (main, RX, TX, one worker), all
  floating over the same CPUs (``lcoresPerNuma``: ``--lcores (0-3)@(0,1)``), and the build sets
  ``NDNDPDK_MK_THREADSLEEP=1`` so an idle poller sleeps instead of spinning;
- mempools are small (the defaults want gigabytes): the forwarder holds 16k packet buffers,
  the file server and the fetcher 8k each, enough for their io_uring queues and windows;
- memory is capped per instance (``memPerNuma``, MB of 2 MB hugepages), and the hugepages
  ``native up`` reserves are their sum (:attr:`Layout.hugepages`).

A big server changes only the numbers: :meth:`Layout.for_machine` with more CPUs gives the
forwarder more forwarding threads and the file server more threads, each on its own CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

GQL_HOST = "127.0.0.1"
MEMIF_DATAROOM = 9000  # packet size between instances (memif)
MBUF_DATAROOM = 9146  # MEMIF_DATAROOM + 128 headroom + 18 Ethernet/VLAN header
SEGMENT_LEN = 8000  # file server payload per Data, as ndnsci serve (fits the 8800-byte limit)
HUGEPAGE_MB = 2
HUGEPAGE_MARGIN = 8  # pages per instance beyond its memory limit
PROCESS_OVERHEAD_MB = 64  # EAL and heap beyond the sizing below, per instance


@dataclass(frozen=True)
class Instance:
    """One ``ndndpdk-svc``: its role, GraphQL port, lcores and hugepage memory (MB)."""

    role: str  # forwarder | fetcher | fileserver
    port: int
    lcores: int
    memory_mb: int

    @property
    def url(self) -> str:
        return f"http://{GQL_HOST}:{self.port}/"

    @property
    def file_prefix(self) -> str:
        return f"ndnsci-{self.role}"

    @property
    def hugepages(self) -> int:
        """2 MB pages it claims, with a margin for what DPDK's EAL takes beyond the limit."""
        return -(-self.memory_mb // HUGEPAGE_MB) + HUGEPAGE_MARGIN


@dataclass(frozen=True)
class Layout:
    """The plane on one machine."""

    cpus: int
    forwarder: Instance
    fetcher: Instance
    fileserver: Instance
    fwd_threads: int = 1
    fs_threads: int = 1
    fetch_threads: int = 1
    fw_mbufs: int = 16383
    fs_mbufs: int = 8191
    fetch_mbufs: int = 8191
    fetch_tasks: int = 8
    uring_capacity: int = 2048

    @classmethod
    def for_machine(cls, cpus: int | None = None, base_port: int = 3030) -> Layout:
        cpus = cpus or os.cpu_count() or 1
        big = cpus >= 16  # a server: give the data path threads their own CPUs
        fwd = 4 if big else 1
        fs = 4 if big else 1
        fetch = 2 if big else 1
        fw_mbufs = 262143 if big else 16383
        io_mbufs = 65535 if big else 8191
        return cls(
            cpus=cpus,
            forwarder=Instance("forwarder", base_port, 3 + fwd, _memory(2 * fw_mbufs)),
            fetcher=Instance("fetcher", base_port + 1, 3 + fetch, _memory(3 * io_mbufs)),
            fileserver=Instance("fileserver", base_port + 2, 3 + fs, _memory(3 * io_mbufs)),
            fwd_threads=fwd,
            fs_threads=fs,
            fetch_threads=fetch,
            fw_mbufs=fw_mbufs,
            fs_mbufs=io_mbufs,
            fetch_mbufs=io_mbufs,
            uring_capacity=8192 if big else 2048,
        )

    @property
    def instances(self) -> list[Instance]:
        return [self.forwarder, self.fetcher, self.fileserver]

    @property
    def hugepages(self) -> int:
        """2 MB pages the three instances need together."""
        return sum(i.hugepages for i in self.instances)

    def _eal(self, instance: Instance) -> dict[str, Any]:
        return {
            # every lcore may run on every CPU: the kernel shares them (THREADSLEEP build)
            "lcoresPerNuma": {"0": instance.lcores},
            "memPerNuma": {"0": instance.memory_mb},
            # claimed at start, not on demand: hugepages left free can be taken by others
            # (PostgreSQL maps free hugepages for its shared memory when it finds some)
            "preallocateMem": True,
            "filePrefix": instance.file_prefix,
            "disablePCI": True,  # memif and AF_PACKET only: no PCI probing
        }

    def forwarder_args(self) -> dict[str, Any]:
        return {
            "eal": self._eal(self.forwarder),
            "lcoreAlloc": {
                "RX": {"0": 1},
                "TX": {"0": 1},
                "FWD": {"0": self.fwd_threads},
                "CRYPTO": {"0": 0},
                "DISK": {"0": 0},
            },
            "mempool": {
                "DIRECT": {"capacity": self.fw_mbufs, "dataroom": MBUF_DATAROOM},
                "INDIRECT": {"capacity": self.fw_mbufs},
            },
            "fib": {"capacity": 1023, "startDepth": 8},
            "pcct": {
                "pcctCapacity": 16383,
                # a Data reassembled from the NDNd link holds 6 buffers of 9 KB (plane.py,
                # LINK_MTU): 1024 cached Data stay well inside the forwarder's 16k buffers
                "csMemoryCapacity": 1024,
                "csIndirectCapacity": 1024,
            },
        }

    def fetcher_args(self) -> dict[str, Any]:
        return {
            "eal": self._eal(self.fetcher),
            "mempool": {
                "DIRECT": {"capacity": self.fetch_mbufs, "dataroom": MBUF_DATAROOM},
                "INDIRECT": {"capacity": self.fetch_mbufs},
                "INTEREST": {"capacity": self.fetch_mbufs},
                "DATA": {"capacity": 1023},
                "PAYLOAD": {"capacity": 1023},
            },
        }

    def fetcher_config(self) -> dict[str, Any]:
        return {"nThreads": self.fetch_threads, "nTasks": self.fetch_tasks}

    def fileserver_args(self, face: dict[str, Any], mounts: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "eal": self._eal(self.fileserver),
            "mempool": {
                "DIRECT": {"capacity": self.fs_mbufs, "dataroom": MBUF_DATAROOM},
                "INDIRECT": {"capacity": self.fs_mbufs},
                "PAYLOAD": {"capacity": self.fs_mbufs, "dataroom": MBUF_DATAROOM},
            },
            "face": face,
            "fileServer": {
                "nThreads": self.fs_threads,
                "mounts": mounts,
                "segmentLen": SEGMENT_LEN,
                "uringCapacity": self.uring_capacity,
                # the view's links are absolute: RESOLVE_BENEATH would refuse them (view.py)
                "resolveBeneath": False,
                "statValidity": 1_000_000_000,  # ns: a changed file is seen within a second
            },
        }


def memif(socket: str, role: str) -> dict[str, Any]:
    """A memif locator between two instances (the forwarder is the server)."""
    return {
        "scheme": "memif",
        "role": role,
        "socketName": socket,
        "id": 0,
        "dataroom": MEMIF_DATAROOM,
    }


def _memory(mbufs: int) -> int:
    """MB of hugepage memory for ``mbufs`` packet buffers of MBUF_DATAROOM and the rest."""
    per_mbuf = MBUF_DATAROOM + 128 + 64  # dataroom, rte_mbuf header, private area
    need = mbufs * per_mbuf // (1 << 20) + PROCESS_OVERHEAD_MB
    return -(-need // HUGEPAGE_MB) * HUGEPAGE_MB
