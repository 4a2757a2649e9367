"""Cutting this site's changes into signed batches, and applying another site's.

Both transports (NDN: :mod:`ndnsci_catalog.federation.service`; HTTP:
:mod:`ndnsci_catalog.federation.mirror`) move the same signed envelopes and end here, so a batch
is verified and applied the same way whichever way it came.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from ndnsci.errors import FederationError, RefusedChangesError
from ndnsci.ndn import keys
from ndnsci_catalog import sites
from ndnsci_catalog.federation import envelope
from ndnsci_catalog.ingest import now

log = logging.getLogger(__name__)


def local_identity(factory: sessionmaker[Session], key: keys.PublisherKey) -> sites.SiteInfo:
    """This catalog's site, checked against the key that will sign for it."""
    with factory() as session:
        local = sites.local_site(session)
    if local is None:
        raise FederationError(
            "this catalog has no site name yet: run `ndnsci catalog site init NAME --prefix /NAME`"
        )
    if local.public_key != key.public.hex():
        raise FederationError(
            f"key {key.name!r} ({key.key_id}) is not site {local.name}'s key "
            f"({keys.key_id(bytes.fromhex(local.public_key))})"
        )
    return local


def publish_pending(
    factory: sessionmaker[Session],
    key: keys.PublisherKey,
    limit: int = sites.BATCH_CHANGES,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Seal this site's changes since its last batch into new batches; the batch count.
    ``on_batch(number)`` is called as each is stored (other sites may start on it at once).

    The changes are read in one transaction and the batch written in another that writes
    first (SQLite cannot turn a read transaction into a write once another process
    committed). Only this daemon writes the local site's row and its batches, so what was
    read stays true in between.
    """
    while True:
        with factory() as session:
            local = sites.local_site(session)
            if local is None:
                return 0
            outgoing, scanned_to = sites.next_changes(session, limit)
            session.rollback()
            if outgoing is None:
                if scanned_to > local.covered_seq:
                    sites.skip_to(session, scanned_to)
                    session.commit()
                return local.applied
            number = local.applied + 1
            header = envelope.Header(
                site=local.name,
                prefix=local.prefix,
                boot=local.boot,
                batch=number,
                first_seq=outgoing.first_seq,
                last_seq=outgoing.last_seq,
                changes=len(outgoing.changes),
                created=now(),
            )
            sealed = envelope.seal(header, outgoing.changes, key)
            sites.store_batch(session, number, outgoing, sealed, scanned_to)
            session.commit()
            if on_batch is not None:
                on_batch(number)
            log.info("batch %d: %d changes (seq %d..%d, %d bytes)", number,
                     len(outgoing.changes), outgoing.first_seq, outgoing.last_seq,
                     len(sealed))  # fmt: skip


def receive(
    factory: sessionmaker[Session],
    site: sites.SiteInfo,
    boot: int | None,
    number: int,
    sealed: bytes,
) -> sites.ApplyResult:
    """Verify batch ``number`` of ``site`` against the trust list and apply it.

    Raises RefusedChangesError (logged, and counted against the site) when it is forged,
    tampered with or malformed: nothing of it is applied.
    """
    started = time.monotonic()
    try:
        batch = envelope.open_envelope(
            sealed, site=site.name, public_key=site.public_key, boot=boot, batch=number
        )
    except RefusedChangesError as exc:
        refuse(factory, site.name, str(exc))
        raise
    opened = time.monotonic()
    with factory() as session:
        result = sites.apply_batch(session, site.name, batch.header.boot, number, batch.changes)
        session.commit()
    log.info("site %s batch %d: %d new, %d replaced, %d unchanged, %d retracted "
             "(verified in %.2f s, applied in %.2f s)", site.name, number, result.published,
             result.replaced, result.unchanged, result.retracted, opened - started,
             time.monotonic() - opened)  # fmt: skip
    if result.conflicts:
        log.warning("site %s batch %d: %d conflicts (names another site holds), e.g. %s",
                    site.name, number, len(result.conflicts), result.conflicts[0])  # fmt: skip
    for why in result.refused:
        log.warning("site %s batch %d: change refused: %s", site.name, number, why)
    return result


def refuse(factory: sessionmaker[Session], site: str, why: str) -> None:
    """Log a refused batch and count it against ``site`` (``ndnsci catalog site show``)."""
    log.warning("REFUSED %s", why)
    with factory() as session:
        sites.note_refused(session, site, why)
        session.commit()
