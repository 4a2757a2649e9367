"""A gateway on a real HTTP server (uvicorn, loopback) in front of a real forwarder and producer.

The catalog is a SQLite file listing the producer's files, plus names no producer serves well;
the app is the catalog's (``create_app``) with the gateway mounted, as ``ndnsci catalog serve``
runs it, served by uvicorn in a thread of the test process.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn
from support import Forwarder, Serve, free_port, wait_for

from ndnsci_catalog.config import Settings
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.gateway.app import mount
from ndnsci_catalog.gateway.stream import Source
from ndnsci_catalog.ingest import publish
from ndnsci_catalog.main import create_app
from ndnsci_catalog.migrate import upgrade
from ndnsci_catalog.records import parse_record

SIZES = {"empty.bin": 0, "small.bin": 100, "medium.bin": 3 * 8000 + 123, "big.bin": 4 << 20}


@dataclass
class Site:
    url: str
    root: Path
    prefix: str
    producer: Serve
    db: str

    def data(self, relative: str) -> str:
        return f"{self.url}/data{self.prefix}/{relative}"

    def bytes_of(self, relative: str) -> bytes:
        return (self.root / relative).read_bytes()


class Server:
    """An app served by uvicorn on a free loopback port, in a thread; stops on exit."""

    def __init__(self, app: object) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()

        def started() -> bool:
            if not self.server.started and not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start: its thread ended")
            return self.server.started

        wait_for(started, 20, "uvicorn to start", every=0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def catalog_of(db: str, records: list[dict[str, object]]) -> None:
    upgrade(db)
    engine = make_engine(db)
    try:
        with make_sessionmaker(engine)() as session:
            publish(session, [parse_record(r) for r in records])
            session.commit()
    finally:
        engine.dispose()


def record(name: str, data: bytes | None, *, size: int | None = None) -> dict[str, object]:
    return {
        "name": name,
        "scheme": "test",
        "facets": {},
        # the file's path, as `ndnsci publish` records it: new content of it is the same file
        "original_path": name.lstrip("/"),
        "size": len(data) if data is not None else size,
        "sha256": hashlib.sha256(data if data is not None else b"other").hexdigest(),
    }


def gateway_app(db: str, transport: str) -> object:
    app = create_app(Settings(db=db, webui_dir=""))
    mount(app, Source(transport))
    return app


@pytest.fixture(scope="module")
def site(fw: Forwarder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("gateway")
    root = tmp / "root"
    root.mkdir()
    records = []
    prefix = f"/GWTEST/p{os.getpid()}"
    for relative, size in SIZES.items():
        data = os.urandom(size)
        (root / relative).write_bytes(data)
        records.append(record(f"{prefix}/{relative}", data))
    (root / "wrongsize.bin").write_bytes(b"x" * 500)
    records += [
        record(f"{prefix}/missing.bin", None, size=10),  # the producer has no such file
        record(f"{prefix}/wrongsize.bin", None, size=400),  # the producer serves another one
        record(f"/GWNOPRODUCER/p{os.getpid()}/x.bin", None, size=10),  # no producer at all
    ]
    db = f"sqlite:///{tmp / 'catalog.db'}"
    catalog_of(db, records)
    producer = Serve(root, prefix).start()
    try:
        with Server(gateway_app(db, fw.uri)) as server:
            yield Site(server.url, root, prefix, producer, db)
    finally:
        producer.stop()
