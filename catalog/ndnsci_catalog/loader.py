"""Bulk loads of JSON-lines records (``ndnsci publish --records``), prepared by other processes.

One batch of lines is one transaction. Preparing a batch (JSON decoding, record validation,
:func:`ndnsci_catalog.ingest.prepare`: free-text documents, JSON columns, tree counts) is pure
Python that needs no database and no lock, more CPU than writing it, so worker processes
prepare the next batches while this one writes the current one, in input order: on two cores a
load runs at about the speed of the two halves shared out instead of their sum. A prepared batch
is plain tuples and buffers (:class:`ndnsci_catalog.ingest.Prepared`), cheap to pickle.

Workers are started only for inputs of more than one batch, by ``fork`` on Linux (no re-import
of the caller's main module, which may be a script without a ``__main__`` guard; a child never
touches the inherited database connection and leaves by ``os._exit``), else by ``spawn``. Each
reads requests from a pipe whose other end only this process holds and exits when that closes,
so a killed publisher leaves no worker behind. Crash safety is the publisher's: each batch is
committed whole or not at all.

A prepared batch crosses back as :mod:`marshal` bytes (``Prepared.dumps``), not a pickle:
pickling memoises each of its million objects, marshal does not (half the cost on both sides).
A worker prepares with the garbage collector off: a batch makes millions of objects and no
reference cycles, and the collector would walk them again and again (~12% of the work).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import marshal
import mmap
import multiprocessing
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Any

from ndnsci_catalog.ingest import WIRE_VERSION, Prepared, PublishResult, prepare, publish
from ndnsci_catalog.records import parse_lines, record_from_line


@dataclass(slots=True)
class Batch:
    """A prepared batch of lines and what was refused in it, in line order."""

    prepared: Prepared
    #: records accepted (a name given twice counts twice; the first one is published)
    accepted: int
    #: (source, reason): the line's input (or ``line N``) and why it was not published
    refused: list[tuple[str, str]] = field(default_factory=list)

    def dumps(self) -> bytes:
        """The batch as marshal bytes (:meth:`Prepared.dumps`), to cross between processes."""
        return marshal.dumps((self.prepared.to_wire(), self.accepted, self.refused), WIRE_VERSION)

    @classmethod
    def loads(cls, data: bytes) -> Batch:
        wire, accepted, refused = marshal.loads(data)
        return cls(Prepared.from_wire(wire), accepted, refused)


def prepare_lines(lines: Sequence[str | bytes], first: int, replace: bool = False) -> Batch:
    """Parse, validate and prepare JSON lines (``first`` is the number of the first one)."""
    records, numbers, sources = [], [], []
    refused: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=first):
        parsed = record_from_line(line, number)
        if parsed is None:
            continue
        source, record = parsed
        if isinstance(record, str):
            refused.append((source, record))
            continue
        records.append(record)
        numbers.append(number)
        sources.append(source)
    prepared = prepare(records, lines=numbers, sources=sources, replace=replace)
    return Batch(prepared, len(records), refused)


@dataclass(slots=True)
class RequestBatch:
    """A ``POST /publish`` body: prepared, or every line refused (line number, why)."""

    prepared: Prepared | None
    refused: list[tuple[int, str]]

    def dumps(self) -> bytes:
        """The batch as marshal bytes (:meth:`Prepared.dumps`), to cross between processes."""
        wire = None if self.prepared is None else self.prepared.to_wire()
        return marshal.dumps((wire, self.refused), WIRE_VERSION)

    @classmethod
    def loads(cls, data: bytes | mmap.mmap) -> RequestBatch:
        wire, refused = marshal.loads(data)
        return cls(None if wire is None else Prepared.from_wire(wire), refused)


def more_records_than(body: bytes, limit: int) -> bool:
    """Does a JSON-lines body hold more than ``limit`` records (non-blank lines)?"""
    # the lines that may hold something: a body ending in a newline has no line after it (a
    # full batch from Catalog.publish, `limit` lines, is then answered without a split)
    lines = body.count(b"\n") + (not body.endswith(b"\n"))
    if lines <= limit:  # the usual answer, without a list of the lines
        return False
    if lines < 10_000_000:  # any body under the byte limit
        return sum(1 for line in body.split(b"\n") if line.strip()) > limit
    return True


def prepare_request(body: bytes, replace: bool) -> RequestBatch:
    """A publish request's body, all lines or none: every bad line is reported at once."""
    parsed = parse_lines(body.split(b"\n"))
    if parsed.refused:
        return RequestBatch(None, parsed.refused)
    return RequestBatch(prepare(parsed.records, lines=parsed.lines, replace=replace), [])


