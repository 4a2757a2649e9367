"""``GET``/``HEAD /data/<NDN name>``: a published file over HTTP, its bytes fetched over NDN.

The name is the file's NDN name without the leading ``/``, its URI percent-encoded once more
for HTTP (``/data/CMIP5/output1/...nc``; the ``data`` links of ESGF records and the portal are
written so). Answers:

- 200 with ``Content-Length``, ``ETag`` (the file's SHA-256), ``Accept-Ranges: bytes``; HEAD
  gives the same headers; ``If-None-Match`` with the ETag (or ``*``) gives 304;
- 206 with exactly the bytes of a single ``Range`` (only the segments covering them are asked
  for), 416 for a range beyond the end; ``If-Range`` with another ETag gives the whole file;
- 404 when the catalog has no file of that name (the gateway fetches published files only);
- 502 when a producer answers wrongly (not found there, another version than the catalog's,
  a bad signature) or the forwarder cannot be reached; 504 when no producer answers.

Errors are JSON ``{"detail": "..."}`` like the catalog's. Once the body has started, a failure
cuts the response short: the client sees fewer bytes than ``Content-Length``.

The gateway is mounted on the catalog's app by ``ndnsci catalog serve`` (looking names up in
its database) or runs alone as ``ndnsci gateway --catalog URL`` (asking that catalog's API).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response, StreamingResponse
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ndnsci.errors import (
    FetchError,
    IntegrityError,
    NoProducerError,
    NotFoundError,
    TransportError,
)
from ndnsci.ndn import consumer
from ndnsci_catalog.esgf.docs import media_type
from ndnsci_catalog.gateway.ranges import ByteRange, RangeNotSatisfiable, parse_range
from ndnsci_catalog.gateway.stream import Source, Stream
from ndnsci_catalog.models import File
from ndnsci_catalog.records import RecordError, normalize_name

log = logging.getLogger(__name__)
PREFIX = "/data"


@dataclass(frozen=True)
class Listed:
    """What the catalog says of a file."""

    name: str
    size: int | None
    sha256: str | None
    filename: str


Lookup = Callable[[str], Awaitable[Listed | None]]


class GatewayError(Exception):
    """An answer other than the file: status, a message for the user, headers."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers


@dataclass
class Gateway:
    lookup: Lookup
    source: Source


def database_lookup(factory: sessionmaker[Session]) -> Lookup:
    """Names looked up in the catalog's database (the gateway mounted on the catalog)."""

    def find(name: str) -> Listed | None:
        with factory() as session:
            row = session.execute(
                select(File.size, File.sha256, File.filename).where(File.name == name)
            ).first()
        if row is None:
            return None
        return Listed(name, row.size, row.sha256, row.filename or name.rsplit("/", 1)[-1])

    async def lookup(name: str) -> Listed | None:
        return await run_in_threadpool(find, name)

    return lookup


def api_lookup(catalog_url: str, client: Any) -> Lookup:
    """Names looked up through a catalog's REST API (``ndnsci gateway`` on its own)."""
    import httpx

    base = catalog_url.rstrip("/") + "/api/v1/files/"

    async def lookup(name: str) -> Listed | None:
        try:
            response = await client.get(base + quote(name.lstrip("/"), safe="/"))
        except httpx.HTTPError as exc:
            raise GatewayError(502, f"the catalog at {catalog_url} cannot be asked: {exc}") from exc
        if response.status_code == 404:
            return None
        if not response.is_success:
            raise GatewayError(
                502, f"the catalog at {catalog_url} answered {response.status_code} for {name}"
            )
        record = response.json()
        filename = record.get("filename") or name.rsplit("/", 1)[-1]
        return Listed(name, record.get("size"), record.get("sha256"), filename)

    return lookup


# --- the route -------------------------------------------------------------------------------

router = APIRouter(tags=["data"])


@router.api_route(
    PREFIX + "/{name:path}",
    methods=["GET", "HEAD"],
    operation_id="get_data",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}},
        206: {"description": "the bytes of the requested range"},
        304: {"description": "not modified (If-None-Match)"},
        400: {"description": "not an NDN name"},
        404: {"description": "not in the catalog"},
        416: {"description": "range beyond the end"},
        502: {"description": "a producer or the forwarder failed"},
        504: {"description": "no producer answered"},
    },
)
async def get_data(name: str, request: Request) -> Response:
    """A published file by NDN name, fetched over NDN (single byte ranges supported)."""
    gateway: Gateway = request.app.state.gateway
    try:
        return await _answer(gateway, name, request)
    except GatewayError as exc:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)


async def _answer(gateway: Gateway, path: str, request: Request) -> Response:
    name = _canonical(path)
    listed = await gateway.lookup(name)
    if listed is None:
        raise GatewayError(404, f"no file named {name!r} in the catalog")
    target = await _discover(gateway, listed)
    size = listed.size if listed.size is not None else target.size
    assert size is not None  # _discover checked
    headers = {"Accept-Ranges": "bytes", "Content-Type": media_type(listed.filename)}
    etag = f'"{listed.sha256}"' if listed.sha256 else None
    if etag is not None:
        headers["ETag"] = etag
    matches = _etags(request.headers.get("if-none-match"))
    # "*" matches any current representation (RFC 9110 13.1.2): the file exists, so a GET or
    # HEAD with it is not modified, whether or not the catalog knows an ETag
    if "*" in matches or (etag is not None and etag in matches):
        return Response(status_code=304, headers=headers)
    wanted = _range(request, size, etag)
    status = 200 if wanted is None else 206
    span = wanted or ByteRange(0, size - 1)
    headers["Content-Length"] = str(span.length if size else 0)
    if wanted is not None:
        headers["Content-Range"] = wanted.content_range(size)
    if request.method == "HEAD" or size == 0:
        return Response(status_code=status, headers=headers)
    stream, first = await _start(gateway, listed, target, span)
    return StreamingResponse(_body(stream, first, name), status_code=status, headers=headers)


