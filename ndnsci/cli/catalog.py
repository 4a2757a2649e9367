"""``ndnsci catalog``: run the catalog service and manage its database.

    ndnsci catalog serve [--db URL] [--host 127.0.0.1] [--port 8000] [--no-gateway]
                         [--tls-cert PEM --tls-key PEM] [--workers N] [--trusted-proxies NETS]
    ndnsci catalog migrate [--db URL]
    ndnsci catalog token create NAME [--expires 90d|2027-01-31] [--db URL]
    ndnsci catalog token list [--json] [--db URL]
    ndnsci catalog token revoke NAME [--db URL]
    ndnsci catalog site|trust|federate|mirror|conflicts ...   (a federation of sites: see
                                                              `ndnsci catalog federate --help`)

``serve`` also answers the ESGF search API at ``/esg-search/`` and, unless ``--no-gateway``,
serves the published files over HTTP at ``/data/<NDN name>``, fetching them over NDN through
the forwarder at ``NDN_CLIENT_TRANSPORT``. With ``--tls-cert``/``--tls-key`` it speaks HTTPS
only; ``--trusted-proxies`` names the reverse proxies whose ``X-Forwarded-For``/``-Proto`` it
believes (nobody's by default); ``--workers N`` runs N server processes on the one port.

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
from typing import TYPE_CHECKING, Any

from ndnsci.cli import federation
from ndnsci.cli._common import database_url, port_number

if TYPE_CHECKING:
    from fastapi import FastAPI

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
    serve.add_argument("--tls-cert", metavar="PEM", help="serve HTTPS with this certificate")
    serve.add_argument("--tls-key", metavar="PEM", help="the certificate's key (no passphrase)")
    serve.add_argument(
        "--workers", type=workers_count, default=1, metavar="N",
        help="server processes on the port (1-64; default 1)",
    )  # fmt: skip
    serve.add_argument(
        "--trusted-proxies", type=networks, default=(), metavar="NETS",
        help="addresses or networks (comma-separated, e.g. 10.0.0.1,10.0.1.0/24) of reverse "
        "proxies whose X-Forwarded-For/-Proto headers are believed (default: nobody's)",
    )  # fmt: skip
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


def workers_count(text: str) -> int:
    """argparse ``type=`` of ``--workers``: 1 to 64 server processes."""
    if not text.isdigit() or len(text) > 2 or not 1 <= int(text) <= 64:
        raise argparse.ArgumentTypeError(f"not a number of processes (1-64): {text[:20]!r}")
    return int(text)


def networks(text: str) -> tuple[str, ...]:
    """argparse ``type=`` of ``--trusted-proxies``: comma-separated IP addresses or networks."""
    import ipaddress

    found = tuple(item.strip() for item in text.split(",") if item.strip())
    for item in found:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an IP address or network: {item[:60]!r} (write e.g. 10.0.0.1 or 10.0.0.0/24)"
            ) from None
    return found


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ndnsci.base import tls
    from ndnsci_catalog.config import Settings
    from ndnsci_catalog.migrate import schema_behind, upgrade
    from ndnsci_catalog.serving import BoundedHttpToolsProtocol, protocol

    sys.setswitchinterval(SWITCH_SECONDS)
    if args.db and (folder := _missing_sqlite_folder(str(args.db))) is not None:
        # a typo'd --db is not a new folder tree with an empty catalog in it
        print(f"ndnsci catalog serve: {folder}: no such directory (for --db)", file=sys.stderr)
        return 2
    if (args.tls_cert is None) != (args.tls_key is None):
        given, missing = (
            ("--tls-cert", "--tls-key") if args.tls_key is None else ("--tls-key", "--tls-cert")
        )
        print(f"ndnsci catalog serve: {given} needs {missing} too", file=sys.stderr)
        return 2
    if args.tls_cert is not None and (wrong := tls.problem(args.tls_cert, args.tls_key)):
        # before the migration and the server: uvicorn would load it as it starts, and a bad
        # one is a traceback from a process that exits
        print(f"ndnsci catalog serve: {wrong}", file=sys.stderr)
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
    scheme = "https" if args.tls_cert else "http"
    print(
        f"catalog of {_safe(settings.db)} at {scheme}://{args.host}:{args.port}/api/v1/"
        + (f" ({args.workers} workers)" if args.workers > 1 else ""),
        file=sys.stderr,
    )
    if args.workers > 1:
        # uvicorn starts each worker as a new interpreter that imports the app by name: the
        # settings go through the catalog's own variables (NDNSCI_*), one instance for all
        os.environ["NDNSCI_DB"] = settings.db
        os.environ["NDNSCI_INSTANCE"] = settings.instance
        app: Any = "ndnsci.cli.catalog:" + ("served_app_alone" if args.no_gateway else "served_app")
        http: Any = BoundedHttpToolsProtocol  # a class by name: the workers import it
    else:
        app = _served(settings, gateway=not args.no_gateway)
        http = protocol(settings.head_seconds)
    uvicorn.run(
        app,
        factory=args.workers > 1,
        workers=args.workers,
        host=args.host,
        port=args.port,
        http=http,  # the request head bounded: size, fields, time
        log_level="info",
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ssl_certfile=args.tls_cert,
        ssl_keyfile=args.tls_key,
        # uvicorn believes 127.0.0.1 by default: a local process could claim any address
        proxy_headers=bool(args.trusted_proxies),
        forwarded_allow_ips=list(args.trusted_proxies),
    )
    _leave_busy_threads(SHUTDOWN_SECONDS)
    return 0


def _served(settings: Any, gateway: bool) -> FastAPI:
    from ndnsci_catalog.main import create_app

    app = create_app(settings)
    if gateway:
        from ndnsci_catalog.gateway import quicklook
        from ndnsci_catalog.gateway.app import mount

        mount(app)
        quicklook.include(app)  # /api/v1/quicklook/<NDN name>: maps and global means
    return app


def served_app() -> FastAPI:
    """The app of one worker of ``serve --workers N`` (uvicorn imports it by this name in each
    worker process): settings from the ``NDNSCI_*`` variables ``serve`` set, with the gateway.
    Each worker has its own facet index, following the one database (a search first looks
    whether the change feed moved, so a publish through one worker is found through any)."""
    from ndnsci_catalog.config import Settings
    from ndnsci_catalog.serving import BoundedHttpToolsProtocol

    settings = Settings()
    BoundedHttpToolsProtocol.head_seconds = settings.head_seconds  # this worker's class
    return _served(settings, gateway=True)


def served_app_alone() -> FastAPI:
    """:func:`served_app` without the gateway (``serve --no-gateway --workers N``)."""
    from ndnsci_catalog.config import Settings
    from ndnsci_catalog.serving import BoundedHttpToolsProtocol

    settings = Settings()
    BoundedHttpToolsProtocol.head_seconds = settings.head_seconds
    return _served(settings, gateway=False)


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
