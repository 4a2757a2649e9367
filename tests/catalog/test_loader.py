"""catalog/loader.py: JSON lines prepared by other processes and written in order, both backends.

Whatever the number of preparing processes, the catalog ends up the same, each batch is one
transaction, refused lines are reported with their numbers, and no process is left behind.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from ndnsci_catalog import bulk, ingest, loader
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.migrate import upgrade
from ndnsci_translators import translate

from . import consistency
from .corpus import CORPORA

BATCH = 37


def _lines() -> list[str]:
    """Real translations (some failed), a name given twice, and lines that cannot be read."""
    paths = [row.split("\t")[0] for row in (CORPORA / "cmip5_paths.tsv").read_text().splitlines()]
    lines = [json.dumps(translate(p).to_dict()) for p in paths[1:201]]
    lines[10] = "not json"
    lines[50] = json.dumps({**json.loads(lines[49]), "size": -1})  # refused by validation
    lines[120] = lines[119]  # the same name twice: one file
    lines[160] = ""
    clim = "/old/tas_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc"
    lines.append(json.dumps(translate(clim).to_dict()))
    return [line + "\n" for line in lines]


LINES = _lines()


@pytest.fixture
def sessions(fresh_db_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(fresh_db_url)
    yield make_sessionmaker(engine)
    engine.dispose()


def _expected() -> tuple[set[str], int, list[tuple[str, str]]]:
    """Names published, lines accepted (the corpus names some files twice), lines refused."""
    names, accepted, refused = set(), 0, []
    for number, line in enumerate(LINES, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            refused.append((f"line {number}", "not valid JSON"))
            continue
        if not obj["ok"]:
            refused.append((obj["input"], "cannot be named"))
        elif obj.get("size") == -1:
            refused.append((obj["input"], "'size' must be"))
        else:
            names.add(obj["name"])
            accepted += 1
    return names, accepted, refused


@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("kind", [str, bytes])
def test_the_same_catalog_whatever_prepares_it(sessions, workers, kind):
    others = set(multiprocessing.active_children())  # other tests' children are not this load's
    batches: list[tuple[int, list[tuple[str, str]], int]] = []
    lines: list[Any] = [line.encode() for line in LINES] if kind is bytes else LINES
    result = loader.load(
        sessions,
        iter(lines),
        batch=BATCH,
        workers=workers,
        done=lambda b, r: batches.append((b.accepted, b.refused, r.last_seq)),
    )
    names, accepted, refused = _expected()
    assert result.inserted == len(names)
    assert len(batches) == -(-len(LINES) // BATCH)  # one transaction per batch, in order
    assert [seq for *_, seq in batches] == sorted(seq for *_, seq in batches)
    reported = [r for _, refusals, _ in batches for r in refusals]
    assert [s for s, _ in reported] == [s for s, _ in refused]
    for (_, reason), (_, start) in zip(reported, refused, strict=True):
        assert reason.startswith(start), reason
    assert sum(n for n, *_ in batches) == accepted
    with sessions() as session:
        assert consistency.check(session) == len(names)
        stored = {n for (n,) in session.execute(text("SELECT name FROM files"))}
        assert stored == names
        (original,) = session.execute(
            text("SELECT original FROM files WHERE filename LIKE '%-clim.nc'")
        ).one()
        assert original == "tas_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc"
    assert set(multiprocessing.active_children()) <= others  # the workers are gone


def test_a_failing_worker_stops_the_load_and_keeps_the_committed_batches(sessions, monkeypatch):
    others = set(multiprocessing.active_children())
    prepare = loader.prepare_lines

    def broken(lines: Any, first: int, replace: bool = False) -> loader.Batch:
        if first > BATCH:  # the second batch onwards
            raise RuntimeError("a bug in preparing")
        return prepare(lines, first, replace)

    monkeypatch.setattr(loader, "prepare_lines", broken)  # the forked workers inherit it
    with pytest.raises(RuntimeError, match="a bug in preparing"):
        loader.load(sessions, iter(LINES), batch=BATCH, workers=2)
    with sessions() as session:
        published = consistency.check(session)
    first_batch = {json.loads(line)["name"] for line in LINES[:BATCH] if '"ok": true' in line}
    assert published == len(first_batch)
    assert set(multiprocessing.active_children()) <= others


@pytest.fixture
def sqlite_sessions(tmp_path) -> Iterator[sessionmaker[Session]]:
    """A migrated SQLite catalog of its own (the WAL is SQLite's: no PostgreSQL variant)."""
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    upgrade(url)
    engine = make_engine(url)
    yield make_sessionmaker(engine)
    engine.dispose()


def test_the_wal_is_checkpointed_by_a_thread_while_batches_are_written(
    sqlite_sessions, monkeypatch
):
    sessions = sqlite_sessions
    monkeypatch.setattr(bulk, "CHECKPOINT_WAL_BYTES", 1)  # every batch finds one to copy
    started = []
    checkpoint = bulk._checkpoint
    monkeypatch.setattr(bulk, "_checkpoint", lambda path: (started.append(path), checkpoint(path)))
    loader.load(sessions, iter(LINES), batch=BATCH, workers=0)
    for thread in list(bulk.checkpoints.values()):
        thread.join(timeout=30)
    assert started and not bulk.checkpoints
    with sessions() as session:
        assert consistency.check(session) == len(_expected()[0])
        (path,) = {row[2] for row in session.execute(text("PRAGMA database_list"))}
    assert set(started) == {path}


def _body(lines: list[str], size: int) -> bytes:
    """``lines`` repeated, each copy under new names, up to ``size`` bytes."""
    out: list[bytes] = []
    held, copy = 0, 0
    while held < size:
        for line in lines:
            encoded = line.replace("/CMIP5/", f"/CMIP5/copy{copy}/").encode()
            out.append(encoded)
            held += len(encoded)
        copy += 1
    return b"".join(out)


@pytest.mark.parametrize("bad", [False, True])
def test_a_request_prepared_by_a_process_is_the_one_prepared_here(bad):
    """The server's preparing process answers a body over the inline size with the batch the
    server would have prepared itself: the same rows, documents, counts and collisions, or
    the same refused lines."""
    good = [line for line in LINES if line.strip() and '"ok": true' in line]
    lines = [*good[:30], good[3]]  # a name twice: the same record
    if bad:
        lines[7] = "not json\n"
    body = _body(lines, loader.RequestPreparer.INLINE_BYTES + 1)
    preparer = loader.RequestPreparer(1)
    try:
        batch = asyncio.run(preparer.prepare(body, replace=False))
        assert preparer._pool is not None  # it did go to the process
    finally:
        preparer.close()
    assert batch == loader.prepare_request(body, replace=False)
    assert (batch.prepared is None) == bad
    assert batch.refused or (batch.prepared is not None and batch.prepared.rows)


def _good_body() -> bytes:
    good = [line for line in LINES if line.strip() and '"ok": true' in line]
    return _body(good[:30], loader.RequestPreparer.INLINE_BYTES + 1)


def test_a_request_leaves_no_file_behind_and_close_removes_the_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "SCRATCH_BASE", str(tmp_path))
    body = _good_body()
    preparer = loader.RequestPreparer(1)
    try:
        for _ in range(2):
            batch = asyncio.run(preparer.prepare(body, replace=False))
            assert batch == loader.prepare_request(body, replace=False)
            assert preparer._folder is not None
            folder = Path(preparer._folder)
            assert folder.parent == tmp_path
            assert folder.name.startswith(f"{loader.SCRATCH_PREFIX}{os.getpid()}-")
            assert list(folder.iterdir()) == []  # body and batch removed once read
            assert folder.stat().st_mode & 0o777 == 0o700  # only this server writes there
    finally:
        preparer.close()
    assert not folder.exists()


