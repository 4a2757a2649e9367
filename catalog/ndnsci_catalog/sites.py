"""The catalog's side of a federation of sites (docs/federation.md).

A catalog that names itself (``ndnsci catalog site init``) is a *site*: its records carry its
name, and its own changes are cut into numbered batches that other sites fetch (over NDN, or
over HTTP as a fallback) and apply. Everything here is database work in the caller's
transaction; signing, the wire formats and the network live in :mod:`ndnsci_catalog.federation`.

- Identity and trust list: the ``sites`` table. The local row is this catalog; the others are
  the sites whose signed changes it accepts, with how far they were applied (``boot`` and
  ``applied``: State Vector Sync's bootstrap time and sequence number).
- Outgoing: :func:`next_changes` reads this site's changes since the last batch (the current
  state of each changed name: a record, or a retraction), :func:`store_batch` keeps the signed
  batch, immutable, and moves the site's sequence number.
- Incoming: :func:`apply_batch` publishes and retracts through :mod:`ndnsci_catalog.ingest`
  with the batch's site as origin, and notes the batch as applied, in one transaction: a
  catalog killed while applying restarts from the last batch it committed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from ndnsci_catalog import bulk
from ndnsci_catalog.errors import ConflictError
from ndnsci_catalog.ingest import now, publish, record_conflict, retract
from ndnsci_catalog.models import CatalogState, Change, ChangeBatch, Conflict, File, Site, table
from ndnsci_catalog.records import PublishRecord, RecordError, parse_record
from ndnsci_translators.names import build_name, split_name

#: changes per batch: a batch is fetched, verified and applied as one unit
BATCH_CHANGES = 2000
_SITE_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}\Z")
_PUBLIC_KEY = re.compile(r"[0-9a-f]{64}\Z")
#: records re-published per transaction when a catalog names itself
STAMP_BATCH = 10_000


class SiteError(ValueError):
    """A site name, prefix or key that cannot be used, or an identity that clashes."""


@dataclass(frozen=True, slots=True)
class SiteInfo:
    name: str
    prefix: str
    public_key: str
    local: bool
    boot: int
    applied: int
    covered_seq: int
    refused: int
    last_error: str | None
    added_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class Outgoing:
    """This site's changes not yet in a batch: ``changes`` are what the batch will carry."""

    first_seq: int
    last_seq: int
    #: ``{"op": "publish", "name", "record"}`` or ``{"op": "retract", "name"}``, one per name
    changes: list[dict[str, Any]]


@dataclass(slots=True)
class ApplyResult:
    published: int = 0
    replaced: int = 0
    unchanged: int = 0
    retracted: int = 0
    #: names another site holds (recorded in ``conflicts``)
    conflicts: list[str] = field(default_factory=list)
    #: changes that could not be read (a malformed record): counted, logged by the caller
    refused: list[str] = field(default_factory=list)


# --- identity and trust ---------------------------------------------------------------------


def check_site(name: str, prefix: str, public_key: str) -> tuple[str, str, str]:
    """Normalised (name, prefix, public key hex), or SiteError saying what is wrong."""
    if not _SITE_NAME.match(name):
        raise SiteError(
            f"site name {name!r}: a lower-case letter, then up to 63 letters, digits, '-' or '_'"
        )
    try:
        components = split_name(prefix)
    except ValueError as exc:
        raise SiteError(f"site prefix {prefix!r} is not an NDN name: {exc}") from None
    if not components or any(c in ("", ".", "..") for c in components):
        raise SiteError(f"site prefix {prefix!r}: an NDN name such as /{name}")
    key = public_key.strip().lower()
    if not _PUBLIC_KEY.match(key):
        raise SiteError(
            "the key must be the site's raw Ed25519 public key in hex (64 digits), as "
            "`ndnsci keys show` prints it"
        )
    return name, build_name(components), key


def _info(row: Site) -> SiteInfo:
    return SiteInfo(
        name=row.name,
        prefix=row.prefix,
        public_key=row.public_key,
        local=row.local,
        boot=row.boot,
        applied=row.applied,
        covered_seq=row.covered_seq,
        refused=row.refused,
        last_error=row.last_error,
        added_at=row.added_at,
    )


def all_sites(session: Session) -> list[SiteInfo]:
    """This catalog's site first, then the trusted sites by name."""
    rows = session.scalars(select(Site).order_by(Site.local.desc(), Site.name))
    return [_info(row) for row in rows]


def local_site(session: Session) -> SiteInfo | None:
    row = session.scalars(select(Site).where(Site.local.is_(True))).first()
    return _info(row) if row is not None else None


