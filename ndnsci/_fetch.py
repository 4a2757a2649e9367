"""Bulk downloads over NDN: many files at once, verified, resumable across runs.

For every file, in a pool of ``parallel`` workers:

1. Skip it when it is already complete: the destination exists and its SHA-256 is the expected
   one (the catalog's). The check is remembered in the journal beside the output
   (``DEST/.ndnsci-fetch.jsonl``: name, path, size, mtime, sha256 of every verified file), so a
   re-run over thousands of complete files does not hash them again.
2. Fetch it with the pipelined NDN consumer (:func:`ndnsci.ndn.consumer.fetch`): segments are
   written into ``<file>.part`` with a bitmap ``<file>.part.state``, both kept when the fetch
   fails or is interrupted, so the next run continues where this one stopped; the producer's
   signed SHA-256 is checked and the file renamed into place.
3. Check it against the catalog (SHA-256, size) when the catalog's values are known: a file that
   differs is removed and reported.

Transient failures (timeouts, a forwarder restart) are retried with exponential back-off, as
pooch retries downloads. Progress is pluggable (:class:`Progress`): rich bars, a line per file,
or your own object.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol

from ndnsci._client import File, ManifestEntry, relative_path
from ndnsci.errors import (
    DownloadError,
    FetchTimeout,
    IntegrityError,
    ManifestError,
    NdnError,
    QueryError,
    TransportError,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ndnsci._client import AsyncSearchResults
    from ndnsci.ndn.consumer import FetchOptions

Layout = Literal["drs", "flat"]
JOURNAL = ".ndnsci-fetch.jsonl"
RETRY_DELAY = 1.0  # seconds before the first retry; doubled each time


# --- what to fetch -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Wanted:
    """A file to fetch: its name, where it goes (relative to the output) and what it must be."""

    name: str
    path: str
    size: int | None = None
    sha256: str | None = None


@dataclass
class Outcome:
    """What happened to one file: ``done``, ``skipped`` (complete already), ``failed`` or
    ``cancelled`` (interrupted; a re-run continues it)."""

    name: str
    path: str
    status: str
    error: str | None = None
    size: int = 0
    seconds: float = 0.0
    retransmissions: int = 0
    resumed_segments: int = 0
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.status in ("done", "skipped")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


Item = File | ManifestEntry | Wanted | Mapping[str, Any] | str | tuple[str, str] | ManifestError


def plan(items: Iterable[Item], layout: Layout = "drs") -> tuple[list[Wanted], list[Outcome]]:
    """Files to fetch, and the items that cannot be (bad manifest lines, duplicates) as failures.

    Raises:
        ValueError: ``layout`` is neither ``drs`` nor ``flat``.
    """
    if layout not in ("drs", "flat"):
        raise ValueError(f"layout must be 'drs' or 'flat', not {layout!r}")
    wanted: list[Wanted] = []
    refused: list[Outcome] = []
    by_path: dict[str, str] = {}
    for item in items:
        try:
            one = _wanted(item)
        except (ManifestError, QueryError) as exc:
            refused.append(_refused(getattr(item, "name", str(item)), str(exc)))
            continue
        if one is None:
            continue
        if isinstance(one, Outcome):
            refused.append(one)
            continue
        if layout == "flat":
            one = dataclasses.replace(one, path=one.path.rsplit("/", 1)[-1])
        holder = by_path.get(one.path)
        if holder == one.name:
            continue  # the same file twice
        if holder is not None:
            reason = f"goes to {one.path}, as {holder} does: use the drs layout"
            refused.append(_refused(one.name, reason))
            continue
        by_path[one.path] = one.name
        wanted.append(one)
    return wanted, refused


def _refused(name: str, reason: str) -> Outcome:
    return Outcome(name=name, path="", status="failed", error=reason)


def _wanted(item: Item) -> Wanted | Outcome | None:
    if isinstance(item, Wanted):
        return item
    if isinstance(item, File | ManifestEntry):
        return Wanted(item.name, item.path, item.size, item.sha256)
    if isinstance(item, ManifestError):
        return _refused(f"line {item.line}" if item.line else "manifest", str(item))
    if isinstance(item, tuple):
        return _refused(item[0], f"the catalog says: {item[1]}")
    if isinstance(item, str):
        return Wanted(item, relative_path(item)) if item.strip() else None
    from ndnsci._manifest import parse_line

    entry = parse_line(json.dumps(dict(item)), 0)
    return _wanted(entry)


# --- progress ------------------------------------------------------------------------------------


class Progress(Protocol):
    """What a download reports while it runs; pass your own to :func:`download`.

    ``update`` is called from worker threads (about ten times a second per file).
    """

    def start(self, files: int, total_bytes: int | None) -> None: ...

    def update(self, name: str, done: int, total: int) -> None: ...

    def end(self, outcome: Outcome) -> None: ...

    def close(self) -> None: ...


class NoProgress:
    """Reports nothing."""

    def start(self, files: int, total_bytes: int | None) -> None:
        pass

    def update(self, name: str, done: int, total: int) -> None:
        pass

    def end(self, outcome: Outcome) -> None:
        pass

    def close(self) -> None:
        pass


class LineProgress(NoProgress):
    """A line per finished file (logs, CI, notebooks that should stay short)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream
        self.count = 0
        self.files = 0

    def start(self, files: int, total_bytes: int | None) -> None:
        self.files = files

    def end(self, outcome: Outcome) -> None:
        self.count += 1
        detail = f": {outcome.error}" if outcome.error else f" ({outcome.size:,} bytes)"
        line = f"[{self.count}/{self.files}] {outcome.status} {outcome.name}{detail}"
        print(line, file=self.stream or sys.stderr, flush=True)