def test_warm_starts_the_worker_before_a_request_and_close_joins_it():
    """A server starts its preparing process with itself (``warm``), so the first publish does
    not wait ~0.6 s for an interpreter to start; the first request goes to that process, and
    ``close`` waits for it to exit (a worker left to exit on its own raced the interpreter's
    exit and left the pool's semaphores in /dev/shm)."""
    before = {p.pid for p in multiprocessing.active_children()}
    preparer = loader.RequestPreparer(1)
    try:
        preparer.warm()
        pool = preparer._pool
        assert pool is not None
        workers = set(pool._processes)  # spawned by warm, before any request
        assert len(workers) == 1 and not workers & before
        body = _good_body()
        batch = asyncio.run(preparer.prepare(body, replace=False))
        assert batch == loader.prepare_request(body, replace=False)
        assert preparer._pool is pool and set(pool._processes) == workers  # the same process
        preparer.warm()  # warm again: nothing new
        assert preparer._pool is pool and set(pool._processes) == workers
    finally:
        preparer.close()
    assert preparer._pool is None
    assert not {p.pid for p in multiprocessing.active_children()} - before


def test_a_worker_that_cannot_be_started_leaves_no_pool_and_the_next_request_tries_again(
    monkeypatch,
):
    preparer = loader.RequestPreparer(1)

    def refused(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    with monkeypatch.context() as patch:
        patch.setattr(loader.ProcessPoolExecutor, "submit", refused)
        with pytest.raises(OSError):
            preparer.warm()
    assert preparer._pool is None
    try:
        body = _good_body()
        assert asyncio.run(preparer.prepare(body, replace=False)) == loader.prepare_request(
            body, replace=False
        )
        assert preparer._pool is not None
    finally:
        preparer.close()


def test_a_server_whose_preparing_process_cannot_start_still_starts_and_says_why(
    tmp_path, monkeypatch, caplog
):
    from fastapi.testclient import TestClient

    from ndnsci_catalog.config import Settings
    from ndnsci_catalog.main import create_app

    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    upgrade(url)

    def refused(self):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(loader.RequestPreparer, "warm", refused)
    with TestClient(create_app(Settings(db=url))) as client:  # runs the app's start-up
        assert client.get("/api/v1/health").status_code == 200
    assert "publish preparing process not started at start-up" in caplog.text


def test_no_worker_is_started_when_the_server_prepares_in_its_own_process():
    preparer = loader.RequestPreparer(0)
    preparer.warm()
    assert preparer._pool is None
    preparer.close()


def test_a_failed_request_removes_its_files(tmp_path):
    exchange = loader._Exchange(str(tmp_path))
    exchange.put(b"x" * 10)
    Path(exchange.answer).write_bytes(b"half")  # a worker that died while writing
    exchange.remove()
    exchange.remove()  # twice: nothing left to remove is not an error
    assert list(tmp_path.iterdir()) == []


def test_the_folders_of_killed_servers_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "SCRATCH_BASE", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    stale = tmp_path / f"{loader.SCRATCH_PREFIX}{dead}-abc"
    stale.mkdir()
    (stale / "1.batch").write_bytes(b"x" * 1000)
    live = tmp_path / f"{loader.SCRATCH_PREFIX}{os.getppid()}-def"  # the test runner's parent
    live.mkdir()
    other = tmp_path / "not-ours"
    other.mkdir()
    preparer = loader.RequestPreparer(1)
    try:
        folder = Path(preparer._make_folder())
        assert not stale.exists()
        assert live.exists() and other.exists() and folder.exists()
    finally:
        preparer.close()


def test_without_a_memory_file_system_the_temporary_folder_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "SCRATCH_BASE", str(tmp_path / "missing"))
    monkeypatch.setattr(loader.tempfile, "tempdir", str(tmp_path))
    preparer = loader.RequestPreparer(1)
    try:
        assert Path(preparer._make_folder()).parent == tmp_path
    finally:
        preparer.close()


def test_a_prepared_batch_crosses_between_processes_unchanged():
    batch = loader.prepare_lines(LINES, 1)
    assert batch.refused
    prepared = batch.prepared
    prepared.collisions.append(ingest.Collision(4, "/a/b", "p/q", None, True))
    assert loader.Batch.loads(batch.dumps()) == batch
    assert ingest.Prepared.loads(prepared.dumps()) == prepared


def test_records_in_a_body_are_counted_by_their_lines():
    line = b'{"name": "/a/b"}\n'
    assert not loader.more_records_than(line * 3, 3)  # a full request: the newline ends it
    assert not loader.more_records_than(line * 3 + b"\n  \n", 3)  # blank lines hold nothing
    assert not loader.more_records_than(line * 2 + line[:-1], 3)  # no newline at the end
    assert loader.more_records_than(line * 4, 3)
    assert loader.more_records_than(line * 3 + line[:-1], 3)
    assert not loader.more_records_than(b"", 0)
