"""The fetch engine: every fetch (``ndnsci fetch NAME``, ``--query``, ``--manifest``,
:func:`fetch`, :func:`download`, :func:`open_dataset`) goes through it, whatever the transport.

Every item becomes a :class:`ManifestEntry` (name, path below the output, size and SHA-256 when
the catalog knows them). Then, for every file, in a pool of ``parallel`` workers:

1. Skip it when it is complete already (with ``resume``): the journal beside the output
   (``DEST/.ndnsci-fetch.jsonl``: name, path, size, mtime, sha256 of every verified file) says
   so, or its SHA-256 is the catalog's.
2. Lock ``<file>.part`` (``flock``): a second fetch of the same file, in this process or
   another, waits until the first is done (Ctrl-C ends the wait), then looks again.
3. Have the transport (:mod:`ndnsci.sdk.transports`; ``python`` by default) write the file into the
   ``.part``, resuming what an earlier run left when asked; transient failures (timeouts, a
   forwarder restart) are retried with exponential back-off, as pooch retries downloads.
4. Hash the bytes on disk (read back from the ``.part``: what the transport says is settled
   while the rest arrives, :class:`_DiskHash`) and compare them with the publisher's signed
   SHA-256 and the catalog's; only then rename the ``.part`` into place and record it in the
   journal. A file that does not match is never reported verified.

Progress goes to stderr (:mod:`ndnsci.sdk.progress`); Ctrl-C stops every transfer within ~0.1 s,
leaving resumable ``.part`` files (:class:`Interrupted`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any, Literal, TypeAlias, TypeGuard

from ndnsci.base import hashes
from ndnsci.base.environment import given_catalog
from ndnsci.errors import (
    DownloadError,
    FetchTimeout,
    IntegrityError,
    ManifestError,
    NdnError,
    QueryError,
    TransportError,
)
from ndnsci.sdk.manifest import ManifestEntry, parse_line, relative_path
from ndnsci.sdk.progress import make_progress
from ndnsci.sdk.report import FetchReport, Interrupted, Outcome
from ndnsci.sdk.transports import (
    DEFAULT,
    Cancelled,
    FetchOptions,
    Job,
    Received,
    get_transport,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from concurrent.futures import Future
    from pathlib import Path

    from ndnsci.sdk.client import AsyncSearchResults, File
    from ndnsci.sdk.progress import Progress
    from ndnsci.sdk.transports import Transport

    # what the engine takes for a file; File is named only for the type checker (the catalog
    # client is not imported by a fetch by name, DEVELOPERS.md "Start-up budget")
    Item: TypeAlias = (
        "File | ManifestEntry | Mapping[str, Any] | str | tuple[str, str] | ManifestError"
    )
    Layout: TypeAlias = Literal["drs", "flat"]
JOURNAL = ".ndnsci-fetch.jsonl"
RETRY_DELAY = 1.0  # seconds before the first retry; doubled each time
SEGMENT_DIGESTS = ("auto", "always")  # FetchOptions.segment_digests
LOCK_POLL = 0.1  # seconds between two looks at a .part another fetch holds
HASH_CHUNK = 1 << 20


# --- what to fetch -------------------------------------------------------------------------------


def plan(items: Iterable[Item], layout: Layout = "drs") -> list[ManifestEntry | Outcome]:
    """In the order given: each file to fetch, or the failure of an item that cannot be (a bad
    manifest line, a name that is not a file name, a second file for one path).

    Raises:
        ValueError: ``layout`` is neither ``drs`` nor ``flat``.
    """
    if layout not in ("drs", "flat"):
        raise ValueError(f"layout must be 'drs' or 'flat', not {layout!r}")
    planned: list[ManifestEntry | Outcome] = []
    by_path: dict[str, str] = {}
    for item in items:
        try:
            one = _entry(item)
        except (ManifestError, QueryError) as exc:
            planned.append(_refused(getattr(item, "name", str(item)), str(exc)))
            continue
        if one is None:
            continue
        if isinstance(one, Outcome):
            planned.append(one)
            continue
        if layout == "flat":
            one = one._replace(path=one.path.rsplit("/", 1)[-1])
        holder = by_path.get(one.path)
        if holder == one.name:
            continue  # the same file twice
        if holder is not None:
            reason = f"goes to {one.path}, as {holder} does: use the drs layout"
            planned.append(_refused(one.name, reason))
            continue
        by_path[one.path] = one.name
        planned.append(one)
    return planned


def looked_up(
    planned: list[ManifestEntry | Outcome], catalog: str | Literal[False] | None
) -> list[ManifestEntry | Outcome]:
    """``planned`` with the catalog's size and SHA-256 for each file given by name only, when a
    catalog is known (``catalog``, else ``$NDNSCI_CATALOG``; ``False``: none): a fetch by name
    is then checked against the catalog as a search's files are. A name the catalog does not
    hold keeps the publisher's signed SHA-256 alone (another site's file, a plain ``serve``).

    Raises:
        CatalogError: the catalog cannot be asked (nothing was fetched).
    """
    url = given_catalog() if catalog is None else catalog
    names = [p.name for p in planned if isinstance(p, ManifestEntry) and p.sha256 is None]
    if not url or not names:
        return planned
    from ndnsci.sdk.client import Catalog  # only with a catalog: not a plain fetch's start-up

    with Catalog(url) as known:
        answers = known.manifest(names)
    found = {
        name: entry
        for name, entry in zip(names, answers, strict=False)
        if isinstance(entry, ManifestEntry) and entry.sha256 is not None
    }
    return [
        p._replace(sha256=found[p.name].sha256, size=found[p.name].size)
        if isinstance(p, ManifestEntry) and p.sha256 is None and p.name in found
        else p
        for p in planned
    ]


def _refused(name: str, reason: str) -> Outcome:
    return Outcome(name=name, path="", status="failed", error=reason)


def _is_file(item: object) -> TypeGuard[File]:
    """Whether ``item`` is a search result (:class:`ndnsci.File`). Without the catalog client
    loaded there can be none: a fetch by name does not import it (~18 ms, DEVELOPERS.md
    "Start-up budget")."""
    client = sys.modules.get("ndnsci.sdk.client")
    return client is not None and isinstance(item, client.File)


def _entry(item: Item) -> ManifestEntry | Outcome | None:
    if isinstance(item, ManifestEntry):
        return item
    if isinstance(item, ManifestError):
        return _refused(f"line {item.line}" if item.line else "manifest", str(item))
    if isinstance(item, tuple):
        return _refused(item[0], f"the catalog says: {item[1]}")
    if isinstance(item, str):
        name = item.strip()
        return ManifestEntry(name, relative_path(_unversioned(name))) if name else None
    if _is_file(item):
        return ManifestEntry(item.name, item.path, item.size, item.sha256, item.filename)
    import json  # json is imported where it is used: a fetch by name needs it after its first byte

    mapping: Mapping[str, Any] = item  # type: ignore[assignment]  # what is left: a mapping
    return _entry(parse_line(json.dumps(dict(mapping)), 0))


def _unversioned(name: str) -> str:
    """A name without its trailing ``v=<n>`` (a versioned name lands where its file would)."""
    head, _, last = name.rstrip("/").rpartition("/")
    return head if head and last.startswith("v=") and last[2:].isdigit() else name


# --- paths, as strings ----------------------------------------------------------------------------


def _joined(*parts: str) -> str:
    """``str(pathlib.PurePosixPath(*parts))``: the paths the engine reports and opens, spelled as
    pathlib spells them, without importing it (with urllib.parse and ipaddress, ~16 M
    instructions before a fetch's first byte; DEVELOPERS.md "Start-up budget")."""
    root = ""
    names: list[str] = []
    for part in reversed(parts):
        if part.startswith("/"):
            stripped = part.lstrip("/")
            # POSIX leaves a leading "//" to the implementation: pathlib keeps it, as here
            root = "//" if len(part) - len(stripped) == 2 else "/"
            part = stripped  # noqa: PLW2901
        names[:0] = [name for name in part.split("/") if name and name != "."]
        if root:
            break
    return root + "/".join(names) or "."


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


# --- the journal beside the output ---------------------------------------------------------------


class Journal:
    """Files verified in ``DEST`` (name, path, size, mtime, sha256), one JSON line each.

    Read when a file is already at its path (:meth:`verified`), written by hand (:func:`_line`):
    a fetch of files not there yet imports no json, which imports re and enum (~20 M
    instructions, DEVELOPERS.md "Start-up budget")."""

    def __init__(self, dest: str) -> None:
        self.path = _joined(dest, JOURNAL)
        self.lock = threading.Lock()
        self._known: dict[str, dict[str, Any]] | None = None  # read on first use
        self.file: IO[str] | None = None

    @property
    def known(self) -> dict[str, dict[str, Any]]:
        """The journal's entries by path, the last line of a path winning."""
        with self.lock:
            if self._known is None:
                self._known = self._read()
            return self._known

    def _read(self) -> dict[str, dict[str, Any]]:
        known: dict[str, dict[str, Any]] = {}
        with contextlib.suppress(FileNotFoundError), open(self.path, encoding="utf-8") as f:
            import json

            for line in f:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    entry = json.loads(line)
                    known[entry["path"]] = entry  # an interrupted last line is ignored
        return known

    def verified(self, wanted: ManifestEntry, st: os.stat_result) -> str | None:
        """The SHA-256 this exact file (size, mtime) was verified with as ``wanted``, if it was."""
        entry = self.known.get(wanted.path)
        if (
            entry is not None
            and entry.get("name") == wanted.name
            and (entry.get("size"), entry.get("mtime_ns")) == (st.st_size, st.st_mtime_ns)
            and wanted.sha256 in (None, entry.get("sha256"))
        ):
            return str(entry.get("sha256"))
        return None

    def record(self, wanted: ManifestEntry, target: str, sha256: str) -> None:
        st = os.stat(target)
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
            self.file.write(_line(entry) + "\n")
            self.file.flush()
            if self._known is not None:  # else the line is read with the others
                self._known[wanted.path] = entry

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _line(entry: dict[str, Any]) -> str:
    """``json.dumps(entry)`` of a flat dict of strings and integers, without json (the journal's
    lines: a fetch by name imports no json; tested against json's)."""
    try:
        from _json import encode_basestring_ascii as quoted  # json.dumps's, in C
    except ImportError:  # pragma: no cover - an interpreter without json's C part
        quoted = None  # type: ignore[assignment]
    fields = []
    for key, value in entry.items():
        if quoted is not None and type(key) is str and type(value) is str:
            fields.append(f"{quoted(key)}: {quoted(value)}")
        elif quoted is not None and type(key) is str and type(value) is int:
            fields.append(f"{quoted(key)}: {int.__repr__(value)}")
        else:
            import json

            return json.dumps(entry)
    return "{" + ", ".join(fields) + "}"


# --- the .part file, locked ----------------------------------------------------------------------


class _Part:
    """``<file>.part`` (and the transport's ``.part.state``) under an exclusive ``flock``.

    Only the holder writes, hashes and renames it; the lock goes with the open file, so a
    crashed holder never leaves it taken.
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self.path = target + ".part"
        self.state = target + ".part.state"
        self.fd = -1

    def lock(self, stop: threading.Event, waiting: Callable[[], None]) -> None:
        """Take the lock, waiting for another holder; raises Cancelled once ``stop`` is set."""
        import fcntl

        told = False
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if not told:
                    waiting()
                    told = True
                if stop.wait(LOCK_POLL):
                    raise Cancelled from None
                continue
            except BaseException:
                os.close(fd)
                raise
            self.fd = fd
            if self._still_ours():
                return
            self.close()  # renamed into place or removed by the holder we waited for: again

    def _still_ours(self) -> bool:
        """True while ``self.path`` is the file we hold (not replaced or removed)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(self.fd)
        return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)

    def has_bytes(self) -> bool:
        return os.fstat(self.fd).st_size > 0

    def reset(self) -> None:
        """Start from nothing: an empty ``.part``, no state."""
        if self.has_bytes():
            # only then: on ext4 a truncation to zero makes close() flush the whole file it was
            # rewritten with (auto_da_alloc), 0.5 s per 200 MB on the fetch's clock
            os.ftruncate(self.fd, 0)
        _unlink(self.state)

    def follow(self) -> _DiskHash:
        """A SHA-256 of the bytes on disk that a transport can let run while it writes."""
        return _DiskHash(self.fd, self.path)

    def land(self) -> None:
        """Rename the verified ``.part`` into place."""
        if not self._still_ours():
            raise IntegrityError(f"{self.path} was replaced while it was being verified")
        os.replace(self.path, self.target)
        _unlink(self.state)

    def discard(self) -> None:
        _unlink(self.path)
        _unlink(self.state)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the lock
            self.fd = -1

    def release(self) -> None:
        """Unlock; a ``.part`` with nothing in it (and no state) is not left behind."""
        empty = self.fd >= 0 and not self.has_bytes() and not os.path.exists(self.state)
        if empty and self._still_ours():
            _unlink(self.path)
        self.close()


