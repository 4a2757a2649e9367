"""The FastAPI application factory.

uvicorn --factory ndnsci.catalog.main:create_app     (or: ndnsci catalog serve)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from sqlalchemy import Engine

from .api.deps import reject_nul
from .api.routes import export, files, publish, search, status
from .config import Settings, get_settings
from .database import make_engine, make_sessionmaker
from .errors import CatalogError

API_PREFIX = "/api/v1"


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """An app serving the catalog at ``settings.db`` (or on ``engine``, which the caller owns)."""
    settings = settings or get_settings()
    owned = engine is None
    engine = engine or make_engine(settings.db, echo=settings.echo_sql)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
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
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    for module in (search, files, publish, export, status):
        app.include_router(module.router, prefix=API_PREFIX, dependencies=[Depends(reject_nul)])
    app.add_exception_handler(CatalogError, _catalog_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
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
