"""``GET /api/v1/quicklook/<NDN name>``: look at a published netCDF file before downloading it.

- ``/api/v1/quicklook/<name>?variable=V&time=T&level=L``: a PNG map of ``V`` (default: the
  file's first data variable) at time step ``T`` and level ``L`` (indexes, default 0) on the
  file's own grid, colour bar in the variable's units (:mod:`ndnsci.sdk.quicklook` draws it);
- ``.../<name>/timeseries.png`` and ``.../<name>/timeseries.json``: the cos(latitude)-weighted
  global mean of ``V`` at each time step, in the file's calendar;
- ``.../<name>/info.json``: the file's drawable variables with their time steps and levels
  (what the portal's controls offer).

The file is fetched as ``/data/`` fetches it (the gateway's :class:`~.stream.Source`: through
the forwarder, so from its cache when there; every segment's digest checked) into a small
bounded folder of local copies keyed by SHA-256. A netCDF-4 (HDF5) file is read in parts: its
copy is sparse, filled block by block (``BLOCK`` bytes, neighbours fetched as one range) as
h5netcdf reads it, so a map of one time step of a 100 MB file fetches its header, its chunk
index and that step's chunks, not the file. A netCDF-3 file (whose reader reads every variable
at open) and a file read whole (a global mean touches every step) are fetched whole, checked
against the signed SHA-256.
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
import concurrent.futures
import contextlib
import hashlib
import io
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from ndnsci.errors import FetchError, QuicklookError, TransportError
from ndnsci.ndn import consumer
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
#: a netCDF-4 file read in parts is fetched in blocks of this many bytes
BLOCK = 1 << 20
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"

STATUS = {
    "not-netcdf": 415,
    "unknown-variable": 404,
    "time-out-of-range": 422,
    "level-out-of-range": 422,
    "no-map": 422,
}

#: one rendering at a time: netCDF4's HDF5 is not thread-safe (DEVELOPERS.md, "Thread safety")
_RENDER_LOCK = threading.Lock()
#: ...in a thread of its own: renderings waiting their turn hold no thread of the server's
#: pool, which a rendering reading a file in parts needs for its fetches
_RENDERER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ndnsci-quicklook")


async def _render(func: Callable[..., tuple[bytes, str]], *args: Any) -> tuple[bytes, str]:
    return await asyncio.get_running_loop().run_in_executor(_RENDERER, func, *args)


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
        self.files = _SingleFlight(FILE_ENTRIES, FILE_BYTES, _file_bytes)
        self.files.on_evict = _evict

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    async def local_copy(self, gateway: Gateway, listed: Listed) -> Path | Sparse:
        """The file's local copy: whole (a Path), or a sparse one read in parts."""
        key = listed.sha256 or listed.name
        return await self.files.get(key, lambda: self._fetch(gateway, listed))  # type: ignore[no-any-return]

    async def _fetch(self, gateway: Gateway, listed: Listed) -> Path | Sparse:
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
        if size > BLOCK and _parts_readable():
            sparse = Sparse(
                path.with_suffix(".sparse"), size, _range_fetcher(gateway, listed, target)
            )
            try:
                head = await sparse.fill_async(0, min(size, BLOCK))
            except BaseException:
                sparse.close()
                raise
            if head.startswith(HDF5_MAGIC):
                return sparse
            sparse.close()  # netCDF-3 (read whole at open) or not netCDF: fetched whole
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


def _file_bytes(copy: Path | Sparse) -> int:
    return copy.size if isinstance(copy, Sparse) else copy.stat().st_size


def _evict(copy: Path | Sparse) -> None:
    if isinstance(copy, Sparse):
        copy.close()
    else:
        copy.unlink(missing_ok=True)


def _parts_readable() -> bool:
    try:
        import h5netcdf  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


Fetch = Callable[[int, int], Coroutine[Any, Any, bytes]]


def _range_fetcher(gateway: Gateway, listed: Listed, target: consumer.Target) -> Fetch:
    """Bytes ``start..end`` (both included) of the file over NDN, as ``/data/`` ranges are
    (a version the producer no longer serves is discovered again, once, by ``_start``)."""

    async def fetch(start: int, end: int) -> bytes:
        stream, first = await _start(gateway, listed, target, ByteRange(start, end))
        parts = []
        try:
            async for chunk in stream.body(first):
                parts.append(chunk)
        except (FetchError, TransportError) as exc:
            raise _fetch_error(listed.name, exc) from exc
        data = b"".join(parts)
        if len(data) != end - start + 1:
            raise GatewayError(
                502, f"{listed.name}: bytes {start}-{end} came back as {len(data):,} bytes"
            )
        return data

    return fetch


