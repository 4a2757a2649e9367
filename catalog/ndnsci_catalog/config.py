"""Settings of the catalog service: one pydantic-settings object, read from ``NDNSCI_*`` variables.

``get_settings()`` is cached; tests and the command line build their own ``Settings`` and pass it
to :func:`ndnsci_catalog.main.create_app` instead of touching the environment.
"""

from __future__ import annotations

import functools
import os
import uuid
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: where the portal's production build lands (``npm --prefix webui run build``) and where the
#: wheel carries it: package data of ``ndnsci_catalog``
PACKAGED_PORTAL = Path(__file__).resolve().parent / "portal"


def default_db_url() -> str:
    """A SQLite file under the user's data directory (``$XDG_DATA_HOME/ndnsci/catalog.db``)."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return f"sqlite:///{Path(data_home) / 'ndnsci' / 'catalog.db'}"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="NDNSCI_", extra="ignore")

    #: SQLAlchemy URL; ``NDNSCI_DB`` overrides the default SQLite file
    db: str = Field(default_factory=default_db_url)
    #: origins allowed to call the API from a browser (``NDNSCI_CORS_ORIGINS='["https://x"]'``)
    cors_origins: list[str] = Field(default_factory=list)
    #: records accepted in one ``POST /publish`` request (one transaction each); stated by
    #: ``GET /limits`` so publishers send batches that fit (``Catalog.publish``)
    max_publish_records: int = 50_000
    #: bytes of one ``POST /publish`` body (413 ``batch-too-large`` beyond; ``GET /limits``
    #: states it): 50,000 records of ``ndnsci translate --json`` are ~35 MB
    max_publish_bytes: int = 64 << 20
    #: processes that prepare big publish requests while this one writes, started with the
    #: server (~60 MB each while idle); 0: requests are prepared in this one
    publish_workers: int = 1
    #: bytes of any other request body (``POST /manifests``): unauthenticated work is bounded
    max_body_bytes: int = 4 << 20
    #: names in one ``POST /manifests`` (each is normalised and looked up)
    max_manifest_names: int = 10_000
    #: requests reading the database at once (searches, records, manifests...); more wait.
    #: A search is mostly CPU work in Python: more threads than cores only take turns
    max_reads: int = Field(default_factory=lambda: min(16, max(4, 2 * (os.cpu_count() or 1))))
    #: publishes and retractions at once (they take turns in the database anyway)
    max_writes: int = 2
    #: requests allowed to wait for a turn, per kind; beyond, a 503 with Retry-After at once
    max_waiting: int = 64
    #: the longest a read waits for its turn (or for the facet index to catch up) before a 503
    read_wait_seconds: float = 5.0
    #: the longest a publish waits for its turn before a 503
    write_wait_seconds: float = 60.0
    #: this server process, as ``GET /health`` names it (``ndnsci up`` checks that the server
    #: answering on its port is the one it started)
    instance: str = Field(default_factory=lambda: uuid.uuid4().hex)
    #: the built web portal served at ``/`` (``NDNSCI_WEBUI_DIR``); '' turns it off
    webui_dir: str = str(PACKAGED_PORTAL)
    #: SQL echo, for debugging
    echo_sql: bool = False
    #: this node's name in ESGF ids (``<instance>|<data_node>``); '' names it by the host asked
    data_node: str = ""
    #: the HTTP gateway to the NDN data (``ndnsci gateway``) that ESGF records and the portal
    #: link to; '' is ``/data/`` on this server (``ndnsci catalog serve`` mounts it there)
    gateway_url: str = ""
    #: seconds a client has to send a request's head (``ndnsci catalog serve``: 408 beyond;
    #: its size and field count are bounded too, ``ndnsci_catalog.serving``)
    head_seconds: float = 10.0
    #: the XRootD server that reads this catalog's CMS files over NDN (``ndnsci xrootd up``),
    #: e.g. ``root://xrootd.example.org:1094``: CMS records then offer
    #: ``root://HOST:PORT//store/...`` beside the NDN name and the HTTP URL; '' offers none
    xrootd_url: str = ""


@functools.cache
def get_settings() -> Settings:
    return Settings()