class _DiskHash:
    """The SHA-256 of the bytes on disk in ``<file>.part``, read back from the file.

    A transport may call :meth:`settled` (``Job.settled``) with N once the first N bytes of the
    ``.part`` are written for good; a thread then reads them back and hashes them while the
    rest arrives (on two cores a 192 MiB file's hash, ~0.2 s, no longer follows the transfer).
    What the transport never says settled is read and hashed by :meth:`finish`, after the
    transfer, as every byte was before. Either way the digest is of what the file holds, read
    under the engine's lock: a fetch that waits for the lock never writes into it.
    """

    FOLLOW_FROM = 4 << 20  # below this nothing is hashed early (no thread for a small file)

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path
        self.digest: Any = None
        self.hashed = 0  # bytes read and hashed, from the start
        self.ready = 0  # bytes the transport says are settled
        self.wake = threading.Condition()
        self.closed = False
        self.thread: threading.Thread | None = None
        self.error: OSError | None = None

    def settled(self, offset: int) -> None:
        """The transport's thread: every byte before ``offset`` is written and stays as it is."""
        if offset < self.ready + HASH_CHUNK or offset < self.FOLLOW_FROM:
            return
        with self.wake:
            self.ready = offset
            if self.thread is None and not self.closed:
                self.digest = hashes.sha256(offset)()  # OpenSSL's: it releases the GIL
                self.thread = threading.Thread(target=self._run, name="ndnsci-hash", daemon=True)
                self.thread.start()
            self.wake.notify()

    def _run(self) -> None:
        try:
            while True:
                with self.wake:
                    while not self.closed and self.ready - self.hashed < HASH_CHUNK:
                        self.wake.wait()
                    if self.closed:
                        return
                    upto = self.ready
                self._hash(upto, stoppable=True)
        except OSError as exc:  # finish() raises it
            self.error = exc

    def _hash(self, upto: int, stoppable: bool = False) -> None:
        while self.hashed < upto and not (stoppable and self.closed):
            chunk = os.pread(self.fd, min(HASH_CHUNK, upto - self.hashed), self.hashed)
            if not chunk:
                return  # shorter than said: finish() compares the size
            self.digest.update(chunk)
            self.hashed += len(chunk)

    def close(self) -> None:
        """Stop the thread (within one chunk's read); the digest so far stays valid."""
        with self.wake:
            self.closed = True
            self.wake.notify()
        if self.thread is not None:
            self.thread.join()

    def finish(self, size: int) -> str:
        """The SHA-256 of the whole ``.part``, which must hold ``size`` bytes."""
        self.close()
        if self.error is not None:
            raise self.error
        on_disk = os.fstat(self.fd).st_size
        if on_disk != size:
            raise IntegrityError(f"{self.path} holds {on_disk:,} bytes, not the file's {size:,}")
        if self.digest is None:
            self.digest = hashes.sha256(size)()
        self._hash(size)
        if self.hashed != size:
            raise IntegrityError(
                f"{self.path} could not be read back whole ({self.hashed:,} of {size:,} bytes)"
            )
        return str(self.digest.hexdigest())