class Sparse:
    """A local copy filled in blocks as they are read (a sparse file and the blocks it holds).

    The readers are h5netcdf's, in the rendering thread; the blocks come over NDN on the event
    loop (:func:`asyncio.run_coroutine_threadsafe`). A failed fetch is kept in ``failure`` (the
    HDF5 library turns a reader's exception into its own error) and raised again by the caller.
    """

    def __init__(self, path: Path, size: int, fetch: Fetch) -> None:
        self.path, self.size, self.fetch = path, size, fetch
        self.blocks = (size + BLOCK - 1) // BLOCK
        self.held = bytearray(self.blocks)
        self.fetched = 0  # bytes fetched over NDN so far (the tests and the bench read it)
        self.failure: BaseException | None = None
        self.loop = asyncio.get_running_loop()
        self.lock = threading.Lock()
        with path.open("wb") as out:
            out.truncate(size)
        self.fd = os.open(path, os.O_RDWR)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.path.unlink(missing_ok=True)

    def _missing(self, start: int, end: int) -> list[tuple[int, int]]:
        """Runs of blocks not held among those covering bytes start..end-1: (first, last)."""
        runs: list[tuple[int, int]] = []
        for block in range(start // BLOCK, (end - 1) // BLOCK + 1):
            if self.held[block]:
                continue
            if runs and runs[-1][1] == block - 1:
                runs[-1] = (runs[-1][0], block)
            else:
                runs.append((block, block))
        return runs

    def _store(self, first: int, data: bytes) -> None:
        os.pwrite(self.fd, data, first * BLOCK)
        last = first + (len(data) + BLOCK - 1) // BLOCK - 1
        for block in range(first, last + 1):
            self.held[block] = 1
        self.fetched += len(data)

    def _span(self, first: int, last: int) -> tuple[int, int]:
        return first * BLOCK, min(self.size, (last + 1) * BLOCK) - 1

    async def fill_async(self, start: int, end: int) -> bytes:
        """Bytes start..end-1, fetching what is missing (on the event loop)."""
        for first, last in self._missing(start, end):
            self._store(first, await self.fetch(*self._span(first, last)))
        return os.pread(self.fd, end - start, start)

    def read(self, start: int, length: int) -> bytes:
        """Bytes from ``start`` (in a worker thread), fetching the missing blocks."""
        end = min(self.size, start + length)
        if end <= start:
            return b""
        with self.lock:
            for first, last in self._missing(start, end):
                future: concurrent.futures.Future[bytes] = asyncio.run_coroutine_threadsafe(
                    self.fetch(*self._span(first, last)), self.loop
                )
                try:
                    data = future.result()
                except BaseException as exc:
                    self.failure = exc
                    raise OSError(f"{self.path.name}: {exc}") from exc
                self._store(first, data)
            return os.pread(self.fd, end - start, start)

    def reader(self) -> _Reader:
        return _Reader(self)


class _Reader(io.RawIOBase):
    """A binary file object over a :class:`Sparse` copy, for h5netcdf (one per opening)."""

    def __init__(self, sparse: Sparse) -> None:
        super().__init__()
        self.sparse, self.position = sparse, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.sparse.size}
        self.position = max(0, base[whence] + offset)
        return self.position

    def readinto(self, buffer: Any) -> int:
        data = self.sparse.read(self.position, len(buffer))
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


@contextlib.contextmanager
def _opened(copy: Path | Sparse) -> Any:
    """The copy opened by the quick look's reader; a fetch that failed underneath is raised
    as itself (a 502 or 504), not as the reader's 'not netCDF'."""
    from ndnsci.sdk import quicklook as ql

    if isinstance(copy, Path):
        ds = ql.open_netcdf(copy)
    else:
        try:
            ds = ql.open_hdf5(copy.reader(), copy.path.name)
        except QuicklookError:
            if copy.failure is not None:
                raise copy.failure from None
            raise
    try:
        yield ds
    except Exception:
        if isinstance(copy, Sparse) and copy.failure is not None:
            raise copy.failure from None
        raise
    finally:
        ds.close()


# --- rendering (in a worker thread) ----------------------------------------------------------


def _map_png(copy: Path | Sparse, variable: str | None, time: int, level: int) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK, _opened(copy) as ds:
        rendered = ql.render_map(ds, variable, time, level)
    return rendered.png, "image/png"


def _series(copy: Path | Sparse, variable: str | None, level: int, kind: str) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK:
        with _opened(copy) as ds:
            series = ql.global_mean(ds, variable, level)
        if kind == "json":
            return json.dumps(series.to_dict()).encode(), "application/json"
        return ql.render_timeseries(series), "image/png"


def _info(copy: Path | Sparse) -> tuple[bytes, str]:
    from ndnsci.sdk import quicklook as ql

    with _RENDER_LOCK, _opened(copy) as ds:
        first = ql.choose_variable(ds)
        variables = []
        for name in ql.data_variables(ds):
            try:
                f = ql.describe_variable(ds, str(name))
            except QuicklookError:
                continue
            variables.append(f)
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
    if kind.startswith("series") and isinstance(local, Sparse):
        await local.fill_async(0, local.size)  # every step: the rest in one stream, not by block
    sha = listed.sha256 or name
    if kind == "map":
        key: tuple[Any, ...] = (sha, kind, variable, time, level)
        make = lambda: _render(_map_png, local, variable, time, level)  # noqa: E731
    elif kind == "info":
        key = (sha, kind)
        make = lambda: _render(_info, local)  # noqa: E731
    else:
        key = (sha, kind, variable, level)
        fmt = "json" if kind == "series-json" else "png"
        make = lambda: _render(_series, local, variable, level, fmt)  # noqa: E731
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
