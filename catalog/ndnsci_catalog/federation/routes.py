"""Routes by name to the files other sites hold (docs/federation.md, "Fetching across sites").

Names say what the data is, not where: ``/CMIP5/...`` is served at every site by that site's
own producer, which registers the scheme roots (``/CMIP5``, ``/CMS``) on its forwarder. For a
name another site holds, the catalog's records are the prefix announcements: for each other
site, the shortest prefixes under which every published name is that site's, routed over the
face(s) the forwarder uses for that site's prefix (set by the testbed, or by
``ndnsci catalog federate --link``), and the name of the site's key under each root (the
KeyLocator of its producer's metadata). The longest prefix wins, so an Interest for another
site's file leaves towards it (the routes capture: the local producer's route on the root,
child-inherit, does not reach below them), and one for our own file reaches our producer; a
router on the way caches the Data, so a second fetch at this site is answered from its cache.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from ndnsci.errors import TransportError
from ndnsci.ndn import control, keys, name, tlv
from ndnsci.ndn.transport import Face

log = logging.getLogger(__name__)

#: the route origin of these routes: a restarted daemon finds its own and replaces them
ORIGIN = 0x6E64
#: routes per site at most (names of two sites interleaved file by file need one per file)
MAX_ROUTES_PER_SITE = 20_000
ROUTE_COST = 10


def covering_prefixes(records: Iterable[tuple[str, str]], local: str) -> dict[str, set[str]]:
    """For each site but ``local``: the shortest prefixes holding only that site's names.

    ``records`` are (name, site) pairs. The names under a prefix ``p`` are the strings starting
    with ``p + "/"``, one run of the sorted names; so for a name ``n`` between the nearest
    names of other sites ``a`` (before) and ``b`` (after), the first component of ``n`` that
    ``a`` and ``b`` do not share with it closes the prefix.
    """
    ordered = sorted(records)
    parts = [n.split("/") for n, _ in ordered]
    sites = [s for _, s in ordered]
    found: dict[str, set[str]] = {}
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and sites[end + 1] == sites[start]:
            end += 1
        if sites[start] != local:
            before = parts[start - 1] if start > 0 else []
            after = parts[end + 1] if end + 1 < len(ordered) else []
            prefixes = found.setdefault(sites[start], set())
            for i in range(start, end + 1):
                depth = max(_shared(parts[i], before), _shared(parts[i], after)) + 1
                prefixes.add("/".join(parts[i][: min(depth, len(parts[i]) - 1) + 1]))
        start = end + 1
    return found


def key_names(prefixes: Iterable[str], public_key: str) -> set[str]:
    """``<root>/32=key/<key id>`` under each root of ``prefixes``: where a producer serving a
    catalog's names publishes its key (the site's key, as ``ndnsci up`` and the docs set it
    up). The name ends in the key's hash, so it is the site's key wherever it is asked."""
    key_id = keys.key_id(bytes.fromhex(public_key))
    return {f"/{p.split('/')[1]}/32=key/{key_id}" for p in prefixes}


def _shared(a: list[str], b: list[str]) -> int:
    """Components shared at the start (the leading "" of "/..." not counted)."""
    count = 0
    for x, y in zip(a[1:], b[1:], strict=False):
        if x != y:
            break
        count += 1
    return count


def _longest_match(fib: Mapping[bytes, list[tuple[int, int]]], prefix: bytes) -> list[int]:
    comps = tlv.split_components(prefix)
    for depth in range(len(comps), 0, -1):
        hops = fib.get(b"".join(comps[:depth]))
        if hops:
            return [face_id for face_id, _ in hops]
    return []


class RouteKeeper:
    """Keeps the forwarder's routes of :func:`covering_prefixes` in step with the catalog."""

    def __init__(self, transport: str | None = None) -> None:
        self.transport = transport
        #: what the last :meth:`update` installed
        self.installed: set[tuple[bytes, int]] = set()

    def update(self, wanted: Mapping[str, set[str]], site_prefixes: Mapping[str, str]) -> int:
        """Install ``wanted`` (site -> data prefixes) towards each site; returns routes held.

        What the forwarder holds is read first: routes a previous run left are replaced, and
        a restarted forwarder (which lost them) gets them again."""
        with Face(self.transport) as face:
            held = {(p, f) for p, f, origin, _ in control.rib(face) if origin == ORIGIN}
            target = _routes(control.fib(face), wanted, site_prefixes)
            for value, face_id in sorted(held - target):
                try:
                    control.remove_route(face, tlv.split_components(value), face_id, ORIGIN)
                except TransportError as exc:  # the face is gone, and its routes with it
                    log.debug("route %s: %s", name.value_to_uri(value), exc)
            for value, face_id in sorted(target - held):
                control.add_route(face, tlv.split_components(value), face_id, cost=ROUTE_COST,
                                  origin=ORIGIN, capture=True)  # fmt: skip
        self.installed = target
        return len(target)

    def intact(self) -> bool:
        """Whether the forwarder still holds what the last :meth:`update` installed."""
        if not self.installed:
            return True
        with Face(self.transport) as face:
            held = {(p, f) for p, f, origin, _ in control.rib(face) if origin == ORIGIN}
        return self.installed <= held


def _routes(
    fib: Mapping[bytes, list[tuple[int, int]]],
    wanted: Mapping[str, set[str]],
    site_prefixes: Mapping[str, str],
) -> set[tuple[bytes, int]]:
    """(prefix TLV-VALUE, face id) of every route ``wanted``: over the faces towards each site."""
    target: set[tuple[bytes, int]] = set()
    for site, prefixes in wanted.items():
        hops = _longest_match(fib, b"".join(name.from_uri(site_prefixes[site])))
        if not hops:
            log.warning("no route to site %s (%s): its files are not reachable by name",
                        site, site_prefixes[site])  # fmt: skip
            continue
        if len(prefixes) > MAX_ROUTES_PER_SITE:
            log.warning("site %s: %d data prefixes, routing the first %d", site, len(prefixes),
                        MAX_ROUTES_PER_SITE)  # fmt: skip
        for prefix in sorted(prefixes)[:MAX_ROUTES_PER_SITE]:
            value = b"".join(name.from_uri(prefix))
            target.update((value, hop) for hop in hops)
    return target
