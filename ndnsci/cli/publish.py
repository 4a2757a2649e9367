"""``ndnsci publish``: name, describe and publish files into a catalog.

    ndnsci publish DIR ... [--catalog URL --token T | --db URL] [--scheme auto] [--jobs N]
    ndnsci translate --json DIR | ndnsci publish --records -

Walking a directory, every file is translated into an NDN name (with its netCDF global
attributes), its header metadata is extracted and its SHA-256 computed, in parallel; records are
upserted in batches, one transaction each, so an interrupted run keeps every finished batch and
a re-run skips files whose size and mtime did not change (``--force`` republishes them). Files
that cannot be named or read go to the quarantine report with the reason; publishing continues.

``--records`` loads the JSON lines of ``ndnsci translate --json`` (names only, no files): the
fast path for a listing of millions of names. Into a database, batches of RECORDS_BATCH lines are
prepared by up to two other processes (``--jobs``) while this one writes.

Each file keeps its original name (the last component of the translator's input, before
corrections) and, walking directories, its path below the directory given.

The target is a catalog server (``--catalog URL`` with ``--token`` or ``$NDNSCI_TOKEN``) or a
database (``--db URL``, default ``$NDNSCI_DB`` or the user's SQLite catalog).
Exit status: 0 when everything was published, 1 when some files were quarantined, 2 on a
usage error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from ndnsci._progress import counter
from ndnsci.cli.translate import walk
from ndnsci.translators import translate
from ndnsci.translators.registry import AUTO

#: keys of ``ndnsci translate --json`` that describe the translation, not the file
TRANSLATION_ONLY = ("input", "ok", "error")
#: records per transaction with --records: at a million files a batch dirties pages all over
#: the name, tree and free-text indexes, and bigger batches dirty each page fewer times
RECORDS_BATCH = 100_000
#: processes preparing --records batches at most (the writer is one more): two keep up with it
PREPARE_PROCESSES = 2


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
    p.add_argument("--quarantine", metavar="FILE", help="also write the report as JSON lines")
    p.set_defaults(func=run)


class Target(Protocol):
    def send(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Publish one batch; returns quarantine entries for records the target refused."""

    def close(self) -> None: ...


def run(args: argparse.Namespace) -> int:
    if bool(args.dirs) == bool(args.records):
        print("ndnsci publish: give directories or --records FILE (not both)", file=sys.stderr)
        return 2
    if args.catalog and args.db:
        print("ndnsci publish: --catalog and --db exclude each other", file=sys.stderr)
        return 2
    token = args.token or os.environ.get("NDNSCI_TOKEN")
    if args.catalog and not token:
        print("ndnsci publish: --catalog needs --token or $NDNSCI_TOKEN", file=sys.stderr)
        return 2
    target: Target = _HttpTarget(args.catalog, token or "") if args.catalog else _DbTarget(args.db)
    report = _Report()
    try:
        if args.records:
            _publish_records(args, target, report)
        else:
            _publish_files(args, target, report)
    finally:
        target.close()
    return report.finish(args.quarantine)


# -- records mode ---------------------------------------------------------------------------


def _publish_records(args: argparse.Namespace, target: Target, report: _Report) -> None:
    # bytes: lines go to the preparing processes as they are (JSON is decoded over there)
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # a replaced stdin may be text only
    stream = stdin if args.records == "-" else open(args.records, "rb")  # noqa: SIM115
    size = max(args.batch, RECORDS_BATCH)
    with stream:
        if isinstance(target, _DbTarget):
            target.load(stream, size, args.jobs, report)
            return
        from ndnsci.catalog.records import record_from_line

        batch: list[dict[str, Any]] = []
        for number, line in enumerate(stream, start=1):
            record = record_from_line(line, number)
            if isinstance(record, tuple):
                report.quarantine(*record)
            elif record is not None:
                batch.append(record)
            if len(batch) >= size:
                report.published(batch, target.send(batch))
                batch = []
        if batch:
            report.published(batch, target.send(batch))


# -- files mode -----------------------------------------------------------------------------


