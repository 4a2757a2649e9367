"""``ndnsci catalog federate``: this site's catalog in the federation, over NDN.

One process beside the catalog service, on the same database and the site's forwarder:

1. every ``interval`` seconds, this site's new changes are sealed into signed batches
   (:func:`replica.publish_pending`), served under ``<site prefix>/catalog``
   (:class:`~ndnsci_catalog.federation.serve.BatchProducer`) and announced by State Vector Sync
   (:class:`~ndnsci_catalog.federation.svs.SyncNode`: our sequence number is our batch count);
2. when the state vector shows a trusted site ahead of what was applied here, its missing
   batches are fetched by name (``ndnsci fetch``'s consumer, the site's key pinned), verified
   and applied in order (:func:`replica.receive`); the progress is in the database, so a
   restarted daemon continues where it stopped;
3. after changes were applied, the routes by name to other sites' files are brought in step
   (:class:`~ndnsci_catalog.federation.routes.RouteKeeper`).

A refused batch (forged, tampered with, malformed) is logged and counted; the daemon asks
for it again after a back-off, so a batch tampered with on the way is fetched afresh.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from ndnsci.errors import (
    FederationError,
    FetchError,
    IntegrityError,
    RefusedChangesError,
    TransportError,
)
from ndnsci.ndn import consumer, control, keys, name, tlv
from ndnsci.ndn.transport import Face
from ndnsci.sdk.transports import FetchOptions
from ndnsci_catalog import sites
from ndnsci_catalog.database import make_engine, make_sessionmaker
from ndnsci_catalog.federation import names, replica, routes, svs
from ndnsci_catalog.federation.serve import BatchProducer
from ndnsci_catalog.models import File

log = logging.getLogger(__name__)

#: a site whose batch failed is asked again after this, doubling up to BACKOFF_MAX
BACKOFF = 1.0
BACKOFF_MAX = 10.0
#: the links (faces and routes to other sites' forwarders) are set again this often, and the
#: routes by name checked: a restarted forwarder has lost both
LINK_INTERVAL = 30.0
#: while batches keep arriving, routes are recomputed at most this often (they are recomputed
#: as soon as a site is caught up)
ROUTE_INTERVAL = 30.0


@dataclass
class Options:
    db: str
    key: str = keys.DEFAULT_NAME
    group: str = names.DEFAULT_GROUP
    transport: str | None = None
    #: seconds between two looks for local changes to seal
    interval: float = 0.5
    #: State Vector Sync's periodic Sync Interest
    sync_interval: float = svs.PERIODIC
    batch_changes: int = sites.BATCH_CHANGES
    #: (site, face URI): a face to that site's forwarder, its prefix and the group routed over it
    links: list[tuple[str, str]] = field(default_factory=list)
    #: maintain routes by name to other sites' files
    data_routes: bool = True
    #: seconds between two settings of the links (see LINK_INTERVAL)
    relink_interval: float = LINK_INTERVAL


@dataclass
class _Remote:
    failures: int = 0
    retry_at: float = 0.0


class Federation:
    """The daemon; :meth:`run` until ``stop`` is set."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.engine = make_engine(options.db)
        self.factory: sessionmaker[Session] = make_sessionmaker(self.engine)
        self.key = keys.load(options.key)
        self.local = replica.local_identity(self.factory, self.key)
        self.wake = threading.Event()
        self.remotes: dict[str, _Remote] = {}
        self.routes = routes.RouteKeeper(options.transport)
        self.routes_due = 0.0
        self.links_due = time.monotonic() + options.relink_interval
        self.routes_dirty = options.data_routes
        key_name = b"".join(names.catalog_prefix(self.local.prefix))
        key_name += tlv.keyword(b"key") + tlv.generic(self.key.key_id)
        self.node = svs.SyncNode(
            group=b"".join(name.from_uri(options.group)),
            node=b"".join(name.from_uri(self.local.prefix)),
            boot=self.local.boot,
            key=self.key,
            key_name=key_name,
            on_update=lambda _update: self.wake.set(),
            transport=options.transport,
            periodic=options.sync_interval,
            sync_data_name=b"".join(names.catalog_prefix(self.local.prefix)) + tlv.generic("sync"),
        )
        self.producer = BatchProducer(
            self.local.prefix, self.local.boot, self.key, self._load,
            transport=options.transport,
        )  # fmt: skip

    def _load(self, number: int) -> bytes | None:
        try:
            with self.factory() as session:
                return sites.batch_envelope(session, number)
        except SQLAlchemyError as exc:  # the producer answers "not published"; asked again
            log.warning("batch %d: the catalog cannot be read: %s", number, exc)
            return None

    # --- running -------------------------------------------------------------------------------

    def run(self, stop: threading.Event, ready: threading.Event | None = None) -> None:
        serving = threading.Event()
        thread = threading.Thread(
            target=self.producer.serve_forever, args=(stop, serving), name="batches", daemon=True
        )
        thread.start()
        try:
            if not serving.wait(15):
                raise TransportError("the batch producer could not register its prefix")
            self._link()
            self.node.start()
            log.info("site %s (%s, boot %d) in group %s", self.local.name, self.local.prefix,
                     self.local.boot, self.options.group)  # fmt: skip
            if ready is not None:
                ready.set()
            while not stop.is_set():
                try:
                    self.step()
                except SQLAlchemyError as exc:  # a database busy or away: try again shortly
                    log.warning("the catalog: %s; trying again", exc)
                    stop.wait(BACKOFF)
                self.wake.wait(self.options.interval)
                self.wake.clear()
        finally:
            stop.set()
            self.node.stop()
            thread.join(5)
            self.engine.dispose()

    def step(self) -> None:
        """Seal and announce local changes, catch up with every trusted site, fix routes."""
        if time.monotonic() >= self.links_due:
            self._relink()
        count = replica.publish_pending(
            self.factory, self.key, self.options.batch_changes, on_batch=self.node.publish
        )
        if count:
            self.node.publish(count)  # (a no-op unless the node restarted since)
        with self.factory() as session:
            trusted = [s for s in sites.all_sites(session) if not s.local]
        applied = sum(self._catch_up(site) for site in trusted)
        self._maybe_route(trusted, quiet=not applied)

    def _relink(self) -> None:
        """The links again (idempotent), and the routes by name if the forwarder lost them:
        a restarted forwarder starts with neither."""
        self.links_due = time.monotonic() + self.options.relink_interval
        try:
            self._link()
            if self.options.data_routes and not self.routes.intact():
                log.info("the forwarder lost the routes to other sites' files: setting them again")
                self.routes_dirty = True
                self.routes_due = 0.0
        except (TransportError, FederationError) as exc:  # (a linked site no longer trusted)
            log.warning("links to other sites: %s", exc)

    def _link(self) -> None:
        if not self.options.links:
            return
        with self.factory() as session:
            prefixes = {s.name: s.prefix for s in sites.all_sites(session)}
        group = name.from_uri(self.options.group)
        with Face(self.options.transport) as face:
            for site, uri in self.options.links:
                if site not in prefixes:
                    raise FederationError(f"--link {site}: not in the trust list")
                face_id = control.create_face(face, uri)
                control.add_route(face, name.from_uri(prefixes[site]), face_id)
                control.add_route(face, group, face_id)
                log.info("linked to site %s over face %d (%s)", site, face_id, uri)

    # --- other sites -----------------------------------------------------------------------------

    def _catch_up(self, site: sites.SiteInfo) -> int:
        """Fetch and apply the site's batches the state vector shows; how many were applied."""
        remote = self.remotes.setdefault(site.name, _Remote())
        if time.monotonic() < remote.retry_at:
            return 0
        seqs = self.node.seq_of(b"".join(name.from_uri(site.prefix)))
        if not seqs:
            return 0
        boot = max(seqs)
        if boot < site.boot:
            return 0  # an earlier incarnation of the site: its state is gone
        applied = site.applied if boot == site.boot else 0
        for number in range(applied + 1, seqs[boot] + 1):
            try:
                started = time.monotonic()
                sealed = self._fetch(site, boot, number)
                log.debug("site %s batch %d: %d bytes fetched in %.2f s", site.name, number,
                          len(sealed), time.monotonic() - started)  # fmt: skip
                replica.receive(self.factory, site, boot, number, sealed)
            except (FetchError, RefusedChangesError, TransportError) as exc:
                if isinstance(exc, IntegrityError):  # not signed by the site, or altered
                    replica.refuse(self.factory, site.name, f"batch {number} of {site.name}: {exc}")
                elif not isinstance(exc, RefusedChangesError):  # logged by receive
                    log.warning("site %s batch %d: %s", site.name, number, exc)
                remote.failures += 1
                remote.retry_at = time.monotonic() + min(
                    BACKOFF * 2 ** (remote.failures - 1), BACKOFF_MAX
                )
                return number - applied - 1
            remote.failures = 0
            self.routes_dirty = True
        return max(0, seqs[boot] - applied)

    def _fetch(self, site: sites.SiteInfo, boot: int, number: int) -> bytes:
        """Batch ``number`` over NDN: metadata signed by the site's key (pinned), segments
        checked against their digests, the whole batch against the signed SHA-256."""
        uri = names.batch_name(site.prefix, boot, number)
        key_id = keys.key_id(bytes.fromhex(site.public_key))
        opts = FetchOptions(trust_key=key_id, forwarder=self.options.transport)
        with tempfile.TemporaryDirectory(prefix="ndnsci-batch-") as tmp:
            part = os.path.join(tmp, "batch")
            received = consumer.receive(uri, part, part + ".state", opts=opts)
            with open(part, "rb") as f:
                data = f.read()
        digest = hashlib.sha256(data).hexdigest()
        if received.published_sha256 is None or digest != received.published_sha256:
            raise IntegrityError(
                f"{uri}: SHA-256 {digest} is not the signed {received.published_sha256}"
            )
        return data

    def _maybe_route(self, trusted: list[sites.SiteInfo], quiet: bool) -> None:
        if not (self.options.data_routes and self.routes_dirty and trusted):
            return
        if not quiet and time.monotonic() < self.routes_due:
            return
        with self.factory() as session:
            rows = session.execute(select(File.name, File.site)).all()
        wanted = routes.covering_prefixes(
            ((n, s or self.local.name) for n, s in rows), self.local.name
        )
        prefixes = {s.name: s.prefix for s in trusted}
        wanted = {s: p for s, p in wanted.items() if s in prefixes}
        for site in trusted:
            if site.name in wanted:
                wanted[site.name] |= routes.key_names(wanted[site.name], site.public_key)
        try:
            held = self.routes.update(wanted, prefixes)
        except TransportError as exc:
            log.warning("routes to other sites' files: %s", exc)
            return
        self.routes_dirty = False
        self.routes_due = time.monotonic() + ROUTE_INTERVAL
        log.info("routes by name to other sites' files: %d", held)
