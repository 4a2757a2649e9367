"""``GET /api/v1/quicklook/<NDN name>``: look at a published netCDF file before downloading it.

- ``/api/v1/quicklook/<name>?variable=V&time=T&level=L``: a PNG map of ``V`` (default: the
  file's first data variable) at time step ``T`` and level ``L`` (indexes, default 0) on the
  file's own grid, colour bar in the variable's units (:mod:`ndnsci.sdk.quicklook` draws it);
- ``.../<name>/timeseries.png`` and ``.../<name>/timeseries.json``: the cos(latitude)-weighted
  global mean of ``V`` at each time step, in the file's calendar;
- ``.../<name>/info.json``: the file's drawable variables with their time steps and levels
  (what the portal's controls offer).

The file is fetched as ``/data/`` fetches it (the gateway's :class:`~.stream.Source`: through
the forwarder, so from its cache when there; the signed SHA-256 checked) into a small bounded
folder of local copies keyed by SHA-256, and opened lazily: only the slice drawn is read.
Images are cached by (SHA-256, kind, variable, time, level) in a bounded LRU; concurrent
requests for one image (or one file) wait for the one rendering (or fetch) in progress.
Rendering runs in a worker thread, one at a time (netCDF4's HDF5 is not thread-safe), never on
the event loop.

Errors are JSON ``{"detail": "...", "code": "..."}``: 404 (no such file in the catalog, or no
such variable), 415 (not a netCDF file the reader understands), 422 (a time step or level out
of range, a variable with no map), 413 (a file larger than the quick look's limit), 501
(``ndnsci-catalog[quicklook]`` not installed), and the gateway's 502/504 for NDN failures.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ndnsci.errors import FetchError, QuicklookError, TransportError
from ndnsci_catalog.gateway.app import (
    Gateway,
    GatewayError,
    Listed,
    _canonical,
    _discover,
    _fetch_error,
    _start,
)
from ndnsci_catalog.gateway.ranges import ByteRange

PREFIX = "/api/v1/quicklook"
#: images kept (and their total bytes)
IMAGE_ENTRIES = 256
IMAGE_BYTES = 64 << 20
#: local copies of fetched files kept (and their total bytes)
FILE_ENTRIES = 8
FILE_BYTES = 2 << 30
#: the largest file a quick look fetches
MAX_FILE_BYTES = 2 << 30

STATUS = {
    "not-netcdf": 415,
    "unknown-variable": 404,
    "time-out-of-range": 422,
    "level-out-of-range": 422,
    "no-map": 422,
}

#: one rendering at a time: netCDF4's HDF5 is not thread-safe (DEVELOPERS.md, "Thread safety")
_RENDER_LOCK = threading.Lock()


class _SingleFlight:
    """A bounded LRU of results by key; concurrent asks for a missing key share one make()."""

    def __init__(self, entries: int, max_bytes: int, size: Callable[[Any], int]) -> None:
        self.entries, self.max_bytes, self.size = entries, max_bytes, size
        self.done: OrderedDict[Any, Any] = OrderedDict()
        self.bytes = 0
        self.pending: dict[Any, asyncio.Future[Any]] = {}
        self.makes = 0  # how many times make() ran (the tests count renderings)
        self.on_evict: Callable[[Any], None] | None = None

    async def get(self, key: Any, make: Callable[[], Awaitable[Any]]) -> Any:
        if key in self.done:
            self.done.move_to_end(key)
            return self.done[key]
        waiting = self.pending.get(key)
        if waiting is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[key] = future
        try:
            self.makes += 1
            value = await make()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            self.pending.pop(key, None)
        future.set_result(value)
        self._keep(key, value)
        return value

    def _keep(self, key: Any, value: Any) -> None:
        self.done[key] = value
        self.bytes += self.size(value)
        while len(self.done) > self.entries or (self.bytes > self.max_bytes and len(self.done) > 1):
            _, old = self.done.popitem(last=False)
            self.bytes -= self.size(old)
            if self.on_evict is not None:
                self.on_evict(old)


class QuickLooks:
    """The quick looks of one gateway: local copies of files, images, single flights."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = Path(folder or tempfile.mkdtemp(prefix="ndnsci-quicklook-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.images = _SingleFlight(IMAGE_ENTRIES, IMAGE_BYTES, _size_of)
        self.files = _SingleFlight(FILE_ENTRIES, FILE_BYTES, lambda p: p.stat().st_size)
        self.files.on_evict = lambda p: p.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    async def local_copy(self, gateway: Gateway, listed: Listed) -> Path:
        key = listed.sha256 or listed.name
        return await self.files.get(key, lambda: self._fetch(gateway, listed))  # type: ignore[no-any-return]

    async def _fetch(self, gateway: Gateway, listed: Listed) -> Path:
        target = await _discover(gateway, listed)
        size = listed.size if listed.size is not None else target.size
        assert size is not None  # _discover checked
        if size > MAX_FILE_BYTES:
            raise GatewayError(
                413, f"{listed.name} has {size:,} bytes: a quick look fetches at most "
                f"{MAX_FILE_BYTES:,}; download it instead (/data/...)",
            )  # fmt: skip
        name = hashlib.sha256(listed.name.encode()).hexdigest()[:16]
        path = self.folder / f"{listed.sha256 or name}.nc"
        partial = path.with_suffix(".part")
        if size == 0:
            partial.write_bytes(b"")
            partial.replace(path)
            return path
        stream, first = await _start(gateway, listed, target, ByteRange(0, size - 1))
        try:
            with partial.open("wb") as out:
                async for chunk in stream.body(first):
                    await run_in_threadpool(out.write, chunk)
        except (FetchError, TransportError) as exc:
            partial.unlink(missing_ok=True)
            raise _fetch_error(listed.name, exc) from exc
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(path)
        return path


