"""``ndnsci catalog``: run the catalog service and manage its database.

    ndnsci catalog serve [--db URL] [--host 127.0.0.1] [--port 8000] [--no-gateway]
    ndnsci catalog migrate [--db URL]
    ndnsci catalog token create NAME [--db URL]
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
import sys
from typing import Any

from ndnsci.cli import federation


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
    serve.add_argument("--port", type=int, default=8000)
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
    _db_option(create)
    create.set_defaults(func=run_token_create)

    federation.register(commands, _db_option, db_url)  # site, trust, federate, mirror, conflicts


def _db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", metavar="URL", help="database URL (default: $NDNSCI_DB or the user's SQLite file)"
    )


def db_url(args: argparse.Namespace) -> str:
    from ndnsci.catalog.config import Settings

    return str(args.db) if args.db else Settings().db


def run_migrate(args: argparse.Namespace) -> int:
    from ndnsci.catalog.migrate import upgrade

    url = db_url(args)
    upgrade(url)
    print(f"database is at the newest schema: {_safe(url)}", file=sys.stderr)
    return 0


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ndnsci.catalog.config import Settings
    from ndnsci.catalog.main import create_app
    from ndnsci.catalog.migrate import upgrade

    settings = Settings(db=db_url(args))
    if not args.no_migrate:
        upgrade(settings.db)
    print(
        f"catalog of {_safe(settings.db)} at http://{args.host}:{args.port}/api/v1/",
        file=sys.stderr,
    )
    app = create_app(settings)
    if not args.no_gateway:
        from ndnsci.gateway.app import mount

        mount(app)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


def run_token_create(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import IntegrityError

    from ndnsci.catalog.database import make_engine, make_sessionmaker
    from ndnsci.catalog.migrate import upgrade
    from ndnsci.catalog.tokens import create_token

    url = db_url(args)
    upgrade(url)
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            token = create_token(session, args.name)
            session.commit()
    except IntegrityError:
        print(f"ndnsci catalog: a token named {args.name!r} exists already", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    print(token)
    print("store it now: only its hash is kept in the catalog", file=sys.stderr)
    return 0


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