def _publish_files(args: argparse.Namespace, target: Target, report: _Report) -> None:
    state = _SkipState(args.catalog or args.db or "default")
    found = _found(args.dirs)
    paths = list(found)
    todo = paths if args.force else [p for p in paths if not state.unchanged(p)]
    report.skipped = len(paths) - len(todo)
    with counter(len(todo), "publishing") as advance:
        batch: list[dict[str, Any]] = []
        for result in _describe_all(todo, args.scheme, not args.no_checksum, args.jobs):
            advance()
            if "reason" in result:
                report.quarantine(result["path"], result["reason"])
                continue
            result["original_path"] = found[result["_source"]]
            batch.append(result)
            if len(batch) >= args.batch:
                _send_files(batch, target, report, state)
                batch = []
        if batch:
            _send_files(batch, target, report, state)
    state.close()


def _send_files(
    batch: list[dict[str, Any]], target: Target, report: _Report, state: _SkipState
) -> None:
    refused = target.send(batch)
    report.published(batch, refused)
    refused_sources = {r["source"] for r in refused}
    state.remember([r for r in batch if r["_source"] not in refused_sources])


def _found(roots: list[str]) -> dict[str, str | None]:
    """Every file to publish (resolved, as the skip state knows it) -> its path relative to
    the directory given, as found there (None for a file given by itself)."""
    found: dict[str, str | None] = {}
    for root in roots:
        if not os.path.isdir(root):
            found.setdefault(str(Path(root).resolve()), None)
            continue
        for path in walk(root):
            found.setdefault(str(Path(path).resolve()), os.path.relpath(path, root))
    return found


def _describe_all(
    paths: list[str], scheme: str, checksum: bool, jobs: int
) -> Iterator[dict[str, Any]]:
    if jobs <= 1 or len(paths) < 2:
        yield from (describe(p, scheme, checksum) for p in paths)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_describe_args, [(p, scheme, checksum) for p in paths], chunksize=4)


def _describe_args(item: tuple[str, str, bool]) -> dict[str, Any]:
    return describe(*item)


def describe(path: str, scheme: str = AUTO, checksum: bool = True) -> dict[str, Any]:
    """One file -> a publish record, or ``{"path", "reason"}`` when it cannot be published."""
    try:
        stat = os.stat(path)
        metadata = _metadata(path, checksum) if path.endswith(".nc") else None
    except Exception as exc:  # any unreadable file is quarantined, never fatal
        return {"path": path, "reason": f"cannot read: {exc}"}
    attributes = metadata.get("global_attributes") if metadata else None
    translation = translate(path, scheme, attributes)
    if not translation.ok:
        error = translation.error
        reason = f"{error.code}: {error.message}" if error else "cannot be named"
        return {"path": path, "reason": reason}
    record = {k: v for k, v in translation.to_dict().items() if k not in TRANSLATION_ONLY}
    record["original"] = os.path.basename(path)  # the file name before corrections
    sha256 = metadata.get("sha256") if metadata else None
    if checksum and sha256 is None:
        sha256 = _sha256(path)
    return {
        **record,
        "metadata": metadata,
        "size": stat.st_size,
        "mtime": stat.st_mtime,
        "sha256": sha256,
        "_source": path,
        "_mtime_ns": stat.st_mtime_ns,
    }


def _metadata(path: str, checksum: bool) -> dict[str, Any]:
    from ndnsci.translators import netcdf

    metadata = netcdf.extract(path, checksum=checksum).to_dict()
    metadata.pop("path", None)  # names are location independent: no provider paths in the catalog
    return metadata


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class _SkipState:
    """What was published from which path (size, mtime), per target, in the user's state dir."""

    def __init__(self, target: str) -> None:
        home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        path = Path(home) / "ndnsci" / "publish-state.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS published (target TEXT, path TEXT, size INTEGER, "
            "mtime_ns INTEGER, PRIMARY KEY (target, path))"
        )
        self.target = target

    def unchanged(self, path: str) -> bool:
        row = self.db.execute(
            "SELECT size, mtime_ns FROM published WHERE target = ? AND path = ?",
            (self.target, path),
        ).fetchone()
        if row is None:
            return False
        try:
            stat = os.stat(path)
        except OSError:
            return False
        return (stat.st_size, stat.st_mtime_ns) == tuple(row)

    def remember(self, records: list[dict[str, Any]]) -> None:
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO published VALUES (?, ?, ?, ?)",
                [(self.target, r["_source"], r["size"], r["_mtime_ns"]) for r in records],
            )

    def close(self) -> None:
        self.db.close()


# -- targets --------------------------------------------------------------------------------


