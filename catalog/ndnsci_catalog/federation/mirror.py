"""``ndnsci catalog mirror --from URL``: another site's changes over HTTP, where NDN is not there.

The same signed batches as over NDN (``GET /api/v1/sites/{site}/batches/{n}``), verified with
the key of *our* trust list (what the server says about its key is not trusted) and applied by
:func:`~ndnsci_catalog.federation.replica.receive`. Progress is the same per-site counter
as over NDN, so a site can switch between the two, and a mirror stopped half way continues where
it was.

A site without NDN seals its own changes into those batches with ``ndnsci catalog seal``
(:func:`seal`); a site that runs ``ndnsci catalog federate`` has them sealed by the daemon.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ndnsci.errors import CatalogUnavailableError, FederationError
from ndnsci_catalog import sites
from ndnsci_catalog.database import make_engine, make_sessionmaker

log = logging.getLogger(__name__)
TIMEOUT = 60.0


def mirror(
    db: str,
    url: str,
    *,
    follow: bool = False,
    interval: float = 5.0,
    stop: threading.Event | None = None,
) -> int:
    """Apply the batches of the site at ``url`` that ``db`` lacks; the number applied.

    With ``follow``, keep polling every ``interval`` seconds until ``stop`` is set.
    Raises FederationError (the site is not trusted here) or CatalogUnavailableError.
    """
    import httpx

    from ndnsci_catalog.federation.replica import receive

    stop = stop or threading.Event()
    engine = make_engine(db)
    factory = make_sessionmaker(engine)
    applied = 0
    base = url.rstrip("/") + "/api/v1/"
    try:
        with httpx.Client(base_url=base, timeout=TIMEOUT) as client:
            while True:
                remote = _remote_site(client, url)
                with factory() as session:
                    trusted = sites.get_site(session, remote["name"])
                if trusted is None or trusted.local:
                    raise FederationError(
                        f"site {remote['name']!r} at {url} is not in the trust list: "
                        f"`ndnsci catalog trust add {remote['name']} KEY --prefix "
                        f"{remote['prefix']}` (the key from the site, checked out of band)"
                    )
                boot = int(remote["boot"])
                start = trusted.applied if boot == trusted.boot else 0
                if boot < trusted.boot:
                    log.warning("site %s at %s is an earlier incarnation (boot %d < %d)",
                                trusted.name, url, boot, trusted.boot)  # fmt: skip
                    start = int(remote["applied"])
                for number in range(start + 1, int(remote["applied"]) + 1):
                    sealed = _get(client, url, f"sites/{trusted.name}/batches/{number}").content
                    receive(factory, trusted, boot, number, sealed)
                    applied += 1
                    with factory() as session:
                        trusted = sites.get_site(session, trusted.name) or trusted
                if not follow or stop.wait(interval):
                    return applied
    finally:
        engine.dispose()


def seal(
    db: str,
    key_name: str = "default",
    *,
    follow: bool = False,
    interval: float = 0.5,
    limit: int = sites.BATCH_CHANGES,
    stop: threading.Event | None = None,
) -> int:
    """Seal this site's changes not yet in a batch into signed batches, for the sites that
    mirror it over HTTP; the number of this site's batches after the last look.

    What ``ndnsci catalog federate`` does each half second, without NDN: run one or the other
    (each assumes it is the only one sealing). With ``follow``, look again every ``interval``
    seconds until ``stop`` is set; a database that cannot be read for a moment costs one look.
    Raises FederationError (no site name, or ``key_name`` is not the site's key).
    """
    from sqlalchemy.exc import OperationalError

    from ndnsci.ndn import keys
    from ndnsci_catalog.federation.replica import local_identity, publish_pending

    stop = stop or threading.Event()
    key = keys.load(key_name)
    engine = make_engine(db)
    factory = make_sessionmaker(engine)
    try:
        local = local_identity(factory, key)
        count = local.applied
        while True:
            try:
                count = publish_pending(factory, key, limit)
            except OperationalError as exc:
                if not follow:
                    raise
                log.warning("sealing skipped a look: %s", exc)
            if not follow or stop.wait(interval):
                return count
    finally:
        engine.dispose()


def _remote_site(client: Any, url: str) -> dict[str, Any]:
    local = _get(client, url, "sites").json().get("local")
    if not local:
        raise FederationError(f"the catalog at {url} is not a site (no `ndnsci catalog site init`)")
    return dict(local)


def _get(client: Any, url: str, path: str) -> Any:
    import httpx

    try:
        response = client.get(path)
    except httpx.HTTPError as exc:
        raise CatalogUnavailableError(f"{url}: {exc}", url=url) from exc
    if response.status_code != 200:
        raise FederationError(f"{url}/api/v1/{path}: {response.status_code} {response.text[:300]}")
    return response
