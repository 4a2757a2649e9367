"""The FastAPI application factory.

uvicorn --factory ndnsci.catalog.main:create_app     (or: ndnsci catalog serve)
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine
from starlette.types import Scope

from ndnsci.catalog.api.deps import reject_nul
from ndnsci.catalog.api.routes import esgf, export, federation, files, publish, search, status
from ndnsci.catalog.config import Settings, get_settings
from ndnsci.catalog.database import make_engine, make_sessionmaker
from ndnsci.catalog.errors import CatalogError
from ndnsci.catalog.facetindex import FacetIndex, engine_source
from ndnsci.catalog.loader import RequestPreparer

API_PREFIX = "/api/v1"
log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """An app serving the catalog at ``settings.db`` (or on ``engine``, which the caller owns)."""
    settings = settings or get_settings()
    owned = engine is None
    engine = engine or make_engine(settings.db, echo=settings.echo_sql)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:  # load the facet index before the first search, not during it
            await run_in_threadpool(app.state.index.sync)
        except Exception:  # an unmigrated or unreachable database: the first search retries
            log.exception("facet index not loaded at start-up")
        yield
        app.state.preparer.close()
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
    # one facet index per process, following the database (tests may swap its source)
    app.state.index = FacetIndex(engine_source(engine))
    app.state.preparer = RequestPreparer(settings.publish_workers)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    for module in (search, files, publish, export, status, federation):
        app.include_router(module.router, prefix=API_PREFIX, dependencies=[Depends(reject_nul)])
    app.include_router(esgf.router)  # /esg-search: ESGF's paths, ESGF's errors (NUL included)
    app.add_exception_handler(CatalogError, _catalog_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    _mount_portal(app, settings)  # last: the API routes above take precedence over the static files
    return app


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """422 in the same shape as every other error: one readable message, then the details."""
    assert isinstance(exc, RequestValidationError)
    errors = jsonable_encoder(exc.errors())
    message = "; ".join(
        f"{'.'.join(str(part) for part in e.get('loc', ()))}: {e.get('msg', 'invalid')}"
        for e in errors
    )
    return JSONResponse({"detail": message, "errors": errors}, status_code=422)


async def _catalog_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CatalogError)
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
