"""``ndnsci catalog``: run the catalog service and manage its database.

    ndnsci catalog serve [--db URL] [--host 127.0.0.1] [--port 8000] [--no-gateway]
    ndnsci catalog migrate [--db URL]
    ndnsci catalog token create NAME [--expires 90d|2027-01-31] [--db URL]
    ndnsci catalog token list [--json] [--db URL]
    ndnsci catalog token revoke NAME [--db URL]
    ndnsci catalog site|trust|federate|mirror|conflicts ...   (a federation of sites: see
                                                              `ndnsci catalog federate --help`)

``serve`` also answers the ESGF search API at ``/esg-search/`` and, unless ``--no-gateway``,
serves the published files over HTTP at ``/data/<NDN name>``, fetching them over NDN through
the forwarder at ``NDN_CLIENT_TRANSPORT``.

The database defaults to a SQLite file under the user's data directory
(``$XDG_DATA_HOME/ndnsci/catalog.db``); ``--db`` or ``NDNSCI_DB`` selects another, e.g.
``postgresql://user@host/ndnsci``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

from ndnsci.cli import federation
from ndnsci.cli._common import database_url, port_number

#: seconds the requests running at SIGTERM get to finish; then they are cancelled, and the
#: process leaves without threads still busy (their transactions roll back)
SHUTDOWN_SECONDS = 2
#: seconds an idle connection is kept open: longer than clients keep theirs (httpx: 5 s), so
#: a client never sends a request on a connection the server is closing at that moment
KEEP_ALIVE_SECONDS = 15
#: the interpreter's switch interval while serving: the event loop (accepting requests,
#: /health) takes turns for the GIL with the worker threads running searches and publishes;
#: a shorter wait for the event loop's turn. Not proven: on a machine at load ~10, one /health
#: of tests/catalog/test_load.py[postgresql] took 1.6 s with and without it
SWITCH_SECONDS = 0.001


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "catalog",
        help="run the catalog service, migrate its database, create publish tokens",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = p.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)

    serve = commands.add_parser("serve", help="serve the REST API (migrates the database first)")
    _db_option(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=port_number, default=8000)
    serve.add_argument("--no-migrate", action="store_true", help="do not upgrade the schema")
    serve.add_argument(
        "--no-gateway", action="store_true", help="do not serve files over HTTP at /data/"
    )
    serve.set_defaults(func=run_serve)

    migrate = commands.add_parser("migrate", help="create or upgrade the database schema")
    _db_option(migrate)
    migrate.set_defaults(func=run_migrate)

    token = commands.add_parser("token", help="manage publish tokens")
    token_commands = token.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    create = token_commands.add_parser("create", help="create a token (printed once)")
    create.add_argument("name", help="who or what the token is for, e.g. a site name")
    create.add_argument(
        "--expires",
        metavar="WHEN",
        help="refuse it after a duration (90d, 12h, 2w) or from a date (2027-01-31, UTC)",
    )
    _db_option(create)
    create.set_defaults(func=run_token_create)
    listing = token_commands.add_parser(
        "list", help="the tokens: name, created, expires, state (never the secrets)"
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    _db_option(listing)
    listing.set_defaults(func=run_token_list)
    revoke = token_commands.add_parser("revoke", help="delete a token: it is refused at once")
    revoke.add_argument("name", help="the token's name (see `token list`)")
    _db_option(revoke)
    revoke.set_defaults(func=run_token_revoke)

    federation.register(commands, _db_option, db_url)  # site, trust, federate, mirror, conflicts


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="URL",
        help="database URL or a SQLite file's path (default: $NDNSCI_DB or the user's SQLite file)",
    )


def db_url(args: argparse.Namespace) -> str:
    """``--db``, else ``$NDNSCI_DB``, else the user's catalog (UsageError: not a database)."""
    return database_url(args.db)


