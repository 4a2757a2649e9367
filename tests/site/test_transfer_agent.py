"""The transfer agent's workers against a SQLite catalog (``ndnsci up``'s): the fetch is a
stand-in, the database is real."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ndnsci.site import transfers as agent_module
from ndnsci.site.transfers import Agent
from ndnsci_catalog import transfers
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.migrate import upgrade


def test_parallel_workers_on_sqlite_finish_every_file_without_a_locked_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Four workers claim, report and finish at once on one SQLite file: a transaction that
    read, then writes, after another connection wrote is refused at once ("database is
    locked", whatever the busy timeout). A worker that got that lost its claim until its
    lease ran out (30 s), or its thread; every file must be done at once, nothing logged."""
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    upgrade(url)
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        wanted = [transfers.Wanted(f"/a/f{i}", f"a/f{i}", 10, None) for i in range(40)]
        job_id = transfers.submit(
            session, owner="t", destination="d", engine="python", selection={}, files=wanted
        )
        session.commit()

    def fake_fetch(entry: Any, dest: Path, **options: Any) -> Any:
        options["progress"].update(entry.name, 5, 10)
        target = dest / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x" * 10)
        return SimpleNamespace(engine="python", status="done", size=10)

    monkeypatch.setattr(agent_module, "fetch_file", fake_fetch)
    monkeypatch.setattr(agent_module, "REPORT_EVERY", 0.0)  # a report per update: more writers
    caplog.set_level(logging.WARNING, logger="ndnsci.transfer")
    started = time.monotonic()
    report = Agent(engine, tmp_path / "root", parallel=4, idle_poll=0.05).run(until_idle=True)
    assert time.monotonic() - started < 20
    assert report.ends == {"done": 40}
    with make_sessionmaker(engine)() as session:
        assert transfers.status(session, job_id).counts["done"] == 40
    assert [r.getMessage() for r in caplog.records] == []
    engine.dispose()