async def _start(
    gateway: Gateway, listed: Listed, target: consumer.Target, span: ByteRange
) -> tuple[Stream, bytes | None]:
    """A stream and its first bytes, before the status line: a failure here is still a clear
    error. A producer refusing the version discovered earlier (the file was published again
    meanwhile) is asked for the new one, once."""
    for attempt in (1, 2):
        stream = gateway.source.stream(target, span.start, span.end)
        try:
            return stream, await stream.next_chunk()
        except BaseException as exc:
            stream.cancel()
            gateway.source.forget(listed.name)
            if (
                attempt == 2
                or isinstance(exc, NoProducerError)
                or not isinstance(exc, NotFoundError)
            ):
                raise _fetch_error(listed.name, exc) from exc
        target = await _discover(gateway, listed)
    raise AssertionError("unreachable: the second attempt returns or raises")


async def _body(stream: Stream, first: bytes | None, name: str) -> Any:
    try:
        async for chunk in stream.body(first):
            yield chunk
    except (FetchError, TransportError) as exc:
        log.warning("%s: response cut short: %s", name, exc)
        raise


def _canonical(path: str) -> str:
    try:
        return normalize_name("/" + path.lstrip("/"))
    except RecordError as exc:
        raise GatewayError(400, exc.message) from None


async def _discover(gateway: Gateway, listed: Listed) -> consumer.Target:
    """The producer's version of the file, which must be the catalog's (a version remembered
    from earlier that is not is forgotten and asked again, once)."""
    problem = ""
    for _ in range(2):
        try:
            target = await run_in_threadpool(gateway.source.discover, listed.name)
        except Exception as exc:
            raise _fetch_error(listed.name, exc) from exc
        if target.size is None:
            target.size = listed.size
        problem = _not_listed(listed, target) or ""
        if not problem:
            return target
        gateway.source.forget(listed.name)
    raise GatewayError(502, problem)


def _not_listed(listed: Listed, target: consumer.Target) -> str | None:
    """Why the producer's version is not the catalog's (None: it is)."""
    if target.size is None:
        return f"{listed.name}: neither catalog nor producer knows its size"
    if listed.size is not None and target.size != listed.size:
        return (
            f"{listed.name}: the producer serves {target.size:,} bytes, the catalog lists "
            f"{listed.size:,}: it serves another version (publish it again, or wait for the "
            "producer to catch up)"
        )
    if listed.sha256 and target.sha256 is not None and target.sha256.hex() != listed.sha256:
        return (
            f"{listed.name}: the producer's signed SHA-256 {target.sha256.hex()} is not the "
            f"catalog's {listed.sha256}: it serves another version"
        )
    return None


def _fetch_error(name: str, exc: BaseException) -> GatewayError:
    if isinstance(exc, NoProducerError):
        return GatewayError(504, f"no NDN producer answered for {name}: {exc}")
    if isinstance(exc, NotFoundError):
        return GatewayError(502, f"the NDN producer does not serve {name}: {exc}")
    if isinstance(exc, IntegrityError):
        return GatewayError(502, f"{name} failed verification: {exc}")
    if isinstance(exc, TransportError):
        return GatewayError(502, f"the gateway cannot reach its NDN forwarder: {exc}")
    if isinstance(exc, FetchError):
        return GatewayError(504, f"fetching {name} over NDN failed: {exc}")
    if isinstance(exc, GatewayError):
        return exc
    raise exc


def _etags(header: str | None) -> set[str]:
    if not header:
        return set()
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}


def _range(request: Request, size: int, etag: str | None) -> ByteRange | None:
    if request.method not in ("GET", "HEAD"):
        return None
    if_range = request.headers.get("if-range")
    if if_range is not None and if_range.strip() != etag:
        return None  # the client's copy is another version: send the whole file
    try:
        return parse_range(request.headers.get("range"), size)
    except RangeNotSatisfiable as exc:
        raise GatewayError(
            416, f"range not satisfiable: {exc}", {"Content-Range": f"bytes */{size}"}
        ) from None


# --- apps ------------------------------------------------------------------------------------


def mount(app: FastAPI, source: Source | None = None) -> None:
    """Serve ``/data/`` on the catalog's app, looking names up in its database.

    The routes go before the portal's static files (mounted at ``/``, which would take
    ``/data/`` otherwise).
    """
    app.state.gateway = Gateway(database_lookup(app.state.sessionmaker), source or Source())
    before = len(app.router.routes)
    app.include_router(router)
    added = app.router.routes[before:]
    del app.router.routes[before:]
    app.router.routes[:0] = added


def create_app(catalog_url: str, source: Source | None = None, verify: Any = True) -> FastAPI:
    """The gateway alone, for a catalog elsewhere (``ndnsci gateway --catalog URL``);
    ``verify``: httpx's, for an https catalog (a context trusting its certificate)."""
    import httpx

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        async with httpx.AsyncClient(timeout=30.0, verify=verify) as client:
            app.state.gateway = Gateway(api_lookup(catalog_url, client), source or Source())
            yield

    app = FastAPI(
        title="ndnsci HTTP gateway",
        version="1",
        summary="Published files over HTTP; the bytes travel over NDN.",
        lifespan=lifespan,
    )
    app.include_router(router)
    return app