def run_migrate(args: argparse.Namespace) -> int:
    from ndnsci_catalog.migrate import upgrade

    url = db_url(args)
    upgrade(url)
    print(f"database is at the newest schema: {_safe(url)}", file=sys.stderr)
    return 0


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ndnsci_catalog.config import Settings
    from ndnsci_catalog.main import create_app
    from ndnsci_catalog.migrate import schema_behind, upgrade
    from ndnsci_catalog.serving import protocol

    sys.setswitchinterval(SWITCH_SECONDS)
    if args.db and (folder := _missing_sqlite_folder(str(args.db))) is not None:
        # a typo'd --db is not a new folder tree with an empty catalog in it
        print(f"ndnsci catalog serve: {folder}: no such directory (for --db)", file=sys.stderr)
        return 2
    settings = Settings(db=db_url(args))
    if not args.no_migrate:
        upgrade(settings.db)
    elif (behind := schema_behind(settings.db)) is not None:
        # e.g. a catalog made by an earlier version: its free text would fail at the first
        # replace or retract (the FTS5 table became contentless in 2026_11_27)
        current, head = behind
        print(
            f"ndnsci catalog serve: the catalog {_safe(settings.db)} has schema "
            f"{current or '(none)'}, this version needs {head}: run `ndnsci catalog migrate "
            "--db URL` first (or serve without --no-migrate, which migrates it)",
            file=sys.stderr,
        )
        return 2
    print(
        f"catalog of {_safe(settings.db)} at http://{args.host}:{args.port}/api/v1/",
        file=sys.stderr,
    )
    app = create_app(settings)
    if not args.no_gateway:
        from ndnsci_catalog.gateway import quicklook
        from ndnsci_catalog.gateway.app import mount

        mount(app)
        quicklook.include(app)  # /api/v1/quicklook/<NDN name>: maps and global means
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        http=protocol(settings.head_seconds),  # the request head bounded: size, fields, time
        log_level="info",
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    _leave_busy_threads(SHUTDOWN_SECONDS)
    return 0


def _missing_sqlite_folder(url: str) -> str | None:
    """The folder of a SQLite file URL when it does not exist (the engine would create it);
    None for any other URL (what is wrong with a bad one is said where URLs are read)."""
    from pathlib import Path

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None
    folder = Path(database).expanduser().parent
    return None if folder.is_dir() else str(folder)


def _leave_busy_threads(seconds: float) -> None:
    """After the server stopped: wait at most ``seconds`` for worker threads still running a
    request (their task was cancelled, the thread cannot be), then exit without them."""
    deadline = time.monotonic() + seconds
    main = threading.main_thread()
    busy = [t for t in threading.enumerate() if t is not main and not t.daemon]
    for thread in busy:
        thread.join(max(0.0, deadline - time.monotonic()))
    left = [t for t in busy if t.is_alive()]
    if left:
        print(
            f"ndnsci catalog: {len(left)} request(s) still running {seconds} s after the stop; "
            "leaving without them (their transactions are not committed)",
            file=sys.stderr,
            flush=True,
        )
        sys.stdout.flush()
        os._exit(0)


def _session(args: argparse.Namespace) -> Any:
    """A session on the migrated database of ``--db`` (its engine closes with it)."""
    from contextlib import contextmanager

    from ndnsci_catalog.database import make_engine, make_sessionmaker
    from ndnsci_catalog.migrate import upgrade

    @contextmanager
    def session() -> Any:
        url = db_url(args)
        upgrade(url)
        engine = make_engine(url)
        try:
            with make_sessionmaker(engine)() as opened:
                yield opened
        finally:
            engine.dispose()

    return session()


def run_token_create(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import IntegrityError

    from ndnsci_catalog.tokens import create_token, expiry

    try:
        expires = expiry(args.expires) if args.expires else None
    except ValueError as exc:
        print(f"ndnsci catalog: {exc}", file=sys.stderr)
        return 2
    try:
        with _session(args) as session:
            token = create_token(session, args.name, expires)
            session.commit()
    except IntegrityError:
        print(f"ndnsci catalog: a token named {args.name!r} exists already", file=sys.stderr)
        return 1
    print(token)
    until = f" (valid until {expires})" if expires else ""
    print(f"store it now{until}: only its hash is kept in the catalog", file=sys.stderr)
    return 0


def run_token_list(args: argparse.Namespace) -> int:
    from ndnsci_catalog.tokens import list_tokens

    with _session(args) as session:
        tokens = list_tokens(session)
    for token in tokens:
        if args.json:
            print(json.dumps(token.to_dict()))
        else:
            state = "expired" if token.expired() else "valid"
            print(f"{token.name}\t{token.created_at}\t{token.expires_at or 'never'}\t{state}")
    if not tokens:
        print("ndnsci catalog: no tokens (create one: ndnsci catalog token create NAME)",
              file=sys.stderr)  # fmt: skip
    return 0


def run_token_revoke(args: argparse.Namespace) -> int:
    from ndnsci_catalog.tokens import revoke_token

    with _session(args) as session:
        found = revoke_token(session, args.name)
        session.commit()
    if not found:
        print(f"ndnsci catalog: no token named {args.name!r}", file=sys.stderr)
        return 1
    print(f"ndnsci catalog: token {args.name!r} revoked", file=sys.stderr)
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