# --- one file ------------------------------------------------------------------------------------


class _Engine:
    def __init__(
        self,
        *,
        dest: str,
        transport: Transport,
        options: FetchOptions,
        journal: Journal,
        progress: Progress,
        stop: threading.Event,
        retries: int,
        resume: bool,
    ) -> None:
        self.dest = dest
        self.transport = transport
        self.options = options
        self.journal = journal
        self.progress = progress
        self.stop = stop
        self.retries = retries
        self.resume = resume

    def run(self, wanted: ManifestEntry) -> Outcome:
        """One file's outcome; never raises for the file (but KeyboardInterrupt)."""
        outcome = Outcome(
            name=wanted.name, path=_joined(self.dest, wanted.path), status="cancelled"
        )
        if self.stop.is_set():
            return outcome
        started = time.monotonic()
        try:
            self.land(wanted, outcome)
        except Cancelled:
            outcome.status = "cancelled"
        except (NdnError, OSError) as exc:
            outcome.status, outcome.error = "failed", _reason(exc)
        outcome.seconds = time.monotonic() - started
        return outcome

    def land(self, wanted: ManifestEntry, outcome: Outcome) -> None:
        """Put one file in place, verified (``outcome`` says how); raises what went wrong."""
        target = _joined(self.dest, wanted.path)
        if self.resume and self._complete(wanted, target, outcome):
            return
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        part = _Part(target)
        part.lock(self.stop, lambda: self.progress.waiting(wanted.name, str(target)))
        try:
            if self.resume and self._complete(wanted, target, outcome):
                return
            received, digest = self._receive(wanted, part, outcome)
            self._check_catalog(wanted, digest, received.size, part)
            part.land()
            self.journal.record(wanted, target, digest)  # before a waiting fetch looks
        finally:
            part.release()
        _fill(outcome, received, digest, self.transport)
        known = received.published_sha256 or wanted.sha256
        outcome.checksum = "verified" if known else "unavailable"
        outcome.status = "done"

    def _complete(self, wanted: ManifestEntry, target: str, outcome: Outcome) -> bool:
        try:
            st = os.stat(target)
        except FileNotFoundError:
            return False
        digest = self.journal.verified(wanted, st)
        if digest is None:
            if wanted.sha256 is None or (wanted.size is not None and st.st_size != wanted.size):
                return False  # nothing to check it against, or visibly different: fetch again
            digest = _sha256(target)
            if digest != wanted.sha256:
                return False
            self.journal.record(wanted, target, digest)
        outcome.status, outcome.size = "skipped", st.st_size
        outcome.sha256, outcome.checksum = digest, "verified"
        return True

    def _receive(
        self, wanted: ManifestEntry, part: _Part, outcome: Outcome
    ) -> tuple[Received, str]:
        """The transport's report and the SHA-256 on disk, retried with back-off."""
        resume = self.resume and part.has_bytes()
        if not resume:
            part.reset()
        delay = RETRY_DELAY
        options, checked_again = self.options, None
        while True:
            outcome.attempts += 1
            disk = part.follow()
            job = Job(
                wanted.name, str(part.path), str(part.state), resume, options,
                self._progress(wanted.name), self.stop, disk.settled,
            )  # fmt: skip
            received = None
            try:
                try:
                    received = self.transport.receive(job)
                    digest = disk.finish(received.size)
                finally:
                    disk.close()
                _check_published(wanted.name, digest, received)
                if checked_again:
                    received.warnings.append(checked_again)
                return received, digest
            except (FetchTimeout, TransportError, IntegrityError) as exc:
                # worth another try: a restarted forwarder or producer (the .part keeps what
                # arrived), a corrupt copy (then from nothing: every segment is suspect)
                resume = not isinstance(exc, IntegrityError)
                if not resume and received is not None and received.digests_deferred:
                    # the segments' digests were left to the file's SHA-256, which failed:
                    # again at once, whatever the retries, every segment checked as it arrives
                    # (a bad one is refused and asked for again: the fetch can still succeed)
                    options = options._replace(segment_digests="always")
                    checked_again = (
                        "the file's SHA-256 did not match the published one: fetched again "
                        "from nothing, checking every segment's digest"
                    )
                else:
                    if outcome.attempts > self.retries:
                        raise
                    if self.stop.wait(delay):
                        raise Cancelled from exc
                    delay *= 2
                if not resume:
                    part.reset()

    def _check_catalog(self, wanted: ManifestEntry, digest: str, size: int, part: _Part) -> None:
        problem = None
        if wanted.sha256 is not None and digest != wanted.sha256:
            problem = f"SHA-256 {digest} is not the catalog's {wanted.sha256}"
        elif wanted.size is not None and size != wanted.size:
            problem = f"{size:,} bytes, the catalog says {wanted.size:,}"
        if problem:
            part.discard()
            raise IntegrityError(
                f"{problem}: the producer serves other content than was published (the file "
                f"changed since?); the file was removed"
            )

    def _progress(self, name: str) -> Callable[[int, int], None]:
        return lambda done, total: self.progress.update(name, done, total)