def get_site(session: Session, name: str) -> SiteInfo | None:
    row = session.get(Site, name)
    return _info(row) if row is not None else None


def init_local(
    session: Session, name: str, prefix: str, public_key: str, boot: int | None = None
) -> SiteInfo:
    """Name this catalog (idempotent with the same name, prefix and key)."""
    name, prefix, public_key = check_site(name, prefix, public_key)
    current = local_site(session)
    if current is not None:
        if (current.name, current.prefix, current.public_key) == (name, prefix, public_key):
            return current
        raise SiteError(
            f"this catalog is site {current.name!r} ({current.prefix}, key "
            f"{current.public_key[:16]}...) already; a site keeps its name"
        )
    _refuse_taken(session, name, prefix)
    session.execute(
        insert(table(Site)).values(
            name=name, prefix=prefix, public_key=public_key, local=True, added_at=now(),
            boot=boot or int(time.time()), applied=0, covered_seq=0, refused=0,
        )
    )  # fmt: skip
    info = local_site(session)
    assert info is not None
    return info


def trust(session: Session, name: str, prefix: str, public_key: str) -> SiteInfo:
    """Accept the changes of site ``name`` signed by ``public_key`` (a new key replaces the old
    one; how far the site's changes were applied is kept)."""
    name, prefix, public_key = check_site(name, prefix, public_key)
    current = get_site(session, name)
    if current is not None and current.local:
        raise SiteError(f"{name!r} is this catalog's own site")
    if current is None:
        _refuse_taken(session, name, prefix)
        session.execute(
            insert(table(Site)).values(
                name=name, prefix=prefix, public_key=public_key, local=False, added_at=now(),
                boot=0, applied=0, covered_seq=0, refused=0,
            )
        )  # fmt: skip
    else:
        if prefix != current.prefix:
            _refuse_taken(session, name, prefix)
        session.execute(
            update(table(Site))
            .where(Site.name == name)
            .values(prefix=prefix, public_key=public_key)
        )
    info = get_site(session, name)
    assert info is not None
    return info


def untrust(session: Session, name: str) -> bool:
    """Stop accepting site ``name``'s changes (its records stay); False if it was not trusted."""
    result = session.execute(delete(table(Site)).where(Site.name == name, Site.local.is_(False)))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def _refuse_taken(session: Session, name: str, prefix: str) -> None:
    for row in session.scalars(select(Site).where((Site.name == name) | (Site.prefix == prefix))):
        raise SiteError(f"site {row.name!r} has the name or the prefix {row.prefix} already")


def note_refused(session: Session, name: str, error: str) -> None:
    session.execute(
        update(table(Site))
        .where(Site.name == name)
        .values(refused=Site.refused + 1, last_error=error[:2000])
    )


def stamp_unnamed(session: Session, limit: int = STAMP_BATCH) -> int:
    """Re-publish up to ``limit`` records published before this catalog had a site name, now
    under it (each becomes a change, so other sites receive them). Returns how many."""
    # the publishers' lock first: what is read below cannot change before it is republished
    session.execute(update(table(CatalogState)).values(last_seq=CatalogState.last_seq))
    names = list(session.scalars(select(File.name).where(File.site.is_(None)).limit(limit)))
    if not names:
        return 0
    rows = bulk.writer(session.connection()).existing(names)
    # each record is the published one itself (not another file's): it replaces itself
    publish(session, [parse_record(record_of(row)) for row in rows.values()], replace=True)
    return len(names)


# --- outgoing: this site's changes ------------------------------------------------------------


def record_of(row: dict[str, Any]) -> dict[str, Any]:
    """A published row as the record a site sends (what :func:`parse_record` reads back)."""
    return {column: row[column] for column in bulk.RECORD_COLUMNS}


def next_changes(session: Session, limit: int = BATCH_CHANGES) -> tuple[Outgoing | None, int]:
    """The local site's changes after its last batch (at most ``limit``) and the seq the next
    scan starts after (changes of other sites are skipped for good)."""
    site = local_site(session)
    if site is None:
        return None, 0
    last_seq = session.scalar(select(CatalogState.last_seq)) or 0
    rows = session.execute(
        select(Change.seq, Change.name)
        .where(Change.seq > site.covered_seq)
        .where((Change.site == site.name) | Change.site.is_(None))
        .order_by(Change.seq)
        .limit(limit)
    ).all()
    # fewer than asked: nothing more of ours up to the last seq seen (seqs commit in order,
    # so every change below a visible one is visible), so the next scan starts there
    seen = max(last_seq, site.covered_seq, rows[-1][0] if rows else 0)
    scanned_to = rows[-1][0] if len(rows) == limit else seen
    if not rows:
        return None, scanned_to
    latest: dict[str, int] = {}
    for seq, name in rows:
        latest.pop(name, None)  # a name changed twice goes where it changed last
        latest[name] = seq
    current = bulk.writer(session.connection()).existing(list(latest))
    changes = []
    for name in latest:
        row = current.get(name)
        if row is not None and (row["site"] or site.name) == site.name:
            changes.append({"op": "publish", "name": name, "record": record_of(row)})
        else:  # retracted, or held by another site since: ours is gone
            changes.append({"op": "retract", "name": name})
    return Outgoing(first_seq=rows[0][0], last_seq=rows[-1][0], changes=changes), scanned_to


