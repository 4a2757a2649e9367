"""Several sites on one machine, for the federation tests.

Each :class:`Site` has what a real site runs, each a real process: an NDNd forwarder on its
own socket and UDP port, a SQLite catalog with its own key and site name, ``ndnsci catalog
serve`` on a free port, ``ndnsci catalog federate`` (linked to the other sites' forwarders
over UDP faces on loopback) and, when it holds files, ``ndnsci serve --catalog``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select
from support import Forwarder, free_port, wait_for

from ndnsci.ndn import keys
from ndnsci_catalog import sites
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.migrate import upgrade
from ndnsci_catalog.models import File


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class Site:
    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.prefix = f"/{name}"
        self.dir = root / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.fw = Forwarder(self.dir)
        self.udp_port = int(self.fw.ports["NDNSCI_FW_UDP_PORT"])
        self.db = f"sqlite:///{self.dir / 'catalog.db'}"
        self.env = {
            "NDN_CLIENT_TRANSPORT": self.fw.uri,
            "NDNSCI_CONFIG_DIR": str(self.dir / "config"),
            "NDNSCI_CACHE_DIR": str(self.dir / "cache"),
        }
        self.engine = make_engine(self.db)
        self.sessions = make_sessionmaker(self.engine)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.links: list[Site] = []
        self.url = ""
        self.key: keys.PublisherKey | None = None

    # --- set-up ---------------------------------------------------------------------------------

    def start(self) -> Site:
        self.fw.start()
        with environment(NDNSCI_CONFIG_DIR=self.env["NDNSCI_CONFIG_DIR"]):
            self.key = keys.create()
        upgrade(self.db)
        with self.sessions() as session:
            self.boot = sites.init_local(
                session, self.name, self.prefix, self.key.public.hex()
            ).boot
            session.commit()
        return self

    @property
    def public_key(self) -> str:
        assert self.key is not None
        return self.key.public.hex()

    def trust(self, *others: Site) -> None:
        with self.sessions() as session:
            for other in others:
                sites.trust(session, other.name, other.prefix, other.public_key)
            session.commit()

    def spawn(self, part: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.dir / f"{part}.log", "ab")  # noqa: SIM115 - the child writes it
        proc = subprocess.Popen(
            [sys.executable, "-m", "ndnsci", *args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
        )
        log.close()
        self.procs[part] = proc
        return proc

    def log(self, part: str) -> str:
        path = self.dir / f"{part}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def serve_catalog(self) -> str:
        port = free_port()
        self.spawn("catalog", "catalog", "serve", "--db", self.db, "--port", str(port),
                   "--no-migrate")  # fmt: skip
        self.url = f"http://127.0.0.1:{port}"
        wait_for(self._healthy, 60, f"the catalog of {self.name}")
        return self.url

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/api/v1/health", timeout=1).is_success
        except httpx.HTTPError:
            return False

    def federate(self, *extra: str) -> subprocess.Popen[bytes]:
        links = [f"--link={o.name}=udp4://127.0.0.1:{o.udp_port}" for o in self.links]
        proc = self.spawn("federate", "catalog", "federate", "--db", self.db, "--interval",
                          "0.2", "--sync-interval", "3", *links, *extra)  # fmt: skip
        wait_for(lambda: " in group " in self.log("federate") or proc.poll() is not None, 60,
                 f"the federation daemon of {self.name}")  # fmt: skip
        assert proc.poll() is None, self.log("federate")
        return proc

    def stop(self, part: str, sig: int = signal.SIGTERM) -> None:
        proc = self.procs.pop(part, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def close(self) -> None:
        for part in list(self.procs):
            self.stop(part)
        self.engine.dispose()
        self.fw.stop()

    # --- looking at the catalog ------------------------------------------------------------------

    def count(self, site: str | None = None) -> int:
        with self.sessions() as session:
            query = select(func.count()).select_from(File)
            if site is not None:
                query = query.where(File.site == site)
            return int(session.scalar(query) or 0)

    def site_row(self, name: str) -> sites.SiteInfo:
        with self.sessions() as session:
            info = sites.get_site(session, name)
        assert info is not None
        return info

    def search(self, **params: Any) -> dict[str, Any]:
        response = httpx.get(f"{self.url}/api/v1/search", params=params, timeout=30)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def names(self) -> dict[str, str | None]:
        with self.sessions() as session:
            return {n: s for n, s in session.execute(select(File.name, File.site))}

    def publish_records(
        self, records: Iterable[dict[str, Any]]
    ) -> subprocess.CompletedProcess[str]:
        """``ndnsci publish --records`` into this site's database (a real publisher)."""
        path = self.dir / f"records-{time.monotonic_ns()}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return subprocess.run(
            [sys.executable, "-m", "ndnsci", "publish", "--records", str(path), "--db", self.db],
            capture_output=True, text=True, env={**os.environ, **self.env}, timeout=300,
            check=False,
        )  # fmt: skip


def link_all(group: list[Site]) -> None:
    """Every site trusts and links to every other."""
    for site in group:
        site.links = [o for o in group if o is not site]
        site.trust(*site.links)


def records(count: int, institute: str, model: str, start: int = 0) -> list[dict[str, Any]]:
    """CMIP5-shaped name records (no files): realistic names and facets."""
    out = []
    for i in range(start, start + count):
        variable = ("tas", "pr", "psl", "uas", "vas")[i % 5]
        member = f"r{i // 5 + 1}i1p1"
        filename = f"{variable}_Amon_{model}_historical_{member}_185001-200512.nc"
        out.append({
            "name": f"/CMIP5/output1/{institute}/{model}/historical/mon/atmos/Amon/{member}/"
                    f"v20120101/{variable}/{filename}",
            "scheme": "cmip5",
            "size": 1_000_000 + i,
            "sha256": f"{i:064x}",
            "facets": {"institute": institute, "model": model, "experiment": "historical",
                       "frequency": "mon", "realm": "atmos", "table": "Amon",
                       "ensemble": member, "variable": variable},
            "time_start": "1850-01-01T00:00:00",
            "time_end": "2005-12-31T23:59:59",
        })  # fmt: skip
    return out
