"""Publishing files and records into a catalog: the one service ``ndnsci publish`` calls, into a
catalog server (through the SDK's :meth:`~ndnsci.sdk.client.Catalog.publish`) or straight into
a database (the catalog's ingest, its results turned into the SDK's
:class:`~ndnsci.sdk.publish.PublishBatch`).

:func:`publish` walks directories (every file described by ``jobs`` processes,
:func:`ndnsci.sdk.describe.describe_all`) or reads JSON lines, and publishes them in batches,
one transaction each; what was published, skipped, quarantined and collided is added to a
:class:`Tally` as each batch commits, so a caller that stops on an error still reports what got
in. Files whose size and mtime did not change since they were published to the same target are
skipped (:class:`SkipState`, in the user's state folder) unless ``force``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import IO, Any, Protocol

from ndnsci.sdk.describe import DescribedFile, Quarantined, describe_all, found
from ndnsci.sdk.progress import counter
from ndnsci.sdk.publish import Collision, Conflict, PublishBatch, Refused

#: records per transaction with --records into a database: at a million files a batch dirties
#: pages all over the name, tree and free-text indexes, and bigger batches dirty each page
#: fewer times (a catalog server states its own limit, which wins)
RECORDS_BATCH = 100_000
#: processes preparing --records batches at most (the writer is one more): two keep up with it
PREPARE_PROCESSES = 2


@dataclass
class Tally:
    """What a publish did: records published, files skipped (unchanged), records quarantined
    (``source``, ``code``, ``reason``) and name collisions, in the order they were found."""

    replace: bool = False
    published: int = 0
    skipped: int = 0
    quarantined: list[dict[str, str]] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)

    @property
    def kept_out(self) -> int:
        """Collisions whose file was not published (the first file of the name stays)."""
        return sum(not c.replaced for c in self.collisions)

    @property
    def ok(self) -> bool:
        """Everything was published: nothing quarantined, no file kept out by a collision."""
        return not self.quarantined and not self.kept_out

    def quarantine(self, source: str, code: str, reason: str) -> None:
        self.quarantined.append({"source": source, "code": code, "reason": reason})

    def collision(self, collision: Collision) -> None:
        self.collisions.append(collision)

    def conflict(self, source: str, held_by: str | None) -> None:
        """A name another site of the federation holds: not published (docs/federation.md)."""
        reason = (
            f"the name is held by site {held_by!r}: a conflict, not published "
            "(ndnsci catalog conflicts)"
        )
        self.quarantine(source, "held-by-another-site", reason)

    def add(self, batch: PublishBatch) -> None:
        self.published += batch.inserted + batch.replaced + batch.unchanged
        for refused in batch.refused:
            self.quarantine(refused.source, "refused", refused.reason)
        self.collisions += batch.collisions
        for conflict in batch.conflicts:
            self.conflict(conflict.source, conflict.held_by)


class Target(Protocol):
    """Where records are published: :class:`DatabaseTarget` or :class:`CatalogTarget`."""

    def publish(
        self,
        items: Iterable[Any],
        *,
        batch: int,
        replace: bool,
        on_batch: Callable[[PublishBatch], None],
    ) -> None:
        """Publish ``items`` (described files, or JSON lines), telling ``on_batch`` of each."""

    def load(self, lines: IO[bytes], *, batch: int, jobs: int, replace: bool, tally: Tally) -> None:
        """Publish JSON lines (``ndnsci translate --json``), adding each batch to ``tally``."""

    def close(self) -> None: ...


def open_target(catalog: str | None, token: str | None, db: str | None) -> Target:
    """A catalog server at ``catalog`` (with a publish ``token``), else the database ``db``
    (None: ``$NDNSCI_DB`` or the user's SQLite catalog, migrated to the current schema)."""
    if catalog:
        return CatalogTarget(catalog, token or "")
    return DatabaseTarget(db)


def publish(
    target: Target,
    tally: Tally,
    *,
    dirs: list[str] | None = None,
    records: IO[bytes] | None = None,
    target_key: str = "default",
    scheme: str = "auto",
    checksum: bool = True,
    jobs: int = 1,
    batch: int = 500,
    force: bool = False,
) -> None:
    """Publish the files below ``dirs``, or the JSON lines of ``records``, into ``target``,
    adding each committed batch to ``tally`` (``tally.replace``: a file whose name another
    file has replaces it). ``target_key`` names the target in the skip state.

    Raises:
        CatalogError: the catalog cannot be reached or fails a request (the batches committed
            before stay, and are in ``tally``).
    """
    if records is not None:
        size = max(batch, RECORDS_BATCH)  # a catalog server's stated limit wins
        target.load(records, batch=size, jobs=jobs, replace=tally.replace, tally=tally)
    else:
        _publish_files(
            target, tally, dirs or [], target_key=target_key, scheme=scheme,
            checksum=checksum, jobs=jobs, batch=batch, force=force,
        )  # fmt: skip


def _publish_files(
    target: Target,
    tally: Tally,
    dirs: list[str],
    *,
    target_key: str,
    scheme: str,
    checksum: bool,
    jobs: int,
    batch: int,
    force: bool,
) -> None:
    state = SkipState(target_key)
    try:
        files = found(dirs)
        todo = files if force else {p: r for p, r in files.items() if not state.unchanged(p)}
        tally.skipped = len(files) - len(todo)
        with counter(len(todo), "publishing") as advance:
            described = describe_all(todo, scheme, checksum, jobs=jobs)

            def publishable() -> Iterator[DescribedFile]:
                for item in described:
                    advance()
                    if isinstance(item, Quarantined):
                        tally.quarantine(item.source, item.code, item.reason)
                    else:
                        yield item

            def done(batch: PublishBatch) -> None:
                tally.add(batch)
                state.remember(batch.published_items())

            target.publish(publishable(), batch=batch, replace=tally.replace, on_batch=done)
    finally:
        state.close()


class SkipState:
    """What was published from which file (size, mtime), per target, in the user's state
    folder; files are told apart by their real path."""

    def __init__(self, target: str) -> None:
        from ndnsci.base.environment import settings

        path = settings().state_dir / "publish-state.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS published (target TEXT, path TEXT, size INTEGER, "
            "mtime_ns INTEGER, PRIMARY KEY (target, path))"
        )
        self.target = target

    def unchanged(self, path: str) -> bool:
        real = os.path.realpath(path)
        row = self.db.execute(
            "SELECT size, mtime_ns FROM published WHERE target = ? AND path = ?",
            (self.target, real),
        ).fetchone()
        if row is None:
            return False
        try:
            stat = os.stat(real)
        except OSError:
            return False
        return (stat.st_size, stat.st_mtime_ns) == tuple(row)

    def remember(self, records: list[DescribedFile]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO published VALUES (?, ?, ?, ?)",
                [(self.target, os.path.realpath(r.path), r.size, r.mtime_ns) for r in records],
            )

    def close(self) -> None:
        self.db.close()