def store_batch(
    session: Session, number: int, outgoing: Outgoing, envelope: bytes, scanned_to: int
) -> None:
    """Keep batch ``number`` (the next one) and move the local site past it."""
    session.execute(
        insert(table(ChangeBatch)).values(
            number=number,
            first_seq=outgoing.first_seq,
            last_seq=outgoing.last_seq,
            changes=len(outgoing.changes),
            envelope=envelope,
            created_at=now(),
        )
    )
    session.execute(
        update(table(Site))
        .where(Site.local.is_(True))
        .values(applied=number, covered_seq=scanned_to)
    )


def skip_to(session: Session, scanned_to: int) -> None:
    """Nothing of ours up to ``scanned_to``: the next scan starts after it."""
    session.execute(
        update(table(Site))
        .where(Site.local.is_(True), Site.covered_seq < scanned_to)
        .values(covered_seq=scanned_to)
    )


def batch_envelope(session: Session, number: int) -> bytes | None:
    return session.scalar(select(ChangeBatch.envelope).where(ChangeBatch.number == number))


def batch_bytes(session: Session) -> int:
    """The size of every stored batch (what another site fetches to catch up from scratch)."""
    total = func.coalesce(func.sum(func.length(ChangeBatch.envelope)), 0)
    return int(session.scalar(select(total)) or 0)


# --- incoming: another site's batch -----------------------------------------------------------


def apply_batch(
    session: Session, site: str, boot: int, number: int, changes: Sequence[dict[str, Any]]
) -> ApplyResult:
    """Apply batch ``number`` of ``site`` (verified by the caller) and note it applied."""
    result = ApplyResult()
    for op, group in _runs(changes):
        if op == "publish":
            _apply_publishes(session, site, group, result)
        else:
            for change in group:
                _apply_retract(session, site, change, result)
    session.execute(update(table(Site)).where(Site.name == site).values(boot=boot, applied=number))
    return result


def _runs(changes: Iterable[dict[str, Any]]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """Consecutive changes of one kind (a batch has at most one change per name)."""
    run: list[dict[str, Any]] = []
    op = ""
    for change in changes:
        kind = "publish" if change.get("op") == "publish" else "retract"
        if run and kind != op:
            yield op, run
            run = []
        op = kind
        run.append(change)
    if run:
        yield op, run


def _apply_publishes(
    session: Session, site: str, group: list[dict[str, Any]], result: ApplyResult
) -> None:
    records: list[PublishRecord] = []
    for change in group:
        try:
            record = parse_record(change.get("record"))
            if record.name != change.get("name"):
                raise RecordError("the record's name is not the change's")
        except RecordError as exc:
            result.refused.append(f"{change.get('name')!r}: {exc}")
            continue
        records.append(record)
    # the site that holds a name decided what it publishes under it (its own collision check
    # ran there): a replica follows, or it would differ from the site it mirrors
    published = publish(session, records, replace=True, origin=site)
    result.published += published.inserted
    result.replaced += published.replaced
    result.unchanged += published.unchanged
    result.conflicts.extend(name for name, _ in published.conflicts)


def _apply_retract(
    session: Session, site: str, change: dict[str, Any], result: ApplyResult
) -> None:
    name = change.get("name")
    if not isinstance(name, str):
        result.refused.append(f"{name!r}: a retraction without a name")
        return
    try:
        if retract(session, name, origin=site) is not None:
            result.retracted += 1
    except ConflictError as conflict:
        record_conflict(session, conflict, "retract")
        result.conflicts.append(name)


# --- conflicts --------------------------------------------------------------------------------


def conflicts(session: Session, limit: int = 1000, offset: int = 0) -> list[dict[str, Any]]:
    rows = session.execute(
        select(Conflict.name, Conflict.held_by, Conflict.claimed_by, Conflict.op, Conflict.at)
        .order_by(Conflict.id)
        .limit(limit)
        .offset(offset)
    ).mappings()
    return [dict(row) for row in rows]


def conflict_count(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(Conflict)) or 0)
