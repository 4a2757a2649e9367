"""Hugepages for NDN-DPDK: taken at ``native up``, given back at ``native down``.

``reserve`` raises ``vm.nr_hugepages`` by what is missing (2 MB pages); ``release`` lowers it
by what ``reserve`` added. NDN-DPDK runs DPDK with ``--in-memory`` (dpdk/ealconfig/memory.go),
which maps its hugepages anonymously: no hugetlbfs mount is needed and a killed instance leaves
no page file behind, its pages return to the free pool when it exits. The
:class:`Reservation` is recorded in the plane's state file, so ``native down`` can release what
an earlier ``native up`` (another process) reserved.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ndnsci.errors import NativePlaneError
from ndnsci.native.check import PROC, hugepage_counts

PAGE_MB = 2
RAISE_ATTEMPTS = 10


@dataclass(frozen=True)
class Reservation:
    added: int  # pages we added to vm.nr_hugepages (given back at release)
    pages: int  # pages the plane may use


def _knob(proc: Path) -> Path:
    return proc / "sys" / "vm" / "nr_hugepages"


def _set_total(pages: int, proc: Path) -> int:
    """Ask the kernel for ``pages`` in all; what it gave (it may give fewer)."""
    knob = _knob(proc)
    try:
        knob.write_text(f"{pages}\n")
        return int(knob.read_text())
    except OSError as exc:
        raise NativePlaneError(
            f"cannot set {knob} ({exc.strerror}): hugepages need root (run with sudo)"
        ) from exc


def reserve(pages: int, proc: Path = PROC) -> Reservation:
    """Make ``pages`` free 2 MB hugepages available.

    Raises:
        NativePlaneError: the kernel does not give that many pages (too little free or too
            fragmented memory, or no permission); nothing is left changed.
    """
    start, free = hugepage_counts(proc)  # the pool: surplus pages are not ours to count
    pool = start
    # Raising the pool first turns surplus pages (still held by their process) into pool pages,
    # so raise by what is missing until enough are free, or the kernel stops giving. Other
    # programs may take free pages as they appear (PostgreSQL with huge_pages=try does):
    # raise again, a few times.
    for _ in range(RAISE_ATTEMPTS):
        if free >= pages:
            break
        want = pool + pages - free
        _set_total(want, proc)
        pool, free = hugepage_counts(proc)
        if pool < want:  # the kernel gave what it could
            break
    if free < pages:
        _set_total(start, proc)
        raise NativePlaneError(
            f"hugepages not available: NDN-DPDK needs {pages} free 2 MB pages "
            f"({pages * PAGE_MB} MB) and the kernel gives only {free} (too little free or too "
            f"fragmented memory, or other programs hold them: grep Huge /proc/meminfo). Free "
            f"memory, or reserve them at boot (hugepages={start + pages} on the kernel "
            f"command line)"
        )
    added = max(0, pool - start)
    return Reservation(added, pages)


def release(reservation: Reservation, proc: Path = PROC) -> None:
    """Give back what :func:`reserve` added (pages still mapped are freed by the kernel once
    their process exits)."""
    if reservation.added:
        pool, _ = hugepage_counts(proc)
        _set_total(max(0, pool - reservation.added), proc)