# -- targets --------------------------------------------------------------------------------


class DatabaseTarget:
    """Upserts straight into a database (migrated first): each batch is one transaction."""

    def __init__(self, url: str | None) -> None:
        # here, not at the top: SQLAlchemy and the catalog only for a database target
        from ndnsci_catalog.config import Settings
        from ndnsci_catalog.database import make_engine, make_sessionmaker
        from ndnsci_catalog.migrate import upgrade

        self.url = url or Settings().db
        upgrade(self.url)
        self.engine = make_engine(self.url)
        self.sessions = make_sessionmaker(self.engine)

    def publish(
        self,
        items: Iterable[Any],
        *,
        batch: int,
        replace: bool,
        on_batch: Callable[[PublishBatch], None],
    ) -> None:
        iterator = iter(items)
        line = 0
        while chunk := list(islice(iterator, max(batch, 1))):
            on_batch(self._publish_batch(chunk, line, replace))
            line += len(chunk)

    def _publish_batch(self, chunk: list[DescribedFile], first: int, replace: bool) -> PublishBatch:
        from ndnsci_catalog.ingest import prepare
        from ndnsci_catalog.ingest import publish as ingest
        from ndnsci_catalog.records import RecordError, parse_record

        lines = list(range(first + 1, first + len(chunk) + 1))
        done = PublishBatch(items=chunk, lines=lines)
        parsed, numbers, sources = [], [], []
        for item, line in zip(chunk, lines, strict=True):
            try:
                parsed.append(parse_record(item.to_json()))
            except RecordError as exc:
                done.refused.append(Refused(line, item.source, exc.message))
            else:
                numbers.append(line)
                sources.append(item.source)
        prepared = prepare(parsed, lines=numbers, sources=sources, replace=replace)
        with self.sessions() as session:
            result = ingest(session, prepared)
            session.commit()
        done.inserted, done.replaced, done.unchanged = (
            result.inserted, result.replaced, result.unchanged,
        )  # fmt: skip
        done.last_seq = result.last_seq
        done.collisions = [_collision(c) for c in result.collisions]
        held = dict(result.conflicts)
        done.conflicts = [
            Conflict(line, source, r.name, held[r.name])
            for r, line, source in zip(parsed, numbers, sources, strict=True)
            if r.name in held
        ]
        return done

    def load(self, lines: IO[bytes], *, batch: int, jobs: int, replace: bool, tally: Tally) -> None:
        """JSON lines, prepared by other processes while this one writes (catalog/loader.py):
        ``jobs`` of them (at most PREPARE_PROCESSES), none for ``jobs=1``."""
        from ndnsci_catalog.loader import load

        def done(prepared: Any, result: Any) -> None:
            kept_out = sum(not c.replaced for c in result.collisions)
            tally.published += prepared.accepted - kept_out - len(result.conflicts)
            for source, reason in prepared.refused:
                tally.quarantine(source, "refused", reason)
            for c in result.collisions:
                tally.collision(_collision(c))
            for name, held_by in result.conflicts:
                tally.conflict(name, held_by)

        workers = min(jobs, PREPARE_PROCESSES) if jobs > 1 else 0
        load(self.sessions, lines, batch=batch, workers=workers, done=done, replace=replace)

    def close(self) -> None:
        self.engine.dispose()


def _collision(c: Any) -> Collision:
    """The catalog's collision (``ndnsci_catalog.ingest.Collision``) as the SDK reports it."""
    return Collision(c.line, c.given or "", c.name, c.published, c.replaced)


class CatalogTarget:
    """A catalog server, through the SDK's :meth:`Catalog.publish`."""

    def __init__(self, url: str, token: str) -> None:
        from ndnsci.sdk.client import Catalog

        self.catalog = Catalog(url, token=token, timeout=300)

    def publish(
        self,
        items: Iterable[Any],
        *,
        batch: int,
        replace: bool,
        on_batch: Callable[[PublishBatch], None],
    ) -> None:
        self.catalog.publish(items, replace=replace, batch=batch, on_batch=on_batch)

    def load(self, lines: IO[bytes], *, batch: int, jobs: int, replace: bool, tally: Tally) -> None:
        """The lines stream unparsed, in the batches the server states (``jobs`` unused)."""
        self.publish(lines, batch=batch, replace=replace, on_batch=tally.add)

    def close(self) -> None:
        self.catalog.close()