def _check_published(name: str, digest: str, received: Received) -> None:
    published = received.published_sha256
    if published is not None and published != digest:
        raise IntegrityError(
            f"{name}: SHA-256 {digest} does not match the published {published}; "
            f"the .part file is kept"
        )


def _fill(outcome: Outcome, received: Received, digest: str, transport: object = None) -> None:
    outcome.size, outcome.sha256, outcome.signer = received.size, digest, received.signer
    outcome.engine = received.engine or getattr(transport, "name", "")
    for counter in (
        "segments", "retransmissions", "timeouts", "nacks", "rejected", "congestion_marks",
        "resumed_segments",
    ):  # fmt: skip
        setattr(outcome, counter, getattr(received, counter))
    outcome.warnings = list(received.warnings)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, NdnError):
        return str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return f"{type(exc).__name__}: {exc}"


def _sha256(path: str) -> str:
    import hashlib  # a file already complete: the fetch's first byte is not waiting

    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


# --- many files ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _engine(
    dest: str | os.PathLike[str],
    *,
    progress: bool | str | Progress | None,
    retries: int,
    resume: bool,
    options: FetchOptions | None,
    transport: str,
    stop: threading.Event | None,
    check: bool,
) -> Iterator[_Engine]:
    plane = get_transport(transport)
    opts = options or FetchOptions()
    if opts.segment_digests not in SEGMENT_DIGESTS:
        raise ValueError(
            f"segment_digests={opts.segment_digests!r}: {' or '.join(map(repr, SEGMENT_DIGESTS))}"
        )
    out = _joined(os.fspath(dest))
    os.makedirs(out, exist_ok=True)
    if check:
        plane.check(opts)  # no forwarder: fail at once, not file by file after retries
    journal = Journal(out)
    reporter = make_progress(progress)
    engine = _Engine(
        dest=out, transport=plane, options=opts, journal=journal, progress=reporter,
        stop=stop or threading.Event(), retries=max(0, retries), resume=resume,
    )  # fmt: skip
    try:
        yield engine
    finally:
        reporter.close()
        journal.close()


