"""``ndnsci gateway``: the HTTP gateway to NDN data, run apart from the catalog.

    ndnsci gateway [--catalog URL] [--host 127.0.0.1] [--port 8001]

Serves ``GET /data/<NDN name>`` for the files the catalog at URL publishes (default:
``$NDNSCI_CATALOG``, else http://127.0.0.1:8000), fetching their bytes over NDN through the
forwarder at ``NDN_CLIENT_TRANSPORT``. ``ndnsci catalog serve`` serves the same routes itself;
run this one where the HTTP users are and the catalog is elsewhere. Point ESGF records at it
with the catalog's ``NDNSCI_GATEWAY_URL=http://<this host>:<port>/data/``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ndnsci.cli._common import http_url, port_number


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "gateway",
        help="serve published files over HTTP, fetching them over NDN",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--catalog", metavar="URL", type=http_url, help="the catalog whose files to serve"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=port_number, default=8001)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ndnsci.base.environment import catalog_cert, settings
    from ndnsci_catalog.gateway import quicklook
    from ndnsci_catalog.gateway.app import create_app

    catalog = args.catalog or settings().catalog_url
    print(
        f"gateway to the files of {catalog} at http://{args.host}:{args.port}/data/",
        file=sys.stderr,
    )
    verify: Any = True
    if catalog.startswith("https://") and (cert := catalog_cert()) is not None:
        from ndnsci.base import tls

        verify = tls.pinned(cert)  # a site's own catalog, at an address its cert may not name
    app = create_app(catalog, verify=verify)
    quicklook.include(app)  # /api/v1/quicklook/<NDN name>: maps and global means
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