class RichProgress(NoProgress):
    """rich progress bars: the total, and one per file in flight (removed when it ends)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as Bars

        self.lock = threading.Lock()
        self.bars = Bars(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        )
        self.files = Bars(TextColumn("files"), BarColumn(), MofNCompleteColumn())
        self.tasks: dict[str, Any] = {}
        self.done: dict[str, int] = {}
        self.total_task: Any = None
        self.files_task: Any = None

    def start(self, files: int, total_bytes: int | None) -> None:
        from rich.console import Group
        from rich.live import Live

        self.total_task = self.bars.add_task("total", total=total_bytes or None)
        self.files_task = self.files.add_task("files", total=files)
        self.live = Live(Group(self.files, self.bars), refresh_per_second=8, transient=False)
        self.live.start()

    def update(self, name: str, done: int, total: int) -> None:
        with self.lock:
            task = self.tasks.get(name)
            if task is None:
                short = name if len(name) <= 60 else "..." + name[-57:]
                task = self.tasks[name] = self.bars.add_task(short, total=total)
            self.bars.update(task, completed=done, total=total)
            self.done[name] = done
            self.bars.update(self.total_task, completed=sum(self.done.values()))

    def end(self, outcome: Outcome) -> None:
        with self.lock:
            task = self.tasks.pop(outcome.name, None)
            if task is not None:
                self.bars.remove_task(task)
            self.done[outcome.name] = outcome.size if outcome.status == "done" else 0
            self.bars.update(self.total_task, completed=sum(self.done.values()))
            self.files.advance(self.files_task)

    def close(self) -> None:
        with contextlib.suppress(AttributeError):
            self.live.stop()


def make_progress(progress: bool | str | Progress | None) -> Progress:
    """``True``: rich bars (a line per file without rich); ``"text"``; ``False``; or yours."""
    if progress is None or progress is False:
        return NoProgress()
    if progress == "text":
        return LineProgress()
    if progress is True or progress == "rich":
        try:
            return RichProgress()
        except ImportError:
            return LineProgress()
    if isinstance(progress, str):
        raise ValueError(f"progress must be True, False, 'rich', 'text' or an object: {progress!r}")
    return progress


# --- the journal beside the output ---------------------------------------------------------------


class Journal:
    """Files verified in ``DEST`` (name, path, size, mtime, sha256), one JSON line each."""

    def __init__(self, dest: Path) -> None:
        self.path = dest / JOURNAL
        self.lock = threading.Lock()
        self.known: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError), open(self.path, encoding="utf-8") as f:
            for line in f:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    entry = json.loads(line)
                    self.known[entry["path"]] = entry  # an interrupted last line is ignored
        self.file: IO[str] | None = None

    def verified(self, wanted: Wanted, st: os.stat_result) -> bool:
        """True when this exact file (size, mtime) was verified as ``wanted`` before."""
        entry = self.known.get(wanted.path)
        return (
            entry is not None
            and entry.get("name") == wanted.name
            and (entry.get("size"), entry.get("mtime_ns")) == (st.st_size, st.st_mtime_ns)
            and wanted.sha256 in (None, entry.get("sha256"))
        )

    def record(self, wanted: Wanted, target: Path, sha256: str) -> None:
        st = target.stat()
        entry = {
            "name": wanted.name,
            "path": wanted.path,
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "sha256": sha256,
        }
        with self.lock:
            if self.file is None:
                self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
            self.file.write(json.dumps(entry) + "\n")
            self.file.flush()
            self.known[wanted.path] = entry

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


# --- one file ------------------------------------------------------------------------------------


class _Cancelled(Exception):
    """Raised from the progress callback to stop a transfer (its .part stays for a re-run)."""


@dataclass
class _Worker:
    dest: Path
    options: FetchOptions
    journal: Journal
    progress: Progress
    stop: threading.Event
    retries: int
    verify_existing: bool
    tries: dict[str, int] = field(default_factory=dict)

    def run(self, wanted: Wanted) -> Outcome:
        target = self.dest / wanted.path
        outcome = Outcome(name=wanted.name, path=str(target), status="cancelled")
        if self.stop.is_set():
            return outcome
        started = time.monotonic()
        try:
            if self.verify_existing and self._complete(wanted, target):
                outcome.status, outcome.size = "skipped", target.stat().st_size
                return outcome
            self._fetch(wanted, target, outcome)
        except _Cancelled:
            outcome.status = "cancelled"
        except (NdnError, OSError) as exc:
            outcome.status, outcome.error = "failed", _reason(exc)
        outcome.seconds = time.monotonic() - started
        return outcome

    def _complete(self, wanted: Wanted, target: Path) -> bool:
        try:
            st = target.stat()
        except FileNotFoundError:
            return False
        if self.journal.verified(wanted, st):
            return True
        if wanted.sha256 is None or (wanted.size is not None and st.st_size != wanted.size):
            return False  # nothing to check it against, or visibly different: fetch again
        digest = _sha256(target)
        if digest != wanted.sha256:
            return False
        self.journal.record(wanted, target, digest)
        return True

    def _fetch(self, wanted: Wanted, target: Path, outcome: Outcome) -> None:
        from ndnsci.ndn.consumer import fetch as ndn_fetch

        target.parent.mkdir(parents=True, exist_ok=True)
        delay = RETRY_DELAY
        while True:
            outcome.attempts += 1
            try:
                result = ndn_fetch(
                    wanted.name, str(target.parent), self.options, self._callback(wanted.name)
                )
                break
            except (FetchTimeout, TransportError, IntegrityError) as exc:
                # worth another try: a restarted forwarder or producer (the .part keeps what
                # arrived), a corrupt copy (then from scratch: every segment is suspect)
                if outcome.attempts > self.retries or self.stop.wait(delay):
                    raise exc
                if isinstance(exc, IntegrityError):
                    _discard_partial(target.parent / relative_path(wanted.name).rsplit("/", 1)[-1])
                delay *= 2
        produced = Path(result.path)
        if produced != target:
            os.replace(produced, target)  # a manifest may name the file differently
        self._check(wanted, target, result.sha256, result.size)
        self.journal.record(wanted, target, result.sha256)
        outcome.status, outcome.size = "done", result.size
        outcome.retransmissions = result.retransmissions
        outcome.resumed_segments = result.resumed_segments

    def _check(self, wanted: Wanted, target: Path, sha256: str, size: int) -> None:
        problem = None
        if wanted.sha256 is not None and sha256 != wanted.sha256:
            problem = f"SHA-256 {sha256} is not the catalog's {wanted.sha256}"
        elif wanted.size is not None and size != wanted.size:
            problem = f"{size:,} bytes, the catalog says {wanted.size:,}"
        if problem:
            target.unlink(missing_ok=True)
            raise IntegrityError(
                f"{problem}: the producer serves other content than was published (the file "
                f"changed since?); the file was removed"
            )

    def _callback(self, name: str) -> Any:
        def callback(done: int, total: int) -> None:
            if self.stop.is_set():
                raise _Cancelled
            self.progress.update(name, done, total)

        return callback


def _discard_partial(leaf: Path) -> None:
    for suffix in (".part", ".part.state"):
        leaf.with_name(leaf.name + suffix).unlink(missing_ok=True)


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, NdnError) else f"{type(exc).__name__}: {text}"


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


# --- many files ----------------------------------------------------------------------------------


def download(
    items: Iterable[Item],
    dest: str | os.PathLike[str] = ".",
    *,
    parallel: int = 4,
    resume: bool = True,
    progress: bool | str | Progress | None = True,
    layout: Layout = "drs",
    retries: int = 2,
    options: FetchOptions | None = None,
    stop: threading.Event | None = None,
) -> FetchReport:
    """Fetch many files over NDN into ``dest`` and report on each; never raises for one file.

    ``items``: search results, :class:`File` objects, manifest entries, or NDN names.
    ``layout="drs"`` puts each file at its name's path below ``dest``
    (``dest/CMIP5/output1/MOHC/...``); ``"flat"`` puts them all in ``dest``. With ``resume``
    (the default) complete files are skipped after a checksum check and partial ones continue.

    Example::

        >>> report = ndnsci.download(cat.search(model="HadCM3"), "data", parallel=8)
        >>> print(report.summary())
        9 fetched (1,234,567 bytes, 20.1 MB/s), 0 already complete, 0 failed in 0.9 s
        >>> [o.error for o in report.failed]
        []

    Raises:
        TransportError: no forwarder at NDN_CLIENT_TRANSPORT (nothing was fetched).
        Interrupted: Ctrl-C; the workers stopped, ``.report`` says what is done, a re-run
            continues (a KeyboardInterrupt).
        ValueError: a bad ``layout``, ``parallel`` or ``progress``.
    """
    from ndnsci.ndn.consumer import FetchOptions

    if parallel < 1:
        raise ValueError("parallel must be at least 1")
    wanted, refused = plan(items, layout)
    opts = dataclasses.replace(options or FetchOptions(), resume=resume)
    if wanted:
        _check_forwarder(opts.transport)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    reporter = make_progress(progress)
    journal = Journal(dest)
    worker = _Worker(
        dest, opts, journal, reporter, stop or threading.Event(), max(0, retries), resume
    )
    sizes = [w.size for w in wanted]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    reporter.start(len(wanted), total)
    started = time.monotonic()
    try:
        outcomes, interrupted = _run_all(worker, wanted, parallel)
    finally:
        reporter.close()
        journal.close()
    report = FetchReport(refused + outcomes, time.monotonic() - started, interrupted)
    if interrupted:
        raise Interrupted(report)
    return report


def _check_forwarder(transport: str | None) -> None:
    """Fail at once, not file by file after retries, when there is no forwarder."""
    from ndnsci.ndn.transport import Face

    Face(transport).close()


def _run_all(worker: _Worker, wanted: list[Wanted], parallel: int) -> tuple[list[Outcome], bool]:
    from concurrent.futures import ThreadPoolExecutor, as_completed

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="ndnsci-fetch")
    futures: dict[Future[Outcome], int] = {
        pool.submit(worker.run, w): i for i, w in enumerate(wanted)
    }
    outcomes: dict[int, Outcome] = {}
    interrupted = False
    try:
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
            worker.progress.end(outcomes[futures[future]])
    except KeyboardInterrupt:
        interrupted = True
        worker.stop.set()  # running transfers stop at their next progress tick
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for future, index in futures.items():
        if index not in outcomes:
            done = future.done() and not future.cancelled()
            outcomes[index] = future.result() if done else _not_started(wanted[index], worker)
    return [outcomes[i] for i in range(len(wanted))], interrupted or worker.stop.is_set()


def _not_started(wanted: Wanted, worker: _Worker) -> Outcome:
    return Outcome(name=wanted.name, path=str(worker.dest / wanted.path), status="cancelled")


def fetch(
    items: Iterable[Item] | Item,
    dest: str | os.PathLike[str] = ".",
    *,
    parallel: int = 4,
    resume: bool = True,
    progress: bool | str | Progress | None = True,
    layout: Layout = "drs",
    retries: int = 2,
    options: FetchOptions | None = None,
) -> list[Path]:
    """Fetch files over NDN into ``dest``; returns their local paths, each verified.

    ``items`` is a search's results, a list of :class:`File` or manifest entries, NDN names, or
    one of these. Complete files already in ``dest`` are kept (after a checksum check), partial
    ones continue. Each file's SHA-256 is checked against the publisher's signed metadata and
    against the catalog's record.

    Example::

        >>> cat = ndnsci.Catalog()
        >>> paths = ndnsci.fetch(cat.search(model="HadCM3", variable="tas"), "data")
        >>> paths[0]
        PosixPath('data/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/.../tas_...nc')

    Raises:
        DownloadError: some files failed (``.report`` has each reason); the others are in place.
        TransportError: no forwarder at NDN_CLIENT_TRANSPORT (nothing was fetched).
        Interrupted: Ctrl-C (a KeyboardInterrupt); a re-run continues.
    """
    report = download(
        _as_items(items), dest, parallel=parallel, resume=resume, progress=progress,
        layout=layout, retries=retries, options=options,
    )  # fmt: skip
    if not report.ok:
        raise DownloadError(report)
    return report.paths


def _as_items(items: Iterable[Item] | Item) -> Iterable[Item]:
    if isinstance(items, str | File | ManifestEntry | Wanted | Mapping | tuple):
        return [items]  # one file
    return items  # type: ignore[return-value]


# --- asyncio -------------------------------------------------------------------------------------


async def adownload(
    items: Iterable[Item] | AsyncSearchResults, dest: str | os.PathLike[str] = ".", **kwargs: Any
) -> FetchReport:
    """:func:`download` for asyncio: the transfers run in worker threads; cancelling the task
    stops them cleanly (partial files stay for a re-run)."""
    import asyncio

    from ndnsci._client import AsyncSearchResults

    if isinstance(items, AsyncSearchResults):
        items = await items.all()
    stop = threading.Event()
    loop = asyncio.get_running_loop()
    job = loop.run_in_executor(None, lambda: download(items, dest, stop=stop, **kwargs))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        stop.set()
        with contextlib.suppress(Interrupted):
            await job
        raise


async def afetch(
    items: Iterable[Item] | AsyncSearchResults | Item,
    dest: str | os.PathLike[str] = ".",
    **kwargs: Any,
) -> list[Path]:
    """:func:`fetch` for asyncio.

    Example::

        >>> async with ndnsci.AsyncCatalog() as cat:
        ...     paths = await ndnsci.afetch(await cat.search(model="HadCM3"), "data")

    Raises:
        DownloadError: some files failed; the others are in place.
    """
    from ndnsci._client import AsyncSearchResults

    many = items if isinstance(items, AsyncSearchResults) else _as_items(items)
    report = await adownload(many, dest, **kwargs)
    if not report.ok:
        raise DownloadError(report)
    return report.paths