def prepare_request_dumped(body: bytes, replace: bool) -> bytes:
    """:func:`prepare_request` in a preparing process: the collector off (a batch makes no
    reference cycles), the answer as marshal bytes (:meth:`RequestBatch.dumps`)."""
    with _collector_off():
        return prepare_request(body, replace).dumps()


@contextmanager
def _collector_off() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class RequestPreparer:
    """Prepares the publish requests of a catalog server: big ones in ``workers`` other
    processes, so a request is prepared while the one before it is written (a publisher
    keeps two in flight: ``Catalog.publish``), small ones in a thread.

    The processes are spawned (the server has threads: no fork) by :meth:`warm` when the server
    starts, else on the first big request, and stopped by :meth:`close`; a pool that broke (a
    killed worker) is replaced. A body and its prepared batch cross between the processes as
    files in a private folder on a memory file system (``/dev/shm``; see :class:`_Exchange`),
    not through the pool's pipes: pickling them through a pipe cost the server ~4 µs per
    record of the work it shares a core with.
    """

    #: bodies from this size on go to a worker process: below, pickling costs more than it saves
    INLINE_BYTES = 1 << 20

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._folder: str | None = None
        self._removal: weakref.finalize[Any, Any] | None = None

    async def prepare(self, body: bytes, replace: bool) -> RequestBatch:
        loop = asyncio.get_running_loop()
        if self.workers <= 0 or len(body) < self.INLINE_BYTES:
            return await loop.run_in_executor(None, prepare_request, body, replace)
        pool = self._pool or self._start()
        exchange = _Exchange(self._folder or self._make_folder())
        try:
            await loop.run_in_executor(None, exchange.put, body)
            try:
                await loop.run_in_executor(
                    pool, prepare_request_file, exchange.body, exchange.answer, replace
                )
            except BrokenProcessPool:
                self.close()
                return await loop.run_in_executor(None, prepare_request, body, replace)
            # read in a thread: a batch is ~0.1 s of work the event loop must not wait for
            return await loop.run_in_executor(None, exchange.take)
        finally:
            exchange.remove()

    def warm(self) -> None:
        """Start the worker processes now, so the first publish does not wait for them: a
        spawned interpreter importing the preparing code is ~0.6 s of CPU, a third of the time
        of a 20,000-record publish. An idle worker holds ~60 MB."""
        if self.workers > 0 and self._pool is None:
            pool = self._start()
            try:
                for _ in range(self.workers):
                    pool.submit(_ready)
            except BaseException:  # e.g. no process could be made: the first request retries
                self.close()
                raise

    def _start(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(
            self.workers, mp_context=context, initializer=_exit_with, initargs=(os.getpid(),)
        )
        return self._pool

    def _make_folder(self) -> str:
        base = SCRATCH_BASE if os.access(SCRATCH_BASE, os.W_OK) else tempfile.gettempdir()
        _remove_stale_folders(base)
        self._folder = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=base)
        # removed by close(), else when the preparer is collected or the process exits (an app
        # never shut down: a test's)
        self._removal = weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)
        return self._folder

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._removal is not None:
            self._removal()
            self._folder = self._removal = None