def _size_of(value: Any) -> int:
    return len(value[0]) if isinstance(value, tuple) else 0


# --- rendering (in a worker thread) ----------------------------------------------------------


def _map_png(path: Path, variable: str | None, time: int, level: int) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK:
        ds = ql.open_netcdf(path)
        try:
            rendered = ql.render_map(ds, variable, time, level)
        finally:
            ds.close()
    return rendered.png, "image/png"


def _series(path: Path, variable: str | None, level: int, kind: str) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK:
        ds = ql.open_netcdf(path)
        try:
            series = ql.global_mean(ds, variable, level)
        finally:
            ds.close()
        if kind == "json":
            return json.dumps(series.to_dict()).encode(), "application/json"
        return ql.render_timeseries(series), "image/png"


def _info(path: Path) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK:
        ds = ql.open_netcdf(path)
        try:
            first = ql.choose_variable(ds)
            variables = []
            for name in ql.data_variables(ds):
                try:
                    f = ql.describe_variable(ds, str(name))
                except QuicklookError:
                    continue
                variables.append(f)
        finally:
            ds.close()
    body = {"default": first, "variables": variables}
    return json.dumps(body).encode(), "application/json"


# --- the routes ------------------------------------------------------------------------------

router = APIRouter(tags=["quicklook"])
KINDS = {"timeseries.png": "series-png", "timeseries.json": "series-json", "info.json": "info"}


@router.get(
    PREFIX + "/{name:path}",
    operation_id="get_quicklook",
    response_class=Response,
    responses={
        200: {"content": {"image/png": {}, "application/json": {}}},
        404: {"description": "not in the catalog, or no such variable"},
        413: {"description": "the file is larger than a quick look fetches"},
        415: {"description": "not a netCDF file the reader understands"},
        422: {"description": "time step or level out of range; a variable with no map"},
        501: {"description": "the quick look's packages are not installed"},
        502: {"description": "a producer or the forwarder failed"},
        504: {"description": "no producer answered"},
    },
)
async def get_quicklook(
    name: str,
    request: Request,
    variable: str | None = Query(None, description="the variable; default: the first"),
    time: int = Query(0, description="time step (index along the time axis; -1: the last)"),
    level: int = Query(0, description="level (index along the vertical axis)"),
) -> Response:
    """A PNG map of a file's variable at one time step; ``/timeseries.png|json``: its global
    mean in time; ``/info.json``: its variables, time steps and levels."""
    gateway: Gateway = request.app.state.gateway
    looks: QuickLooks = request.app.state.quicklooks
    try:
        return await _answer(gateway, looks, name, variable or None, time=time, level=level)
    except GatewayError as exc:
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)
    except QuicklookError as exc:
        return JSONResponse(
            {"detail": str(exc), "code": exc.code}, status_code=STATUS.get(exc.code, 422)
        )


async def _answer(
    gateway: Gateway, looks: QuickLooks, path: str, variable: str | None, *, time: int, level: int
) -> Response:
    kind = "map"
    for suffix, which in KINDS.items():
        if path.endswith("/" + suffix):
            kind, path = which, path[: -len(suffix) - 1]
            break
    try:
        import matplotlib  # noqa: F401
        import xarray  # noqa: F401
    except ImportError:
        raise GatewayError(
            501, "quick looks need xarray and matplotlib: pip install 'ndnsci-catalog[quicklook]'"
        ) from None
    name = _canonical(path)
    listed = await gateway.lookup(name)
    if listed is None:
        raise GatewayError(404, f"no file named {name!r} in the catalog")
    local = await looks.local_copy(gateway, listed)
    sha = listed.sha256 or name
    if kind == "map":
        key: tuple[Any, ...] = (sha, kind, variable, time, level)
        make = lambda: run_in_threadpool(_map_png, local, variable, time, level)  # noqa: E731
    elif kind == "info":
        key = (sha, kind)
        make = lambda: run_in_threadpool(_info, local)  # noqa: E731
    else:
        key = (sha, kind, variable, level)
        fmt = "json" if kind == "series-json" else "png"
        make = lambda: run_in_threadpool(_series, local, variable, level, fmt)  # noqa: E731
    body, media = await looks.images.get(key, make)
    headers = {"Cache-Control": "public, max-age=3600"}
    if listed.sha256:
        digest = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
        headers["ETag"] = f'"{digest}"'
    return Response(body, media_type=media, headers=headers)


def include(app: FastAPI, folder: str | None = None) -> None:
    """Serve ``/api/v1/quicklook/`` on an app the gateway is mounted on (``app.state.gateway``
    set by :func:`~.app.mount`, or by :func:`~.app.create_app`'s lifespan), before the portal."""
    looks = QuickLooks(folder)
    app.state.quicklooks = looks
    before = len(app.router.routes)
    app.include_router(router)
    added = app.router.routes[before:]
    del app.router.routes[before:]
    app.router.routes[:0] = added
    with contextlib.suppress(AttributeError):
        app.router.on_shutdown.append(looks.close)
