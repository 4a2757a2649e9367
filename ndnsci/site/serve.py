"""Serving a directory tree, or the files of it a catalog publishes, over NDN: what
``ndnsci serve`` wires (the command parses, calls :func:`start`, prints).

With the Python engine the producer (:mod:`ndnsci.ndn.producer`) serves ``root`` under
``prefix``, or, with a catalog, the files :class:`~ndnsci.site.published.PublishedFiles` finds
under their catalog names, following the catalog's change feed in a thread. Metadata is signed
with the publisher key (:mod:`ndnsci.ndn.keys`) unless ``unsigned``. With ``ndn-dpdk`` the plane's
file server serves the same names (:mod:`ndnsci.native.serve`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ndnsci.errors import CatalogError, PublisherKeyError

DEFAULT_PREFIX = "/ndnsci/files"
log = logging.getLogger("ndnsci.serve")


@dataclass(frozen=True)
class ServeOptions:
    """What to serve and how (``ndnsci serve``'s arguments)."""

    root: str
    prefix: str = DEFAULT_PREFIX
    catalog: str | None = None  # serve the files below root this catalog publishes
    refresh: float = 5.0  # with a catalog: seconds between looks at its change feed
    scheme: str = "auto"  # with a catalog: the naming scheme
    segment_size: int = 8000
    key: str = "default"  # the publisher key's name
    unsigned: bool = False  # DigestSha256 only: no publisher key needed
    engine: str = "python"  # or "ndn-dpdk"


class Service:
    """A producer ready to serve: :meth:`serve_forever` until ``stop`` is set."""

    def __init__(self, producer: Any, what: str, key: Any) -> None:
        self.producer = producer
        #: what is served, for a message (``DIR as PREFIX``, ``N files of URL from DIR``)
        self.what = what
        #: the publisher key that signs metadata (None: DigestSha256)
        self.key = key

    @property
    def stats(self) -> dict[str, int]:
        """What the producer answered so far (interests, segments, metadata, nacks)."""
        stats: dict[str, int] = self.producer.stats
        return stats

    def serve_forever(self, stop: threading.Event) -> None:
        self.producer.serve_forever(stop)


class NativeService:
    """NDN-DPDK's file server serving ``options`` (it says what it serves once it does)."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options

    def serve_forever(self, stop: threading.Event) -> None:
        from ndnsci.native import serve

        options = self.options
        if options.catalog:
            serve.serve_catalog(_published(options), options.refresh, stop)
        else:
            serve.serve_tree(options.root, options.prefix, stop)


def start(options: ServeOptions, stop: threading.Event, warn: Callable[[str], None]) -> Any:
    """The service for ``options`` (a :class:`Service`, or a :class:`NativeService`, whose
    :meth:`serve_forever` does the work and may raise what is said here). With a catalog, a
    thread follows its change feed until ``stop``. ``warn`` is told when the default key is
    missing and metadata will be DigestSha256 only.

    Raises:
        NdnError: the publisher key cannot be used, a prefix is not valid.
        CatalogError: the catalog cannot be asked.
        ValueError, OSError: ``root`` is not a directory, or cannot be read.
    """
    if options.engine == "ndn-dpdk":
        return NativeService(options)
    key = None if options.unsigned else _load_key(options.key, warn)
    if options.catalog:
        producer, what = _catalog_producer(options, key, stop)
    else:
        from ndnsci.ndn import name
        from ndnsci.ndn.producer import Producer

        prefix = name.from_uri(options.prefix)
        producer = Producer(options.root, prefix, segment_size=options.segment_size, key=key)
        what = f"{options.root} as {options.prefix}"
    return Service(producer, what, key)


def _published(options: ServeOptions) -> Any:
    from ndnsci.sdk.client import Catalog
    from ndnsci.site.published import PublishedFiles

    if not os.path.isdir(options.root):
        raise NotADirectoryError(f"not a directory: {options.root}")
    assert options.catalog is not None
    catalog = Catalog(options.catalog)
    return PublishedFiles(options.root, catalog, options.scheme, os.cpu_count() or 1)


def _catalog_producer(options: ServeOptions, key: Any, stop: threading.Event) -> Any:
    from ndnsci.ndn.producer import MappedProducer

    published = _published(options)
    scan = published.scan()
    log.info("%s", scan.summary())
    for path, reason in scan.unnamed:
        log.debug("not served: %s: %s", path, reason)
    producer = MappedProducer(options.root, scan.table, segment_size=options.segment_size, key=key)
    watcher = threading.Thread(
        target=_follow, args=(published, producer, options.refresh, stop), daemon=True
    )
    watcher.start()
    return producer, f"{len(scan.table)} files of {options.catalog} from {options.root}"


def _follow(published: Any, producer: Any, every: float, stop: threading.Event) -> None:
    """Rescan ROOT whenever the catalog's change feed moves (errors are logged, not fatal)."""
    while not stop.wait(max(every, 0.1)):
        try:
            if published.changed():
                scan = published.scan()
                producer.update(scan.table)
                log.info("catalog changed: %s", scan.summary())
        except (CatalogError, OSError) as exc:
            log.warning("cannot follow the catalog: %s; serving the files known so far", exc)


def _load_key(name: str, warn: Callable[[str], None]) -> Any:
    from ndnsci.ndn import keys

    try:
        return keys.load(name)
    except PublisherKeyError as exc:
        if name != keys.DEFAULT_NAME or keys.key_path(name).exists():
            raise
        warn(f"{exc}; metadata will be DigestSha256 only")
        return None
