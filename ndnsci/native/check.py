"""``ndnsci native check``: can this machine run NDN-DPDK and NDNc, and if not, why not.

Each check is a :class:`Finding` (ok or not, with what was seen and what to do). The machine
can run the native plane when every *required* finding is ok; it is ready when, in addition,
NDN-DPDK is built. Nothing is changed, except that the veth check creates and deletes one
interface (the only reliable test that the kernel and our privileges allow it).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ndnsci.native import install

MIN_KERNEL = (5, 15)  # NDN-DPDK's docs/ndndpdk-depends.sh: io_uring and openat2 features
HUGEPAGE_KB = 2048
PROC = Path("/proc")

# exit statuses of `ndnsci native check`
READY = 0
CANNOT_RUN = 1
NOT_BUILT = 3


@dataclass(frozen=True)
class Finding:
    name: str
    ok: bool
    detail: str
    required: bool = True


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    @property
    def can_run(self) -> bool:
        return all(f.ok for f in self.findings if f.required and f.name != "build")

    @property
    def built(self) -> bool:
        return any(f.name == "build" and f.ok for f in self.findings)

    @property
    def status(self) -> int:
        if not self.can_run:
            return CANNOT_RUN
        return READY if self.built else NOT_BUILT

    def to_dict(self) -> dict[str, object]:
        return {
            "can_run": self.can_run,
            "built": self.built,
            "findings": [vars(f) for f in self.findings],
        }


def run(pages: int, proc: Path = PROC) -> Report:
    """Every check; ``pages`` is how many 2 MB hugepages ``native up`` would need."""
    checks: list[tuple[str, Callable[[], Finding]]] = [
        ("cpu", lambda: _cpu(proc)),
        ("kernel", _kernel),
        ("io_uring", lambda: _io_uring(proc)),
        ("privileges", _root),
        ("hugepages", lambda: _hugepages(pages, proc)),
        ("memif", _memif),
        ("veth", _veth),
        ("build", _build),
        ("ndnc", _ndnc),
    ]
    return Report([_guarded(name, check) for name, check in checks])


def _guarded(name: str, check: Callable[[], Finding]) -> Finding:
    """One check; a folder or file it cannot read (an unprivileged user and root's cache, say)
    is that check's finding, not the end of the report."""
    try:
        return check()
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        reason = error.strerror or type(error).__name__
        return Finding(name, False, f"could not be checked: {reason}{where}", name != "ndnc")


def cpu_flags(proc: Path = PROC) -> set[str]:
    try:
        text = (proc / "cpuinfo").read_text()
    except OSError:
        return set()
    match = re.search(r"^flags\s*:\s*(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def _cpu(proc: Path) -> Finding:
    arch = platform.machine()
    if arch != "x86_64":
        return Finding("cpu", False, f"{arch}: the build here targets x86-64 (DPDK, -march=native)")
    flags = cpu_flags(proc)
    missing = {"sse4_2", "ssse3"} - flags  # DPDK's x86 baseline; NDN-DPDK builds for x86-64-v2+
    if missing:
        return Finding(
            "cpu", False, f"x86-64 without {', '.join(sorted(missing))} (DPDK needs them)"
        )
    extra = ", ".join(f for f in ("avx2", "avx512f", "pdpe1gb") if f in flags)
    return Finding(
        "cpu", True, f"x86-64, {os.cpu_count()} CPUs, SSE4.2" + (f", {extra}" if extra else "")
    )


def _kernel() -> Finding:
    release = platform.release()
    numbers = tuple(int(n) for n in re.findall(r"\d+", release)[:2])
    if numbers < MIN_KERNEL:
        need = ".".join(map(str, MIN_KERNEL))
        return Finding("kernel", False, f"Linux {release}; NDN-DPDK needs {need} or newer")
    return Finding("kernel", True, f"Linux {release}")


def _io_uring(proc: Path) -> Finding:
    # the file server reads and the fetcher writes through io_uring; a sysctl can forbid it
    try:
        disabled = int((proc / "sys" / "kernel" / "io_uring_disabled").read_text())
    except (OSError, ValueError):
        disabled = 0
    if disabled:
        return Finding(
            "io_uring", False, f"kernel.io_uring_disabled={disabled}: set it to 0 (sysctl)"
        )
    return Finding("io_uring", True, "allowed")


def _root() -> Finding:
    if os.geteuid() != 0:
        return Finding(
            "privileges",
            False,
            "not root: hugepages, AF_PACKET ports and memif sockets need root (run with sudo)",
        )
    return Finding("privileges", True, "root")


def hugepage_counts(proc: Path = PROC) -> tuple[int, int]:
    """(pool, free) 2 MB hugepages. The pool is ``vm.nr_hugepages`` without surplus pages:
    pages still mapped (PostgreSQL maps free hugepages when it finds some) after the pool was
    lowered, which the kernel frees when their holder exits."""
    fields = {"HugePages_Total:": 0, "HugePages_Free:": 0, "HugePages_Surp:": 0}
    try:
        for line in (proc / "meminfo").read_text().splitlines():
            key = line.split(maxsplit=1)[0] if line else ""
            if key in fields:
                fields[key] = int(line.split()[1])
    except OSError:
        pass
    return fields["HugePages_Total:"] - fields["HugePages_Surp:"], fields["HugePages_Free:"]


def mem_available_kb(proc: Path = PROC) -> int:
    try:
        for line in (proc / "meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _hugepages(pages: int, proc: Path) -> Finding:
    try:
        filesystems = (proc / "filesystems").read_text()
    except OSError:
        filesystems = ""
    if "hugetlbfs" not in filesystems:
        return Finding("hugepages", False, "the kernel has no hugetlbfs (CONFIG_HUGETLBFS)")
    knob = proc / "sys" / "vm" / "nr_hugepages"
    if not knob.exists():
        return Finding("hugepages", False, f"{knob} is missing: no 2 MB hugepage support")
    total, free = hugepage_counts(proc)
    if free >= pages:
        return Finding("hugepages", True, f"{free} of {total} 2 MB pages free (need {pages})")
    if not os.access(knob, os.W_OK):
        return Finding(
            "hugepages",
            False,
            f"{free} 2 MB pages free, {pages} needed, and {knob} is not writable here "
            f"(allocate them as root: echo {total - free + pages} > {knob})",
        )
    need_kb = (pages - free) * HUGEPAGE_KB
    available = mem_available_kb(proc)
    if available < 2 * need_kb:  # leave the rest of the machine at least as much again
        return Finding(
            "hugepages",
            False,
            f"{pages} 2 MB pages ({pages * 2} MB) needed but only {available // 1024} MB of "
            f"memory is available",
        )
    return Finding(
        "hugepages", True, f"{free} free, {pages - free} more can be allocated ({pages} needed)"
    )


def _memif() -> Finding:
    try:
        fd = os.memfd_create("ndnsci-check", os.MFD_ALLOW_SEALING)
        os.close(fd)
    except (AttributeError, OSError) as exc:
        return Finding("memif", False, f"memfd_create fails ({exc}): memif needs it")
    build = install.ndn_dpdk()
    if build is not None and not any(
        list(lib.glob("dpdk/pmds-*/librte_net_memif.so*")) for lib in build.lib_dirs
    ):
        return Finding("memif", False, f"the NDN-DPDK build in {build.prefix} has no memif driver")
    return Finding("memif", True, "memfd_create works" + (", driver built" if build else ""))


def _veth() -> Finding:
    ip = shutil.which("ip")
    if ip is None:
        return Finding("veth", False, "no `ip` command (apt install iproute2)")
    name = f"ndnsci-c{os.getpid() % 100000}"
    made = subprocess.run(
        [ip, "link", "add", name, "type", "veth", "peer", "name", name + "p"],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        return Finding("veth", False, f"cannot create a veth pair: {made.stderr.strip()}")
    subprocess.run([ip, "link", "del", name], capture_output=True, check=False)
    return Finding("veth", True, "veth pairs can be created (the NDNd <-> NDN-DPDK face)")


def _build() -> Finding:
    build = install.ndn_dpdk()
    if build is None:
        return Finding("build", False, "NDN-DPDK is not built: run `make native`")
    return Finding("build", True, f"NDN-DPDK in {build.prefix}")


def _ndnc() -> Finding:
    build = install.ndnc()
    if build is None:
        return Finding("ndnc", False, "NDNc is not built (`make native`)", required=False)
    return Finding("ndnc", True, f"NDNc in {build.prefix}", required=False)