def download(
    items: Iterable[Item],
    dest: str | os.PathLike[str] = ".",
    *,
    parallel: int = 4,
    resume: bool = True,
    progress: bool | str | Progress | None = None,
    layout: Layout = "drs",
    retries: int = 2,
    options: FetchOptions | None = None,
    transport: str = DEFAULT,
    stop: threading.Event | None = None,
    catalog: str | Literal[False] | None = None,
) -> FetchReport:
    """Fetch many files over NDN into ``dest`` and report on each; never raises for one file.

    ``items``: search results, :class:`File` objects, manifest entries, or NDN names.
    ``layout="drs"`` puts each file at its name's path below ``dest``
    (``dest/CMIP5/output1/MOHC/...``); ``"flat"`` puts them all in ``dest``. With ``resume``
    (the default) complete files are skipped after a checksum check and partial ones continue.
    ``progress``: bars on stderr when it is a terminal (the default), ``True`` to ask for them,
    ``"text"``, ``False``, or your :class:`Progress`. ``transport``: the data plane
    (:func:`ndnsci.sdk.transports.list_transports`). ``catalog``: the catalog URL whose size and
    SHA-256 a file given by name must match (default ``$NDNSCI_CATALOG`` when set; ``False``:
    the publisher's signed SHA-256 alone).

    Example::

        >>> report = ndnsci.download(cat.search(model="HadCM3"), "data", parallel=8)
        >>> print(report.summary())
        9 fetched (1,234,567 bytes, 20.1 MB/s), 0 already complete, 0 failed in 0.9 s
        >>> [o.error for o in report.failed]
        []

    Raises:
        TransportError: no forwarder at NDN_CLIENT_TRANSPORT (nothing was fetched).
        OSError: ``dest`` cannot be created.
        Interrupted: Ctrl-C; the workers stopped, ``.report`` says what is done, a re-run
            continues (a KeyboardInterrupt).
        CatalogError: ``catalog`` is known and cannot be asked (nothing was fetched).
        ValueError: a bad ``layout``, ``parallel``, ``progress`` or ``transport``.
    """
    if parallel < 1:
        raise ValueError("parallel must be at least 1")
    planned = looked_up(plan(items, layout), catalog)
    wanted = [p for p in planned if isinstance(p, ManifestEntry)]
    with _engine(
        dest, progress=progress, retries=retries, resume=resume, options=options,
        transport=transport, stop=stop, check=bool(wanted),
    ) as engine:  # fmt: skip
        sizes = [w.size for w in wanted]
        known = all(s is not None for s in sizes)
        engine.progress.start(len(wanted), sum(s or 0 for s in sizes) if known else None)
        started = time.monotonic()
        outcomes, interrupted = _run_all(engine, wanted, parallel)
    fetched = iter(outcomes)
    in_order = [next(fetched) if isinstance(p, ManifestEntry) else p for p in planned]
    report = FetchReport(in_order, time.monotonic() - started, interrupted)
    if interrupted:
        raise Interrupted(report)
    return report


