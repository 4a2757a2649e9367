"""Three sites on one machine converge over NDN, and stay correct under faults.

Each site: its own NDNd forwarder (UDP faces between them on loopback), SQLite catalog, key,
``ndnsci catalog serve`` and ``ndnsci catalog federate``. The tests run in order on the same
three sites, each on names of its own (one institute per test).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import update
from support import wait_for

from ndnsci.ndn import keys, name
from ndnsci.ndn.forwarder import binary
from ndnsci_catalog.federation import envelope, names, svs
from ndnsci_catalog.federation.serve import BatchProducer
from ndnsci_catalog.ingest import retract
from ndnsci_catalog.models import ChangeBatch, table

from .sites import Site, link_all, records

#: small batches, so that a sync of a few thousand records takes several
BATCH = 500
CONVERGE = 180.0


@pytest.fixture(scope="module")
def three(make_sites: Callable[..., list[Site]]) -> Iterator[list[Site]]:
    group = make_sites("a", "b", "c")
    link_all(group)
    for site in group:
        site.serve_catalog()
    for site in group:
        site.federate("--batch-changes", str(BATCH))
    yield group


def converged(group: list[Site], origin: str, expected: set[str]) -> Callable[[], bool]:
    """Every site holds exactly ``expected`` from ``origin`` (counted first: cheap to poll)."""

    def check() -> bool:
        if any(site.count(origin) != len(expected) for site in group):
            return False
        return all(
            {n for n, s in site.names().items() if s == origin} == expected for site in group
        )

    return check


def test_ten_thousand_records_published_at_one_site_reach_every_site(three: list[Site]) -> None:
    a, b, c = three
    published = records(10_000, "SITEA", "ModelA")
    started = time.monotonic()
    done = a.publish_records(published)
    assert done.returncode == 0, done.stderr
    expected = {r["name"] for r in published}
    wait_for(converged(three, "a", expected), CONVERGE, "10k records at b and c", every=0.5)
    print(f"10k records converged at 3 sites in {time.monotonic() - started:.1f} s",
          file=sys.stderr)  # fmt: skip
    assert a.site_row("a").applied == 10_000 // BATCH  # a's batches, announced by SVS
    assert b.site_row("a").applied == c.site_row("a").applied == 10_000 // BATCH
    for site in three:
        assert "REFUSED" not in site.log("federate")


def test_search_results_are_identical_at_every_site(three: list[Site]) -> None:
    queries: list[dict[str, Any]] = [
        {"model": "ModelA", "limit": 50},
        {"site": "a", "variable": "tas", "limit": 20, "offset": 100},
        {"q": "ModelA", "sort": "-name", "limit": 10},
        {"institute": "SITEA", "ensemble": "r7i1p1", "facets": "variable,site"},
        {"prefix": "/CMIP5/output1/SITEA/ModelA/historical/mon/atmos/Amon/r1i1p1"},
    ]
    for params in queries:
        answers = [site.search(**params) for site in three]
        assert answers[0]["total"] > 0, params
        assert answers[1] == answers[0] == answers[2], params
    body = three[1].search(model="ModelA", limit=1)
    assert body["results"][0]["site"] == "a"
    assert body["facets"]["site"] == {"a": 10_000}


def test_ndnd_cat_reads_a_batch_as_any_ndn_object(three: list[Site]) -> None:
    """The batches are ordinary RDR objects: NDNd's own consumer fetches one by name."""
    a, b, _ = three
    uri = names.batch_name(a.prefix, a.boot, 1)
    cat = subprocess.run(
        [str(binary()), "cat", uri], capture_output=True, timeout=30, check=False,
        env={"NDN_CLIENT_TRANSPORT": b.fw.uri, "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert cat.returncode == 0, cat.stderr
    with a.sessions() as session:
        stored = session.get(ChangeBatch, 1)
        assert stored is not None
        assert cat.stdout == stored.envelope


def test_a_site_killed_mid_sync_restarts_where_it_stopped(three: list[Site]) -> None:
    a, _, c = three
    before = c.site_row("a").applied
    batches = 6000 // BATCH
    published = records(6000, "SITEA2", "ModelA2")
    assert a.publish_records(published).returncode == 0
    wait_for(lambda: before < c.site_row("a").applied < before + batches, 60,
             "c in the middle of the sync", every=0.01)  # fmt: skip
    c.stop("federate", signal.SIGKILL)
    partial = c.site_row("a").applied
    assert before < partial < before + batches, "the sync was not interrupted half way"
    assert c.count("a") < 10_000 + 6000
    c.federate("--batch-changes", str(BATCH))
    expected = {r["name"] for r in records(10_000, "SITEA", "ModelA")} | {
        r["name"] for r in published
    }
    wait_for(converged(three, "a", expected), CONVERGE, "c after its restart")
    assert c.site_row("a").applied == a.site_row("a").applied
    assert f"site a batch {partial + 1}:" in c.log("federate")  # it went on from there


def test_retractions_propagate_and_an_offline_site_catches_up(three: list[Site]) -> None:
    a, b, c = three
    c.stop("federate")
    gone = [r["name"] for r in records(300, "SITEA", "ModelA")]
    with a.sessions() as session:
        for n in gone:
            assert retract(session, n) is not None
        session.commit()
    added = records(200, "SITEA3", "ModelA3")
    assert a.publish_records(added).returncode == 0
    expected = set(a.names()) - {n for n, s in a.names().items() if s != "a"}
    assert not expected & set(gone)
    wait_for(converged([a, b], "a", expected), CONVERGE, "b after the retractions")
    assert set(gone) <= set(c.names())  # c was away: it has not seen them yet
    c.federate("--batch-changes", str(BATCH))
    wait_for(converged(three, "a", expected), CONVERGE, "c catching up")
    for site in three:
        assert site.search(model="ModelA")["total"] == 10_000 - 300


def test_two_sites_publishing_one_name_is_a_conflict_never_merged(three: list[Site]) -> None:
    a, b, c = three
    b.stop("federate")  # b does not know what a publishes meanwhile
    ours = records(3, "SHARED", "Twin")
    theirs = [{**r, "size": 7} for r in ours]
    shared = {r["name"] for r in ours}
    assert a.publish_records(ours).returncode == 0
    assert b.publish_records(theirs).returncode == 0  # sealed when b's daemon is back
    wait_for(lambda: shared <= set(c.names()), CONVERGE, "a's records at c")
    b.federate("--batch-changes", str(BATCH))

    def reported(site: Site) -> Callable[[], bool]:
        return lambda: shared <= {x["name"] for x in conflicts(site)}

    for site in three:
        wait_for(reported(site), CONVERGE, f"the conflicts at {site.name}")
    # each site keeps what it had first; nothing is merged or replaced
    assert {a.names()[n] for n in shared} == {"a"}
    assert {b.names()[n] for n in shared} == {"b"}
    assert {c.names()[n] for n in shared} == {"a"}  # c had a's first
    at_a = [x for x in conflicts(a) if x["name"] in shared]
    assert {(x["held_by"], x["claimed_by"]) for x in at_a} == {("a", "b")}
    assert all(r["size"] != 7 for r in a.search(model="Twin")["results"])
    assert all(r["size"] == 7 for r in b.search(model="Twin")["results"])
    # a local publish of a name another site holds is quarantined, not published
    again = b.publish_records(records(3, "SITEA3", "ModelA3"))
    assert again.returncode == 1
    assert "held by site 'a'" in again.stderr


def conflicts(site: Site) -> list[dict[str, Any]]:
    import httpx

    return list(httpx.get(f"{site.url}/api/v1/conflicts", timeout=10).json()["conflicts"])


def test_a_forged_batch_is_refused_and_logged(three: list[Site]) -> None:
    """Another key answers for a's next batch on b's forwarder and announces it by SVS."""
    a, b, _ = three
    rogue_key = keys.PublisherKey("rogue", _new_pem())
    number = a.site_row("a").applied + 1
    forged = [{"op": "publish", "name": "/CMIP5/output1/FORGED/x/y.nc",
               "record": {"name": "/CMIP5/output1/FORGED/x/y.nc", "scheme": "cmip5"}}]  # fmt: skip
    header = envelope.Header(site="a", prefix=a.prefix, boot=a.boot, batch=number,
                             first_seq=1, last_seq=1, changes=1, created="now")  # fmt: skip
    sealed = envelope.seal(header, forged, rogue_key)
    import threading

    stop = threading.Event()
    producer = BatchProducer(a.prefix, a.boot, rogue_key, lambda n: sealed if n == number else None,
                             transport=b.fw.uri)  # fmt: skip
    ready = threading.Event()
    thread = threading.Thread(target=producer.serve_forever, args=(stop, ready), daemon=True)
    thread.start()
    assert ready.wait(10)
    node = svs.SyncNode(
        b"".join(name.from_uri(names.DEFAULT_GROUP)), b"".join(name.from_uri(a.prefix)),
        boot=a.boot, key=rogue_key, key_name=b"".join(name.from_uri("/a/catalog/32=key/x")),
        on_update=lambda _u: None, transport=b.fw.uri, periodic=1,
    )  # fmt: skip
    refused_before = b.site_row("a").refused
    try:
        node.start()
        node.publish(number)
        wait_for(lambda: b.site_row("a").refused > refused_before, 60, "b refusing the batch")
    finally:
        node.stop()
        stop.set()
        thread.join(5)
    assert "REFUSED" in b.log("federate")
    assert f"not the trusted {keys.key_id(bytes.fromhex(a.public_key))}" in b.log("federate")
    assert "/CMIP5/output1/FORGED/x/y.nc" not in b.names()
    assert b.site_row("a").applied == number - 1
    # the real batch of that number, when a publishes it, is applied
    more = records(10, "SITEA4", "ModelA4")
    assert a.publish_records(more).returncode == 0
    wait_for(lambda: {r["name"] for r in more} <= set(b.names()), CONVERGE, "b after the forgery")


def _new_pem() -> bytes:
    from Cryptodome.PublicKey import ECC

    return ECC.generate(curve="ed25519").export_key(format="PEM").encode()


def test_a_tampered_batch_is_refused_over_ndn_and_over_http(
    three: list[Site], make_sites: Callable[..., list[Site]]
) -> None:
    a, b, c = three
    b.stop("federate")
    c.stop("federate")  # nobody fetches the batch before it is damaged
    more = records(20, "SITEA5", "ModelA5")
    assert a.publish_records(more).returncode == 0
    number = wait_for(lambda: _batch_of(a, more[0]["name"]), 30, "a's batch")
    with a.sessions() as session:
        good = session.get(ChangeBatch, number).envelope  # type: ignore[union-attr]
        bad = good[:-40] + bytes([good[-40] ^ 1]) + good[-39:]  # one bit, in the body
        session.execute(update(table(ChangeBatch)).where(ChangeBatch.number == number)
                        .values(envelope=bad))  # fmt: skip
        session.commit()
    refused_before = b.site_row("a").refused
    b.federate("--batch-changes", str(BATCH))
    wait_for(lambda: b.site_row("a").refused > refused_before, 60, "b refusing it")
    assert "the signature is not site a's key" in b.log("federate")
    assert not {r["name"] for r in more} & set(b.names())
    # the HTTP fallback checks the same signature
    (d,) = make_sites("d")
    d.trust(a)
    mirror = subprocess.run(
        [sys.executable, "-m", "ndnsci", "catalog", "mirror", "--from", a.url, "--db", d.db],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert mirror.returncode != 0
    assert "forged or tampered" in mirror.stderr
    assert d.site_row("a").applied == number - 1
    assert not {r["name"] for r in more} & set(d.names())
    # repaired at the source, the HTTP mirror takes it (over NDN, a batch is immutable: the
    # damaged one may sit in caches, so a site whose batches are damaged starts a new boot)
    with a.sessions() as session:
        session.execute(update(table(ChangeBatch)).where(ChangeBatch.number == number)
                        .values(envelope=good))  # fmt: skip
        session.commit()
    mirror = subprocess.run(
        [sys.executable, "-m", "ndnsci", "catalog", "mirror", "--from", a.url, "--db", d.db],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert mirror.returncode == 0, mirror.stderr
    assert set(d.names()) == {n for n, s in a.names().items() if s == "a"}


def _batch_of(site: Site, wanted: str) -> int | None:
    """The number of the batch that carries ``wanted`` (None until it is sealed)."""
    from sqlalchemy import select

    with site.sessions() as session:
        rows = session.execute(select(ChangeBatch.number, ChangeBatch.envelope)).all()
    for number, sealed in rows:
        batch = envelope.open_envelope(sealed, site=site.name, public_key=site.public_key,
                                       boot=site.boot, batch=number)  # fmt: skip
        if any(change["name"] == wanted for change in batch.changes):
            return int(number)
    return None
