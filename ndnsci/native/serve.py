"""``ndnsci serve --engine ndn-dpdk ROOT``: NDN-DPDK's file server serves the files.

Without ``--catalog``: one mount, ``PREFIX -> ROOT`` (the file server maps each name component
to a path component below ROOT, as the Python producer does).

With ``--catalog``: the catalog's names (``/CMIP5/...``, ``/CMS/store/...``), found exactly as
the Python producer finds them (:class:`~ndnsci.site.published.PublishedFiles`), become a view of
symlinks (:mod:`ndnsci.native.view`) in the plane's run folder, mounted one top-level component
each. The catalog's change feed is polled; new and retracted names change the view in place,
and a new top-level component (a mount) restarts the file server with the new mounts.

The plane must be up (``ndnsci native up``); the file server stops when this command does, and
is started again when it dies (checked every WATCH_SECONDS), e.g. with a forwarder that was
restarted (``ndnsci native down``/``up``). Several of these commands may run on one plane: the
file server serves all their mounts (a prefix served from two folders is refused).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ndnsci.base.processes import die_with_parent
from ndnsci.errors import CatalogError, NativePlaneError, NdnError
from ndnsci.native import view
from ndnsci.native.plane import Plane
from ndnsci.ndn import name as ndnname
from ndnsci.ndn import tlv

log = logging.getLogger("ndnsci.serve")
WATCH_SECONDS = 2.0  # how often the file server's life is checked


def tree_mounts(root: str, prefix: str) -> list[dict[str, str]]:
    """The one mount of ``serve ROOT --prefix PREFIX``."""
    components = ndnname.from_uri(prefix)
    if not components or any(tlv.component_type(c) != tlv.GENERIC for c in components):
        raise ValueError(f"{prefix}: NDN-DPDK mounts need a prefix of generic components")
    if not os.path.isdir(root):
        raise NotADirectoryError(f"not a directory: {root}")
    return [{"prefix": ndnname.to_uri(components), "path": os.path.realpath(root)}]


class _FileServer:
    """This command's share of the plane's file server: ``mounts`` registered under this
    process, the file server started again when it died (killed, or stopped with a forwarder
    that restarted) once the plane is up again, or when another ``ndnsci serve`` sharing it
    stopped or died (:meth:`Plane.keep_fileserver`)."""

    def __init__(self, plane: Plane, mounts: list[dict[str, str]]) -> None:
        self.plane = plane
        self.mounts = mounts
        self.plane.start_fileserver(mounts, preexec=die_with_parent)

    def restart(self, mounts: list[dict[str, str]]) -> None:
        self.mounts = mounts
        self.plane.start_fileserver(mounts, preexec=die_with_parent)

    def keep_alive(self) -> None:
        try:
            if not self.plane.keep_fileserver(self.mounts, preexec=die_with_parent):
                log.warning("the native plane is down; serving again once it is up")
        except NdnError as exc:  # the plane's or NDNd's management did not answer: again later
            log.warning("cannot start the file server: %s", exc)

    def stop(self) -> None:
        self.plane.stop_fileserver()


def serve_tree(root: str, prefix: str, stop: threading.Event, plane: Plane | None = None) -> None:
    server = _FileServer(plane or Plane(), tree_mounts(root, prefix))
    print(f"serving {root} as {prefix} on NDN-DPDK's file server", flush=True, file=sys.stderr)
    try:
        while not stop.wait(WATCH_SECONDS):
            server.keep_alive()
    finally:
        server.stop()


def serve_catalog(
    published: Any, refresh: float, stop: threading.Event, plane: Plane | None = None
) -> None:
    """Serve what ``published`` (a PublishedFiles) finds, following the catalog until ``stop``."""
    plane = plane or Plane()
    if plane.load() is None:
        raise NativePlaneError("the native plane is not up: run `ndnsci native up` first")
    root = plane.run / "view"
    scan = published.scan()
    log.info("%s", scan.summary())
    mounts = _sync(root, scan.table)
    if not mounts:
        raise NativePlaneError(f"{scan.summary()}: nothing to serve")
    server = _FileServer(plane, mounts)
    print(
        f"serving {len(scan.table)} files of the catalog on NDN-DPDK's file server "
        f"({', '.join(m['prefix'] for m in mounts)})",
        flush=True,
        file=sys.stderr,
    )
    polled = time.monotonic()
    try:
        while not stop.wait(max(min(refresh, WATCH_SECONDS), 0.1)):
            server.keep_alive()
            if time.monotonic() - polled < refresh:
                continue
            polled = time.monotonic()
            try:
                if not published.changed():
                    continue
                scan = published.scan()
            except (CatalogError, OSError) as exc:
                log.warning("cannot follow the catalog: %s; serving the files known so far", exc)
                continue
            wanted = _sync(root, scan.table)
            log.info("catalog changed: %s", scan.summary())
            if wanted and wanted != server.mounts:  # a new top-level component: mount anew
                server.restart(wanted)
                log.info("file server restarted with mounts %s", [m["prefix"] for m in wanted])
    finally:
        server.stop()


def _sync(root: Path, table: Any) -> list[dict[str, str]]:
    change = view.sync(root, table)
    log.info("%s", change.summary())
    for name, why in change.refused:
        log.warning("not served: %s: %s", name, why)
    return view.mounts(root, table)