def _exit_with(server: int) -> None:
    """In a preparing process: exit when the server that started it is gone. A server that is
    SIGKILLed cannot stop its pool, and the worker would wait on its queue forever (and keep
    multiprocessing's resource tracker alive with it). A thread, not ``PR_SET_PDEATHSIG``:
    that signal follows the thread that spawned the worker, a thread pool's, which may end
    long before the server does."""

    def watch() -> None:
        while os.getppid() == server:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-the-server", daemon=True).start()


def _ready() -> None:
    """Nothing: a first task makes the pool spawn a worker, which imports this module."""


#: where the exchange folders go (a memory file system on Linux), else the temporary folder
SCRATCH_BASE = "/dev/shm"
#: an exchange folder's name: this prefix, the server's process id, a random part
SCRATCH_PREFIX = "ndnsci-publish-"


def _remove_stale_folders(base: str) -> None:
    """Exchange folders of servers that are gone (killed before they could remove theirs)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        pid = name[len(SCRATCH_PREFIX) :].partition("-")[0]
        if name.startswith(SCRATCH_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


class _Exchange:
    """One request's body and prepared batch, as two files of a folder only this server
    writes (mode 0700): the server writes the body, its preparing process reads it and writes
    the batch (:func:`prepare_request_file`), the server maps the batch and reads it in place.
    Both are removed as soon as the request has its batch, or fails."""

    def __init__(self, folder: str) -> None:
        stem = os.path.join(folder, secrets.token_hex(8))
        self.body = stem + ".body"
        self.answer = stem + ".batch"

    def put(self, body: bytes) -> None:
        with open(self.body, "xb") as file:
            file.write(body)

    def take(self) -> RequestBatch:
        # the batch read where it lies (no copy); the collector off as in the worker: a batch
        # is a million objects and no cycles
        with (
            open(self.answer, "rb") as file,
            mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped,
            _collector_off(),
        ):
            return RequestBatch.loads(mapped)

    def remove(self) -> None:
        for path in (self.body, self.answer):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def prepare_request_file(body_path: str, answer_path: str, replace: bool) -> None:
    """:func:`prepare_request_dumped` in a preparing process, from and to files (the body is
    removed once read)."""
    with open(body_path, "rb") as file:
        body = file.read()
    os.unlink(body_path)
    answer = prepare_request_dumped(body, replace)
    del body
    with open(answer_path, "xb") as file:
        file.write(answer)


def load(
    sessions: Callable[[], Any],
    lines: Iterable[str] | Iterable[bytes],
    *,
    batch: int,
    workers: int = 1,
    done: Callable[[Batch, PublishResult], None] | None = None,
    replace: bool = False,
) -> PublishResult:
    """Publish JSON lines, ``batch`` lines per transaction, prepared by ``workers`` processes
    (0: in this one); ``done`` is told of each batch after its commit. ``sessions`` makes a
    :class:`sqlalchemy.orm.Session`. ``lines`` are those of a text or binary file (each ends
    with its newline)."""
    with _collector_off():  # a batch makes millions of objects and no reference cycles
        return _load(sessions, lines, batch, workers, done, replace=replace)


def _load(
    sessions: Callable[[], Any],
    lines: Iterable[str] | Iterable[bytes],
    batch: int,
    workers: int,
    done: Callable[[Batch, PublishResult], None] | None,
    *,
    replace: bool,
) -> PublishResult:
    total = PublishResult()
    chunks = _chunks(lines, batch)
    ahead = list(islice(chunks, max(workers, 2)))  # one batch for each worker, at least two
    if workers <= 0 or len(ahead) <= 1:  # one batch: not worth a second process
        for chunk in chain(ahead, chunks):
            _write(sessions, prepare_lines(*chunk, replace=replace), total, done)
        return total
    # batch i is prepared by worker i % n, at most one request per worker in flight; the
    # answers are written in order, while the workers prepare the following batches
    pool: list[_Worker] = []
    for _ in range(min(workers, len(ahead))):
        pool.append(_Worker([w.conn for w in pool]))
    try:
        pending = 0
        for worker, chunk in zip(pool, ahead, strict=False):
            worker.submit(*chunk, replace)
            pending += 1
        queued = ahead[len(pool) :]
        turn = 0
        while pending:
            worker = pool[turn % len(pool)]
            prepared = worker.result()
            pending -= 1
            following = queued.pop(0) if queued else next(chunks, None)
            if following is not None:
                worker.submit(*following, replace)
                pending += 1
            _write(sessions, prepared, total, done)
            turn += 1
    finally:
        for worker in pool:
            worker.close()
    return total


def _chunks(lines: Iterable[str] | Iterable[bytes], size: int) -> Iterator[tuple[list[Any], int]]:
    iterator = iter(lines)
    first = 1
    while chunk := list(islice(iterator, size)):
        yield chunk, first
        first += len(chunk)


def _write(
    sessions: Callable[[], Any],
    batch: Batch,
    total: PublishResult,
    done: Callable[[Batch, PublishResult], None] | None,
) -> None:
    with sessions() as session:
        result = publish(session, batch.prepared)
        session.commit()
    total.add(result)
    if done is not None:
        done(batch, result)


class _Worker:
    """:func:`prepare_lines` in a child process, one request at a time.

    One request is in flight at most: the child's answer (tens of MB) may fill the pipe only
    while this process is not itself sending.
    """

    def __init__(self, siblings: list[Any]) -> None:
        context: Any = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.conn, child = context.Pipe()
        # a forked child closes its copies of this end and of the earlier workers' ends first:
        # a worker reads EOF only once no process but this one held its pipe's other end
        inherited = [self.conn, *siblings] if context.get_start_method() == "fork" else []
        self.process = context.Process(
            target=_serve, args=(child, inherited), name="ndnsci-publish-prepare", daemon=True
        )
        self.process.start()
        child.close()

    def close(self) -> None:
        self.conn.close()  # the child reads EOF and exits
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()

    def submit(self, lines: list[Any], first: int, replace: bool) -> None:
        # one string instead of a list of them: a single copy through the pipe; each line
        # holds exactly one newline, at its end (the last one may have none)
        joined = (b"" if lines and isinstance(lines[0], bytes) else "").join(lines)
        self.conn.send((joined, first, replace))

    def result(self) -> Batch:
        try:
            answer = self.conn.recv_bytes()
        except EOFError:
            raise RuntimeError(
                f"the record preparing process exited ({self.process.exitcode})"
            ) from None
        if answer[:1] == _FAILED:
            trace = answer[1:].decode("utf-8", "replace")
            raise RuntimeError(f"preparing records failed in the worker process:\n{trace}")
        return Batch.loads(answer)


#: the first byte of a worker's answer that is a traceback, not a batch (marshal's first byte
#: is a type code, never NUL)
_FAILED = b"\x00"


def _serve(conn: Any, inherited: list[Any]) -> None:
    """The worker's loop: prepare each request until the pipe closes."""
    for end in inherited:
        end.close()
    # what a forked child inherited is never collected here (and stays shared with the
    # parent, not copied page by page); a batch makes no reference cycles, so its millions of
    # objects are freed by their counts without the collector walking them (~8% faster)
    gc.freeze()
    gc.disable()
    while True:
        try:
            text, first, replace = conn.recv()
        except (EOFError, OSError):
            return
        try:
            lines = text.split(b"\n" if isinstance(text, bytes) else "\n")
            answer = prepare_lines(lines, first, replace=replace).dumps()
        except Exception:  # a bug, not bad input: report it to the publisher
            answer = _FAILED + traceback.format_exc().encode()
        conn.send_bytes(answer)
