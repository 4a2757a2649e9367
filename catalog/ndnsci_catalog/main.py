"""The FastAPI application factory.

uvicorn --factory ndnsci_catalog.main:create_app     (or: ndnsci catalog serve)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.types import Scope

from ndnsci_catalog.admission import Admission, BodyLimitMiddleware, BodyTooLarge, admitted
from ndnsci_catalog.api.deps import reject_nul
from ndnsci_catalog.api.routes import (
    esgf,
    export,
    federation,
    files,
    publish,
    search,
    status,
    transfers,
)
from ndnsci_catalog.config import Settings, get_settings
from ndnsci_catalog.database import Probe, engine_url, make_engine, make_sessionmaker
from ndnsci_catalog.errors import CatalogError, UnavailableError
from ndnsci_catalog.facetindex import FacetIndex, IndexBusy, engine_source
from ndnsci_catalog.loader import RequestPreparer
from ndnsci_catalog.metrics import METRICS_PATH, Metrics, MetricsMiddleware

API_PREFIX = "/api/v1"
#: pooled connections beyond one per turn (see ndnsci_catalog.admission): a spare
SPARE_CONNECTIONS = 1
log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """An app serving the catalog at ``settings.db`` (or on ``engine``, which the caller owns).

    Four engines on the database: the requests' pool (one connection per turn of the
    admission lanes), one connection for the writes of ``POST /publish``, one for the facet
    index's syncs and one for ``/health``, so that none of them waits for another's connections.

    Publishes are written on one connection of their own (when the app owns a file or server
    database): a SQLite connection's page cache is dropped whenever another connection has
    committed, so publishes taking turns over the pool re-read the name, tree and free-text
    indexes for every batch, and each pooled connection grew its own publishing cache
    (``bulk.PUBLISH_CACHE_KIB``); the server peaked at 1.26 GB for a million files.
    """
    settings = settings or get_settings()
    owned = engine is None
    admission = Admission(settings)
    pool_size = admission.connections + SPARE_CONNECTIONS
    engine = engine or make_engine(settings.db, echo=settings.echo_sql, pool_size=pool_size)
    index_engine = make_engine(engine_url(engine), pool_size=1)
    publish_engine = _publish_engine(engine, settings) if owned else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.probe.start()
        # load the facet index beside the first requests, not before them: at 10M files the
        # load is ~20 s of CPU (minutes at load 15), and /health, files, the tree and
        # autocomplete need no index; a search meanwhile waits for the load (its sync's turn,
        # read_wait_seconds, then a 503 with Retry-After; ESGF's waits) and never sees it half
        # made. The thread only reads: a server stopped meanwhile does not wait for it.
        app.state.index_loading = threading.Thread(
            target=_load_index, args=(app.state.index,), name="facet-index-load", daemon=True
        )
        app.state.index_loading.start()
        try:  # the publish preparing process, before the first publish waits for it
            await run_in_threadpool(app.state.preparer.warm)
        except Exception:  # no process could be started: the first big publish tries again
            log.exception("publish preparing process not started at start-up")
        yield
        app.state.preparer.close()
        app.state.probe.close()
        index_engine.dispose()
        if publish_engine is not None:
            publish_engine.dispose()
        if owned:
            engine.dispose()

    app = FastAPI(
        title="ndnsci catalog",
        version="1",
        summary="Find science files by what they are; fetch them by NDN name.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.publish_engine = publish_engine
    #: sessions for the writes of POST /publish (None: the request's own session)
    app.state.publish_sessionmaker = (
        make_sessionmaker(publish_engine) if publish_engine is not None else None
    )
    app.state.probe = Probe(engine_url(engine))
    # one facet index per process, following the database (tests may swap its source)
    app.state.index = FacetIndex(engine_source(index_engine))
    app.state.preparer = RequestPreparer(settings.publish_workers)
    app.state.admission = admission
    app.add_middleware(
        BodyLimitMiddleware,
        publish_path=f"{API_PREFIX}/publish",
        publish_limit=settings.max_publish_bytes,
        publish_records=settings.max_publish_records,
        limit=settings.max_body_bytes,
    )
    app.state.metrics = Metrics()
    # the app's sessionmaker as it is at the scrape (tests put the test's session there)
    app.state.metrics.watch_transfers(lambda: app.state.sessionmaker())  # noqa: PLW0108
    # outside the body limit: a refused request is counted too
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics, prefixes=(API_PREFIX,))
    if settings.cors_origins:  # outermost: a 413 carries the CORS headers too
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    for module in (search, files, publish, export, status, federation, transfers):
        app.include_router(
            module.router,
            prefix=API_PREFIX,
            dependencies=[Depends(admitted), Depends(reject_nul)],
        )
    # /esg-search: ESGF's paths, ESGF's errors (NUL included); searches, so admitted as ours
    app.include_router(esgf.router, dependencies=[Depends(admitted)])

    @app.get(METRICS_PATH, include_in_schema=False)
    async def metrics(request: Request) -> Response:
        body, kind = await run_in_threadpool(request.app.state.metrics.exposition)
        return Response(body, media_type=kind)

    app.add_exception_handler(CatalogError, _catalog_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    for busy in (IndexBusy, PoolTimeout):
        app.add_exception_handler(busy, _busy)
    app.add_exception_handler(OperationalError, _database_busy)
    _mount_portal(app, settings)  # last: the API routes above take precedence over the static files
    return app


def _load_index(index: FacetIndex) -> None:
    started = time.perf_counter()
    try:
        index.sync()
    except Exception:  # an unmigrated or unreachable database: the first search retries
        log.exception("facet index not loaded at start-up")
        return
    log.info("facet index loaded at start-up in %.1f s", time.perf_counter() - started)


def _publish_engine(engine: Engine, settings: Settings) -> Engine | None:
    """One connection for the publishes (a publish waits for it as long as for its turn), or
    None for an in-memory database (another engine would open another database)."""
    if engine.url.database in (None, "", ":memory:") and engine.dialect.name == "sqlite":
        return None
    return make_engine(engine_url(engine), pool_size=1, pool_timeout=settings.write_wait_seconds)


#: the longest an invalid value is quoted back in a 422 (a 100 MB value is not echoed)
QUOTED = 200


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """422 in the same shape as every other error: one readable message, then the details."""
    assert isinstance(exc, RequestValidationError)
    errors = [_short(e) for e in exc.errors()]
    message = "; ".join(
        f"{'.'.join(str(part) for part in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
        for e in errors
    )
    return JSONResponse({"detail": message, "errors": jsonable_encoder(errors)}, status_code=422)


def _short(error: Any) -> dict[str, Any]:
    """A validation error without its input when that is long (or not plain data)."""
    short = {k: v for k, v in dict(error).items() if k != "input"}
    value = error.get("input")
    if isinstance(value, str | int | float | bool) or value is None:
        short["input"] = value if not isinstance(value, str) else value[:QUOTED]
    return short


async def _busy(request: Request, exc: Exception) -> JSONResponse:
    """The facet index or the pool kept a request waiting too long: a 503, never a hang."""
    return await _catalog_error(request, UnavailableError(f"the catalog is busy ({exc}); retry"))


async def _database_busy(request: Request, exc: Exception) -> JSONResponse:
    """The database refused for now (SQLite locked beyond its busy timeout by another process,
    such as the transfer agent; a server connection lost): a 503 to retry, never a 500."""
    assert isinstance(exc, OperationalError)
    log.warning("database busy or away: %s", str(exc.orig).splitlines()[0] if exc.orig else exc)
    reason = str(exc.orig).splitlines()[0] if exc.orig else "unavailable"
    return await _catalog_error(
        request, UnavailableError(f"the catalog's database is busy or away ({reason}); retry")
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    """FastAPI's answer; a body too large also says how large a body may be; JSON nested too
    deeply for the decoder is a 422 as any other JSON the catalog cannot take (FastAPI's is a
    400 "There was an error parsing the body")."""
    if isinstance(exc, BodyTooLarge):
        return JSONResponse(exc.to_dict(), status_code=413)
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
        error = {"type": "json_invalid", "loc": ["body"], "msg": "JSON nested too deeply"}
        return JSONResponse(
            {"detail": "body: JSON nested too deeply", "errors": [error]}, status_code=422
        )
    return await http_exception_handler(request, exc)


async def _catalog_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CatalogError)
    if isinstance(exc, UnavailableError):  # counted in /health's load, logged by uvicorn
        headers = {"Retry-After": str(exc.retry_after)}
        return JSONResponse(exc.to_dict(), status_code=exc.status, headers=headers)
    return JSONResponse(exc.to_dict(), status_code=exc.status)


# --- the web portal (webui/) --------------------------------------------------------------------


def portal_dir(settings: Settings) -> Path | None:
    """The built web portal served at ``/``: ``settings.webui_dir`` (``$NDNSCI_WEBUI_DIR``), by
    default the build carried in the package; None when it is not there or turned off (''),
    so the API runs alone."""
    if not settings.webui_dir:
        return None
    directory = Path(settings.webui_dir)
    return directory if (directory / "index.html").is_file() else None


class _PortalFiles(StaticFiles):
    """Static files of the portal: content-hashed ``assets/`` are cached for good, the rest
    (``index.html``) is revalidated on every load so a new build shows at once."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        immutable = path.startswith("assets/") and response.status_code == 200
        response.headers["Cache-Control"] = (
            "public, max-age=31536000, immutable" if immutable else "no-cache"
        )
        return response


def _mount_portal(app: FastAPI, settings: Settings) -> None:
    directory = portal_dir(settings)
    if directory is not None:
        app.mount("/", _PortalFiles(directory=directory, html=True), name="portal")
