"""``ndnsci publish``: name, describe and publish files into a catalog.

    ndnsci publish DIR ... [--catalog URL --token T | --db URL] [--scheme auto] [--jobs N]
    ndnsci translate --json DIR | ndnsci publish --records - [--catalog URL | --db URL]

Walking directories, every file is described by ``--jobs`` processes: named as
``ndnsci translate --metadata`` names it, its netCDF header read and its SHA-256 computed
(``ndnsci/sdk/describe.py``). Records are published in batches, one transaction each, so an
interrupted run keeps every finished batch and a re-run skips files whose size and mtime did
not change (``--force`` republishes them). A file that cannot be named or read is quarantined
with the reason; publishing goes on.

``--records`` loads JSON lines (``ndnsci translate --json``: names, no files read): the fast
path for millions of names. Into a database, batches of RECORDS_BATCH lines are prepared by up
to two other processes while this one writes; to a catalog server the lines stream unparsed in
the batches the server states (``GET /health``), two requests in flight, in bounded memory.

Name collisions: different files that translate to one name (the same file name under
``.../6hrLev/...`` and ``.../6hrPlev/...``). The catalog keeps the file published first and
each other one is reported with both paths; ``--replace`` publishes it instead, and reports it.

The target is a catalog server (``--catalog URL`` with ``--token`` or ``$NDNSCI_TOKEN``) or a
database (``--db URL``, default ``$NDNSCI_DB`` or the user's SQLite catalog).
Exit status: 0 when everything was published; 1 when some files were quarantined or collided;
2 on a usage error; 3 when the catalog cannot be reached or fails a request (the batches
published before stay: run the same command again).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import IO, Any, Protocol

from ndnsci.sdk.describe import DescribedFile, Quarantined, describe_all, found
from ndnsci.sdk.progress import counter
from ndnsci.sdk.publish import Collision, Conflict, PublishBatch, Refused
from ndnsci_translators.registry import AUTO

#: records per transaction with --records into a database: at a million files a batch dirties
#: pages all over the name, tree and free-text indexes, and bigger batches dirty each page
#: fewer times (a catalog server states its own limit, which wins)
RECORDS_BATCH = 100_000
#: processes preparing --records batches at most (the writer is one more): two keep up with it
PREPARE_PROCESSES = 2
#: exit status when the catalog cannot be reached or fails a request
CATALOG_FAILED = 3


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "publish",
        help="publish files (or translated names) into a catalog",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dirs", nargs="*", metavar="DIR", help="directories (or files) to publish")
    p.add_argument("--records", metavar="FILE", help="JSON lines of `ndnsci translate --json`")
    target = p.add_argument_group("target (default: the local SQLite catalog)")
    target.add_argument("--catalog", metavar="URL", help="catalog server, e.g. http://host:8000")
    target.add_argument("--token", help="publish token (default: $NDNSCI_TOKEN)")
    target.add_argument("--db", metavar="URL", help="publish straight into this database")
    p.add_argument("--scheme", default=AUTO, help="naming scheme (default: auto)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel workers")
    p.add_argument("--batch", type=int, default=500, help="records per transaction")
    p.add_argument("--force", action="store_true", help="republish files that did not change")
    p.add_argument("--no-checksum", action="store_true", help="skip SHA-256 (faster)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="a file whose name another file already has replaces it (reported either way)",
    )
    p.add_argument("--quarantine", metavar="FILE", help="also write the report as JSON lines")
    p.set_defaults(func=run)


class Target(Protocol):
    def publish(
        self,
        items: Iterable[Any],
        *,
        batch: int,
        replace: bool,
        on_batch: Callable[[PublishBatch], None],
    ) -> None:
        """Publish ``items`` (described files, or JSON lines), telling ``on_batch`` of each."""

    def close(self) -> None: ...


def run(args: argparse.Namespace) -> int:
    from ndnsci.base.environment import settings
    from ndnsci.errors import CatalogError

    if bool(args.dirs) == bool(args.records):
        return _usage("give directories or --records FILE (not both)")
    if args.catalog and args.db:
        return _usage("--catalog and --db exclude each other")
    token = args.token or settings().token
    if args.catalog and not token:
        return _usage("--catalog needs --token or $NDNSCI_TOKEN")
    report = _Report(args.replace)
    try:
        target: Target = (
            _HttpTarget(args.catalog, token or "") if args.catalog else _DbTarget(args.db)
        )
        try:
            if args.records:
                _publish_records(args, target, report)
            else:
                _publish_files(args, target, report)
        finally:
            target.close()
    except CatalogError as exc:
        report.finish(args.quarantine)
        print(f"ndnsci publish: {exc}", file=sys.stderr)
        return CATALOG_FAILED
    return report.finish(args.quarantine)


def _usage(message: str) -> int:
    print(f"ndnsci publish: {message}", file=sys.stderr)
    return 2


# -- records mode ---------------------------------------------------------------------------


def _publish_records(args: argparse.Namespace, target: Target, report: _Report) -> None:
    # bytes: lines go on as they are (JSON is decoded by the preparing processes or the server)
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # a replaced stdin may be text only
    stream = stdin if args.records == "-" else open(args.records, "rb")  # noqa: SIM115
    with stream:
        if isinstance(target, _DbTarget):
            target.load(stream, max(args.batch, RECORDS_BATCH), args.jobs, args.replace, report)
        else:
            batch = max(args.batch, RECORDS_BATCH)  # the server's stated limit wins
            target.publish(stream, batch=batch, replace=args.replace, on_batch=report.add)


# -- files mode -----------------------------------------------------------------------------


def _publish_files(args: argparse.Namespace, target: Target, report: _Report) -> None:
    state = _SkipState(args.catalog or args.db or "default")
    try:
        files = found(args.dirs)
        todo = files if args.force else {p: r for p, r in files.items() if not state.unchanged(p)}
        report.skipped = len(files) - len(todo)
        with counter(len(todo), "publishing") as advance:
            described = describe_all(todo, args.scheme, not args.no_checksum, jobs=args.jobs)

            def publishable() -> Iterator[DescribedFile]:
                for item in described:
                    advance()
                    if isinstance(item, Quarantined):
                        report.quarantine(item.source, item.code, item.reason)
                    else:
                        yield item

            def done(batch: PublishBatch) -> None:
                report.add(batch)
                state.remember(batch.published_items())

            target.publish(publishable(), batch=args.batch, replace=args.replace, on_batch=done)
    finally:
        state.close()


class _SkipState:
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


class _DbTarget:
    """Upserts straight into a database: each batch is one transaction."""

    def __init__(self, url: str | None) -> None:
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
        from ndnsci_catalog.ingest import prepare, publish
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
            result = publish(session, prepared)
            session.commit()
        done.inserted, done.replaced, done.unchanged = (
            result.inserted, result.replaced, result.unchanged,
        )  # fmt: skip
        done.last_seq = result.last_seq
        done.collisions = [
            Collision(c.line, c.given or "", c.name, c.published, c.replaced)
            for c in result.collisions
        ]
        held = dict(result.conflicts)
        done.conflicts = [
            Conflict(line, source, r.name, held[r.name])
            for r, line, source in zip(parsed, numbers, sources, strict=True)
            if r.name in held
        ]
        return done

    def load(
        self,
        lines: Iterable[bytes] | Iterable[str],
        batch: int,
        jobs: int,
        replace: bool,
        report: _Report,
    ) -> None:
        """JSON lines, prepared by other processes while this one writes (catalog/loader.py):
        ``jobs`` of them (at most PREPARE_PROCESSES), none for ``--jobs 1``."""
        from ndnsci_catalog.loader import load

        def done(prepared: Any, result: Any) -> None:
            kept_out = sum(not c.replaced for c in result.collisions)
            report.published += prepared.accepted - kept_out - len(result.conflicts)
            for source, reason in prepared.refused:
                report.quarantine(source, "refused", reason)
            for c in result.collisions:
                report.collision(Collision(c.line, c.given or "", c.name, c.published, c.replaced))
            for name, held_by in result.conflicts:
                report.conflict(name, held_by)

        workers = min(jobs, PREPARE_PROCESSES) if jobs > 1 else 0
        load(self.sessions, lines, batch=batch, workers=workers, done=done, replace=replace)

    def close(self) -> None:
        self.engine.dispose()


class _HttpTarget:
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

    def close(self) -> None:
        self.catalog.close()


# -- report ---------------------------------------------------------------------------------


class _Report:
    """What was published, skipped, quarantined and collided: printed on stderr at the end."""

    def __init__(self, replace: bool) -> None:
        self.replace = replace
        self.published = 0
        self.skipped = 0
        self.quarantined: list[dict[str, str]] = []
        self.collisions: list[Collision] = []

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

    def finish(self, path: str | None) -> int:
        if path:
            with open(path, "w", encoding="utf-8") as f:
                _write_lines(f, [*self.quarantined, *map(_collision_entry, self.collisions)])
        for entry in self.quarantined:
            print(f"QUARANTINE {entry['source']}\n    {entry['reason']}", file=sys.stderr)
        for c in self.collisions:
            outcome = "replaced it" if c.replaced else "not published"
            print(
                f"COLLISION {c.name}\n    published from: {c.published}\n    {outcome}: {c.source}",
                file=sys.stderr,
            )
        kept = sum(not c.replaced for c in self.collisions)
        print(
            f"{self.published} published, {self.skipped} unchanged (skipped), "
            f"{len(self.quarantined)} quarantined, {len(self.collisions)} name collisions"
            + (" (the first file of each name stays; --replace to publish the other)"
               if kept else ""),
            file=sys.stderr,
        )  # fmt: skip
        return 1 if self.quarantined or kept else 0


def _collision_entry(c: Collision) -> dict[str, Any]:
    reason = f"name collision: {c.name} is published from {c.published}" + (
        "; replaced by this file" if c.replaced else "; this file is not published"
    )
    return {"source": c.source, "code": "name-collision", "reason": reason, "name": c.name,
            "published": c.published, "replaced": c.replaced}  # fmt: skip


def _write_lines(f: IO[str], entries: list[dict[str, Any]]) -> None:
    f.writelines(json.dumps(e) + "\n" for e in entries)
