"""The federation daemon rides out a catalog it briefly cannot read (a real NDNd forwarder,
a real SQLite catalog): the failed step is logged, and the next ones work."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest
from sqlalchemy import func, select, text
from support import wait_for

from ndnsci_catalog.federation.service import Federation, Options
from ndnsci_catalog.models import ChangeBatch

from .sites import Site, environment, records


def test_a_catalog_briefly_unreadable_is_logged_and_the_daemon_goes_on(
    make_sites: Callable[..., list[Site]], caplog: pytest.LogCaptureFixture
) -> None:
    (site,) = make_sites("e")
    with environment(**site.env):
        daemon = Federation(Options(db=site.db, transport=site.fw.uri, interval=0.1))
    stop, ready = threading.Event(), threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop, ready), daemon=True)
    caplog.set_level(logging.WARNING, logger="ndnsci_catalog.federation.service")
    thread.start()
    try:
        assert ready.wait(30)
        _rename(site, "sites", "sites_away")  # every step reads the trust list
        wait_for(lambda: "trying again" in caplog.text, 30, "the daemon's warning")
        _rename(site, "sites_away", "sites")
        assert site.publish_records(records(5, "SITEE", "ModelE")).returncode == 0
        wait_for(lambda: _batches(site) == 1, 30, "the batch sealed after the catalog is back")
    finally:
        stop.set()
        thread.join(15)
    assert not thread.is_alive()


def _rename(site: Site, old: str, new: str) -> None:
    with site.engine.begin() as connection:
        connection.execute(text(f"ALTER TABLE {old} RENAME TO {new}"))


def _batches(site: Site) -> int:
    with site.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(ChangeBatch)) or 0)
