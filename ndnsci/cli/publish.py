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
import sys
from typing import IO, Any

from ndnsci.cli._common import database_url
from ndnsci.sdk.publish import Collision
from ndnsci.site.publishing import Tally
from ndnsci_translators.registry import AUTO

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


def run(args: argparse.Namespace) -> int:
    from ndnsci.base.environment import settings
    from ndnsci.errors import CatalogError
    from ndnsci.site import publishing

    if bool(args.dirs) == bool(args.records):
        return _usage("give directories or --records FILE (not both)")
    if args.catalog and args.db:
        return _usage("--catalog and --db exclude each other")
    token = args.token or settings().token
    if args.catalog and not token:
        return _usage("--catalog needs --token or $NDNSCI_TOKEN")
    if args.records not in (None, "-") and not os.path.isfile(args.records):
        return _usage(f"--records {args.records}: no such file")
    tally = Tally(args.replace)
    try:
        db = None if args.catalog else database_url(args.db)
        target = publishing.open_target(args.catalog, token, db)
        try:
            with _records(args.records) as records:
                publishing.publish(
                    target,
                    tally,
                    dirs=args.dirs,
                    records=records,
                    target_key=args.catalog or args.db or "default",
                    scheme=args.scheme,
                    checksum=not args.no_checksum,
                    jobs=args.jobs,
                    batch=args.batch,
                    force=args.force,
                )
        finally:
            target.close()
    except CatalogError as exc:
        _finish(tally, args.quarantine)
        print(f"ndnsci publish: {exc}", file=sys.stderr)
        return CATALOG_FAILED
    return _finish(tally, args.quarantine)


def _usage(message: str) -> int:
    print(f"ndnsci publish: {message}", file=sys.stderr)
    return 2


def _records(path: str | None) -> Any:
    """``--records``: the file, or stdin for ``-``, as bytes (lines go on as they are: JSON is
    decoded by the preparing processes or the server); nothing without it."""
    import contextlib

    if path is None:
        return contextlib.nullcontext(None)
    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # a replaced stdin may be text only
    return stdin if path == "-" else open(path, "rb")


# -- report ---------------------------------------------------------------------------------


def _finish(tally: Tally, path: str | None) -> int:
    """What was published, skipped, quarantined and collided, on stderr; the exit status."""
    if path:
        with open(path, "w", encoding="utf-8") as f:
            _write_lines(f, [*tally.quarantined, *map(_collision_entry, tally.collisions)])
    for entry in tally.quarantined:
        print(f"QUARANTINE {entry['source']}\n    {entry['reason']}", file=sys.stderr)
    for c in tally.collisions:
        outcome = "replaced it" if c.replaced else "not published"
        print(
            f"COLLISION {c.name}\n    published from: {c.published}\n    {outcome}: {c.source}",
            file=sys.stderr,
        )
    print(
        f"{tally.published} published, {tally.skipped} unchanged (skipped), "
        f"{len(tally.quarantined)} quarantined, {len(tally.collisions)} name collisions"
        + (" (the first file of each name stays; --replace to publish the other)"
           if tally.kept_out else ""),
        file=sys.stderr,
    )  # fmt: skip
    return 0 if tally.ok else 1


def _collision_entry(c: Collision) -> dict[str, Any]:
    reason = f"name collision: {c.name} is published from {c.published}" + (
        "; replaced by this file" if c.replaced else "; this file is not published"
    )
    return {"source": c.source, "code": "name-collision", "reason": reason, "name": c.name,
            "published": c.published, "replaced": c.replaced}  # fmt: skip


def _write_lines(f: IO[str], entries: list[dict[str, Any]]) -> None:
    f.writelines(json.dumps(e) + "\n" for e in entries)