def _run_all(
    engine: _Engine, wanted: list[ManifestEntry], parallel: int
) -> tuple[list[Outcome], bool]:
    if len(wanted) == 1:
        return _run_one(engine, wanted[0])
    from concurrent.futures import ThreadPoolExecutor, as_completed

    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="ndnsci-fetch")
    futures: dict[Future[Outcome], int] = {}
    outcomes: dict[int, Outcome] = {}
    interrupted = False
    try:
        for index, one in enumerate(wanted):
            futures[pool.submit(engine.run, one)] = index
        for future in as_completed(futures):
            outcomes[futures[future]] = future.result()
            engine.progress.end(outcomes[futures[future]])
    except KeyboardInterrupt:
        interrupted = True
        engine.stop.set()  # running transfers stop at their next progress tick
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for future, index in futures.items():
        if index not in outcomes and future.done() and not future.cancelled():
            outcomes[index] = future.result()
    every = [outcomes.get(i) or _not_started(w, engine) for i, w in enumerate(wanted)]
    return every, interrupted or engine.stop.is_set()


def _run_one(engine: _Engine, wanted: ManifestEntry) -> tuple[list[Outcome], bool]:
    """One file, in one worker thread as in the pool (Ctrl-C reaches this thread, which stops
    the worker), without the pool: concurrent.futures (and the logging it imports) costs a fetch
    ~10 ms before its first byte (DEVELOPERS.md "Start-up budget")."""
    ended: list[Outcome] = []
    failed: list[BaseException] = []
    finished = threading.Event()

    def work() -> None:
        try:
            ended.append(engine.run(wanted))
        except BaseException as exc:  # re-raised here, as Future.result() does
            failed.append(exc)
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="ndnsci-fetch_0")
    interrupted = False
    worker.start()
    # waited for on an Event, not by join(): a join interrupted by Ctrl-C marks the thread as
    # stopped while it runs (CPython 3.11), and the process would exit under its state flush
    try:
        finished.wait()
    except KeyboardInterrupt:
        interrupted = True
        engine.stop.set()  # the transfer stops at its next progress tick
        finished.wait()
    worker.join()
    if failed:
        raise failed[0]
    if ended and not interrupted:
        engine.progress.end(ended[0])
    every = ended or [_not_started(wanted, engine)]
    return every, interrupted or engine.stop.is_set()


