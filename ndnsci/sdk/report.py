"""What a fetch reports: each file's :class:`Outcome`, and the :class:`FetchReport` of a run.

A bottom module: the engine (:mod:`ndnsci.sdk.fetch`), the progress displays and the command line
share these types, and it imports nothing else of ndnsci.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


@dataclass
class Outcome:
    """What happened to one file.

    ``status``: ``done`` (fetched and verified), ``skipped`` (complete already), ``failed``
    (``error`` says why) or ``cancelled`` (interrupted; a re-run continues it). ``checksum`` is
    ``verified`` when the bytes on disk matched the publisher's signed SHA-256 or the catalog's,
    ``unavailable`` when neither published one (only the segment digests were checked).

    The engine fills it in as the file goes; :meth:`to_dict` gives every field.
    """

    name: str
    path: str
    status: str
    error: str | None = None
    size: int = 0
    seconds: float = 0.0
    attempts: int = 0
    sha256: str = ""
    checksum: str = ""
    signer: str = ""
    engine: str = ""  # what moved the bytes: python, ndn-dpdk, ndn-dpdk+python (a fall-back)
    segments: int = 0
    retransmissions: int = 0
    timeouts: int = 0
    nacks: int = 0
    rejected: int = 0
    congestion_marks: int = 0
    resumed_segments: int = 0
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.warnings is None:  # warnings=None means none, as it always has (typed list[str])
            self.warnings = []  # type: ignore[unreachable]

    @property
    def ok(self) -> bool:
        return self.status in ("done", "skipped")

    @property
    def mbps(self) -> float:
        return self.size / self.seconds / 1e6 if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every field (a copy), and ``mbps``."""
        return {**asdict(self), "mbps": round(self.mbps, 2)}


@dataclass
class FetchReport:
    """Every file's :class:`Outcome`, in the order asked, and the totals."""

    outcomes: list[Outcome]
    seconds: float = 0.0
    interrupted: bool = False

    def _with(self, *statuses: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in statuses]

    @property
    def done(self) -> list[Outcome]:
        return self._with("done")

    @property
    def skipped(self) -> list[Outcome]:
        return self._with("skipped")

    @property
    def failed(self) -> list[Outcome]:
        return self._with("failed")

    @property
    def cancelled(self) -> list[Outcome]:
        return self._with("cancelled")

    @property
    def ok(self) -> bool:
        """True when every file is in place and verified."""
        return all(o.ok for o in self.outcomes)

    @property
    def paths(self) -> list[Path]:
        """The local files that are in place, in the order asked."""
        from pathlib import Path  # the SDK's answer, after the fetch: not on the CLI's path

        return [Path(o.path) for o in self.outcomes if o.ok]

    @property
    def local(self) -> dict[str, str]:
        """NDN name -> local path of every file in place (for :meth:`Catalog.to_intake_esm`)."""
        return {o.name: o.path for o in self.outcomes if o.ok}

    @property
    def bytes(self) -> int:
        """Bytes transferred in this run (skipped files not counted)."""
        return sum(o.size for o in self.done)

    def summary(self) -> str:
        rate = self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0
        parts = [
            f"{len(self.done)} fetched ({self.bytes:,} bytes, {rate:.1f} MB/s)",
            f"{len(self.skipped)} already complete",
            f"{len(self.failed)} failed",
        ]
        if self.cancelled:
            parts.append(f"{len(self.cancelled)} not finished (interrupted)")
        return ", ".join(parts) + f" in {self.seconds:.1f} s"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a download: the workers stopped cleanly; ``report`` says what is done."""

    def __init__(self, report: FetchReport) -> None:
        super().__init__("interrupted")
        self.report = report