class _DbTarget:
    """Upserts straight into a database: each batch is one transaction."""

    def __init__(self, url: str | None) -> None:
        from ndnsci.catalog.config import Settings
        from ndnsci.catalog.database import make_engine, make_sessionmaker
        from ndnsci.catalog.migrate import upgrade

        self.url = url or Settings().db
        upgrade(self.url)
        self.engine = make_engine(self.url)
        self.sessions = make_sessionmaker(self.engine)

    def send(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from ndnsci.catalog.ingest import publish
        from ndnsci.catalog.records import RecordError, parse_record

        parsed, refused = [], []
        for raw in records:
            try:
                parsed.append(parse_record(_public(raw)))
            except RecordError as exc:
                refused.append({"source": raw["_source"], "reason": exc.message})
        with self.sessions() as session:
            result = publish(session, parsed)
            session.commit()
        sources = {r.get("name"): r["_source"] for r in records}
        refused += [_conflict(sources.get(n, n), held_by) for n, held_by in result.conflicts]
        return refused

    def load(
        self, lines: Iterable[bytes] | Iterable[str], batch: int, jobs: int, report: _Report
    ) -> None:
        """JSON lines, prepared by other processes while this one writes (catalog/loader.py):
        ``jobs`` of them (at most PREPARE_PROCESSES), none for ``--jobs 1``."""
        from ndnsci.catalog.loader import load

        def done(prepared: Any, result: Any) -> None:
            report.count += prepared.accepted - len(result.conflicts)
            for source, reason in prepared.refused:
                report.quarantine(source, reason)
            for name, held_by in result.conflicts:
                report.quarantine(**_conflict(name, held_by))

        workers = min(jobs, PREPARE_PROCESSES) if jobs > 1 else 0
        load(self.sessions, lines, batch=batch, workers=workers, done=done)

    def close(self) -> None:
        self.engine.dispose()


class _HttpTarget:
    """POSTs JSON lines to a catalog server's /api/v1/publish."""

    def __init__(self, url: str, token: str) -> None:
        import httpx

        self.client = httpx.Client(
            base_url=url.rstrip("/") + "/api/v1/",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
            timeout=300,
        )

    def send(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        body = "".join(json.dumps(_public(r)) + "\n" for r in records)
        response = self.client.post("publish", content=body.encode())
        if response.status_code == 422:
            # one bad record refuses the batch: quarantine it, publish the others
            line = response.json().get("line")
            if isinstance(line, int) and 1 <= line <= len(records):
                bad = records[line - 1]
                rest = records[: line - 1] + records[line:]
                detail = response.json().get("detail", "refused")
                return [{"source": bad["_source"], "reason": detail}, *self.send(rest)]
        if response.status_code != 200:
            raise SystemExit(
                f"ndnsci publish: {response.status_code} from the catalog: {response.text}"
            )
        sources = {r.get("name"): r["_source"] for r in records}
        return [
            _conflict(sources.get(c["name"], c["name"]), c["held_by"])
            for c in response.json().get("conflicting", [])
        ]

    def close(self) -> None:
        self.client.close()


def _conflict(source: str, held_by: str | None) -> dict[str, str]:
    """A name another site of the federation holds: not published (docs/federation.md)."""
    return {
        "source": source,
        "reason": f"the name is held by site {held_by!r}: a conflict, not published "
        "(ndnsci catalog conflicts)",
    }


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if not k.startswith("_")}


# -- report ---------------------------------------------------------------------------------


class _Report:
    def __init__(self) -> None:
        self.count = 0
        self.skipped = 0
        self.quarantined: list[dict[str, str]] = []

    def quarantine(self, source: str, reason: str) -> None:
        self.quarantined.append({"source": source, "reason": reason})

    def published(self, batch: list[dict[str, Any]], refused: list[dict[str, Any]]) -> None:
        self.count += len(batch) - len(refused)
        self.quarantined.extend(refused)

    def finish(self, path: str | None) -> int:
        if path:
            with open(path, "w", encoding="utf-8") as f:
                _write_lines(f, self.quarantined)
        for entry in self.quarantined:
            print(f"QUARANTINE {entry['source']}\n    {entry['reason']}", file=sys.stderr)
        print(
            f"{self.count} published, {self.skipped} unchanged (skipped), "
            f"{len(self.quarantined)} quarantined",
            file=sys.stderr,
        )
        return 1 if self.quarantined else 0


def _write_lines(f: IO[str], entries: list[dict[str, str]]) -> None:
    f.writelines(json.dumps(e) + "\n" for e in entries)