def _not_started(wanted: ManifestEntry, engine: _Engine) -> Outcome:
    return Outcome(name=wanted.name, path=_joined(engine.dest, wanted.path), status="cancelled")


def fetch_file(
    item: Item,
    dest: str | os.PathLike[str] = ".",
    *,
    layout: Layout = "flat",
    resume: bool = False,
    retries: int = 0,
    progress: bool | str | Progress | None = False,
    options: FetchOptions | None = None,
    transport: str = DEFAULT,
    stop: threading.Event | None = None,
    catalog: str | Literal[False] | None = None,
) -> Outcome:
    """One file through the engine in the caller's thread, raising on failure (what each worker
    of :func:`download` does, without the pool; the data-plane tests use it).

    Raises:
        NdnError: the file could not be fetched or verified (NotFoundError, IntegrityError, ...).
        ManifestError: ``item`` is not a file to fetch.
        OSError: the file cannot be written.
    """
    planned = looked_up(plan([item], layout), catalog)
    wanted = planned[0] if planned else None
    if not isinstance(wanted, ManifestEntry):
        raise ManifestError((wanted.error if wanted else None) or "nothing to fetch")
    with _engine(
        dest, progress=progress, retries=retries, resume=resume, options=options,
        transport=transport, stop=stop, check=False,
    ) as engine:  # fmt: skip
        outcome = Outcome(name=wanted.name, path=_joined(engine.dest, wanted.path), status="")
        started = time.monotonic()
        engine.land(wanted, outcome)
        outcome.seconds = time.monotonic() - started
    return outcome


def fetch(
    items: Iterable[Item] | Item,
    dest: str | os.PathLike[str] = ".",
    *,
    parallel: int = 4,
    resume: bool = True,
    progress: bool | str | Progress | None = None,
    layout: Layout = "drs",
    retries: int = 2,
    options: FetchOptions | None = None,
    transport: str = DEFAULT,
    catalog: str | Literal[False] | None = None,
) -> list[Path]:
    """Fetch files over NDN into ``dest``; returns their local paths, each verified.

    ``items`` is a search's results, a list of :class:`File` or manifest entries, NDN names, or
    one of these. Complete files already in ``dest`` are kept (after a checksum check), partial
    ones continue. Each file's SHA-256 is computed from the bytes on disk and checked against
    the publisher's signed metadata and against the catalog's record (for a name, the record of
    ``catalog``, default ``$NDNSCI_CATALOG`` when set). Progress bars go to
    stderr, and only when it is a terminal (``progress=True`` asks for them anyway).

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
        layout=layout, retries=retries, options=options, transport=transport, catalog=catalog,
    )  # fmt: skip
    if not report.ok:
        raise DownloadError(report)
    return report.paths


def _as_items(items: Iterable[Item] | Item) -> Iterable[Item]:
    if isinstance(items, str | Mapping | tuple) or _is_file(items):  # a ManifestEntry is a tuple
        return [items]  # one file
    return items  # type: ignore[return-value]


# --- asyncio -------------------------------------------------------------------------------------


async def adownload(
    items: Iterable[Item] | AsyncSearchResults, dest: str | os.PathLike[str] = ".", **kwargs: Any
) -> FetchReport:
    """:func:`download` for asyncio: the transfers run in worker threads; cancelling the task
    stops them cleanly (partial files stay for a re-run)."""
    import asyncio

    from ndnsci.sdk.client import AsyncSearchResults

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
    from ndnsci.sdk.client import AsyncSearchResults

    many = items if isinstance(items, AsyncSearchResults) else _as_items(items)
    report = await adownload(many, dest, **kwargs)
    if not report.ok:
        raise DownloadError(report)
    return report.paths
