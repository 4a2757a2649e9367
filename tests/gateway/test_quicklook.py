"""GET /api/v1/quicklook/<NDN name>: maps and global means of published netCDF files, fetched
over a real forwarder from a real producer, served by uvicorn on loopback."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from support import Forwarder, Serve

from .conftest import Server, catalog_of, gateway_app

pytest.importorskip("matplotlib")
pytest.importorskip("xarray")

import xarray as xr
from matplotlib.image import imread

from ndnsci.sdk import quicklook as ql
from ndnsci_catalog.gateway import quicklook
from ndnsci_catalog.gateway.app import GatewayError
from tests.sdk.test_quicklook import write_curvilinear, write_gradient

NETCDF = Path(__file__).resolve().parents[1] / "data" / "netcdf"
FILES = sorted(
    p.relative_to(NETCDF) for p in NETCDF.rglob("*") if p.is_file() and p.suffix != ".md"
)


def write_big(path: Path, *, steps: int, fmt: str = "NETCDF4") -> Path:
    """tas(time, lat, lon) on a 1-degree grid, one chunk a step, not compressed (noise does
    not compress anyway): 253 KiB a step."""
    lat, lon = np.arange(-89.5, 90, 1.0), np.arange(0.5, 360, 1.0)
    noise = np.random.default_rng(7).normal(size=(steps, lat.size, lon.size))
    data = (
        250 + 30 * np.cos(np.deg2rad(lat))[None, :, None] + noise + np.arange(steps)[:, None, None]
    )
    ds = xr.Dataset(
        {"tas": (("time", "lat", "lon"), data.astype("float32"), {"units": "K"})},
        coords={
            "time": ("time", np.arange(steps) * 30.0,
                     {"units": "days since 2000-01-01", "calendar": "360_day"}),
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": ("lon", lon, {"units": "degrees_east"}),
        },
    )  # fmt: skip
    encoding = {"tas": {"chunksizes": (1, lat.size, lon.size)}} if fmt == "NETCDF4" else {}
    ds.to_netcdf(path, format=fmt, engine="netcdf4", encoding=encoding)
    return path


@dataclass
class Looks:
    url: str
    prefix: str
    root: Path
    app: Any

    def url_of(self, relative: str | Path, suffix: str = "") -> str:
        return f"{self.url}/api/v1/quicklook{self.prefix}/{relative}{suffix}"


@pytest.fixture(scope="module")
def looks(fw: Forwarder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Looks]:
    tmp = tmp_path_factory.mktemp("quicklook")
    root = tmp / "root"
    shutil.copytree(NETCDF, root, ignore=shutil.ignore_patterns("*.md"))
    write_gradient(root / "gradient.nc", calendar="360_day", times=3)
    write_curvilinear(root / "curvi.nc")
    write_big(root / "big.nc", steps=48)  # 12 MiB of netCDF-4: read in parts
    write_big(root / "big24.nc", steps=24)  # asked by many at once
    write_big(root / "big3.nc", steps=8, fmt="NETCDF3_CLASSIC")  # netCDF-3: fetched whole
    (root / "big_cut.nc").write_bytes((root / "big.nc").read_bytes()[: 3 * quicklook.BLOCK])
    prefix = f"/QLTEST/p{os.getpid()}"
    records: list[dict[str, object]] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        relative = path.relative_to(root).as_posix()
        records.append({
            "name": f"{prefix}/{relative}", "scheme": "test", "facets": {},
            "original_path": relative, "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        })  # fmt: skip
    db = f"sqlite:///{tmp / 'catalog.db'}"
    catalog_of(db, records)
    producer = Serve(root, prefix).start()
    app = gateway_app(db, fw.uri)
    quicklook.include(app, str(tmp / "copies"))  # type: ignore[arg-type]
    try:
        with Server(app) as server:
            yield Looks(server.url, prefix, root, app)
    finally:
        producer.stop()
        app.state.quicklooks.close()  # type: ignore[attr-defined]


def test_a_map_is_the_files_own_rendering(looks: Looks):
    response = httpx.get(looks.url_of("gradient.nc"), params={"time": 1}, timeout=60)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    with ql.open_netcdf(looks.root / "gradient.nc") as ds:
        local = ql.render_map(ds, "tas", time=1)
    assert response.content == local.png  # the same slice, drawn the same way
    # and the picture is of the gradient: warm (bright) north, cold (dark) south
    image = imread(io.BytesIO(response.content))[:, :, :3]
    left, top, right, bottom = local.axes_box
    middle = (left + right) // 2
    assert image[top + 3, middle].sum() > image[bottom - 3, middle].sum() + 1.0


def test_a_curvilinear_level(looks: Looks):
    params = {"variable": "thetao", "time": 1, "level": 3}
    response = httpx.get(looks.url_of("curvi.nc"), params=params, timeout=60)
    assert response.status_code == 200, response.text
    with ql.open_netcdf(looks.root / "curvi.nc") as ds:
        assert response.content == ql.render_map(ds, "thetao", 1, 3).png


def test_the_time_series(looks: Looks):
    response = httpx.get(looks.url_of("gradient.nc", "/timeseries.json"), timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["variable"] == "tas" and body["units"] == "K"
    assert body["calendar"] == "360_day" and body["weights"] == "cos(latitude)"
    assert body["times"] == ["2000-01-01", "2000-02-01", "2000-03-01"]
    assert body["values"] == pytest.approx([200, 210, 220], abs=1e-3)
    png = httpx.get(looks.url_of("gradient.nc", "/timeseries.png"), timeout=60)
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    info = httpx.get(looks.url_of("curvi.nc", "/info.json"), timeout=60).json()
    assert info["default"] == "thetao"
    (thetao,) = info["variables"]
    assert thetao["times"] == 2 and thetao["levels"] == 4 and thetao["grid"] == "2-D"


@pytest.mark.parametrize("relative", FILES, ids=[str(p) for p in FILES])
def test_every_file_renders_or_gives_a_clear_4xx(looks: Looks, relative: Path):
    response = httpx.get(looks.url_of(relative), timeout=60)
    if response.status_code == 200:
        assert response.content.startswith(b"\x89PNG")
        series = httpx.get(looks.url_of(relative, "/timeseries.json"), timeout=60)
        assert series.status_code == 200, series.text
        return
    assert response.status_code in (415, 422), response.text
    body = response.json()
    assert body["code"] in ("not-netcdf", "no-map") and body["detail"]


def test_bad_requests_say_why(looks: Looks):
    unknown = httpx.get(looks.url_of("gradient.nc"), params={"variable": "pr"}, timeout=60)
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "unknown-variable" and "tas" in unknown.json()["detail"]
    late = httpx.get(looks.url_of("gradient.nc"), params={"time": 7}, timeout=60)
    assert late.status_code == 422 and "0 to 2" in late.json()["detail"]
    missing = httpx.get(looks.url_of("nothing.nc"), timeout=60)
    assert missing.status_code == 404 and "no file named" in missing.json()["detail"]
    grib = httpx.get(looks.url_of("edge/not_netcdf_example.grib"), timeout=60)
    assert grib.status_code == 415 and "not a netCDF file" in grib.json()["detail"]
    word = httpx.get(looks.url_of("gradient.nc"), params={"time": "x"}, timeout=60)
    assert word.status_code == 422


def test_one_rendering_for_concurrent_requests_then_the_cache(looks: Looks):
    images = looks.app.state.quicklooks.images
    before = images.makes
    url = looks.url_of("curvi.nc")
    params = {"variable": "thetao", "time": 0, "level": 2}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: httpx.get(url, params=params, timeout=60), range(8)))
    assert {a.status_code for a in answers} == {200}
    assert len({a.content for a in answers}) == 1
    assert images.makes == before + 1
    again = httpx.get(url, params=params, timeout=60)
    assert again.content == answers[0].content and images.makes == before + 1
    assert np.isfinite(len(again.content))


def _copy_of(looks: Looks, relative: str) -> Any:
    sha = hashlib.sha256((looks.root / relative).read_bytes()).hexdigest()
    return looks.app.state.quicklooks.files.done[sha]


def test_a_netcdf4_file_is_read_in_parts(looks: Looks):
    size = (looks.root / "big.nc").stat().st_size
    response = httpx.get(looks.url_of("big.nc"), params={"time": 30}, timeout=120)
    assert response.status_code == 200, response.text
    with ql.open_netcdf(looks.root / "big.nc") as ds:
        assert response.content == ql.render_map(ds, "tas", time=30).png
        local = ql.global_mean(ds, "tas")
    copy = _copy_of(looks, "big.nc")
    assert isinstance(copy, quicklook.Sparse)
    # the header, the chunk index and step 30's chunk: a few blocks, not the 12 MiB
    print(f"big.nc: {copy.fetched:,} of {size:,} bytes fetched for one map", file=sys.stderr)
    assert copy.fetched <= 4 * quicklook.BLOCK < size / 2, (copy.fetched, size)
    # another step reads what it lacks, no more
    before = copy.fetched
    other = httpx.get(looks.url_of("big.nc"), params={"time": 2}, timeout=120)
    assert other.status_code == 200 and copy.fetched - before <= 2 * quicklook.BLOCK
    # the global mean reads every step: the rest comes at once, and the file is then whole
    series = httpx.get(looks.url_of("big.nc", "/timeseries.json"), timeout=120)
    assert series.status_code == 200, series.text
    assert series.json()["values"] == pytest.approx(local.values, rel=1e-6)
    assert copy.fetched == size and all(copy.held)
    assert (
        copy.path.read_bytes() == (looks.root / "big.nc").read_bytes()
    )  # the sparse copy filled is the file


def test_a_netcdf3_file_is_fetched_whole(looks: Looks):
    response = httpx.get(looks.url_of("big3.nc"), params={"time": 5}, timeout=120)
    assert response.status_code == 200, response.text
    with ql.open_netcdf(looks.root / "big3.nc") as ds:
        assert response.content == ql.render_map(ds, "tas", time=5).png
    assert isinstance(_copy_of(looks, "big3.nc"), Path)  # its reader reads every variable


def test_a_cut_netcdf4_file_is_a_clear_415(looks: Looks):
    response = httpx.get(looks.url_of("big_cut.nc"), timeout=120)
    assert response.status_code == 415, response.text
    assert response.json()["code"] == "not-netcdf"
    assert "cannot be read as netCDF" in response.json()["detail"]
    assert "truncated" in response.json()["detail"]


def test_a_fetch_failing_under_the_reader_is_the_gateways_error(tmp_path: Path):
    """The HDF5 library turns a reader's exception into its own: the fetch's failure is what
    the client gets (504 here), not 'not a netCDF file'."""
    path = write_big(tmp_path / "big.nc", steps=12)
    data = path.read_bytes()
    asked: list[tuple[int, int]] = []

    async def fetch(start: int, end: int) -> bytes:
        asked.append((start, end))
        if start == 0:
            return data[: end + 1]
        raise GatewayError(504, "no NDN producer answered for /x/big.nc")

    async def run() -> BaseException:
        sparse = quicklook.Sparse(tmp_path / "big.sparse", len(data), fetch)
        try:
            await sparse.fill_async(0, quicklook.BLOCK)
            with pytest.raises(GatewayError) as caught:
                await asyncio.to_thread(quicklook._map_png, sparse, None, 11, 0)
            return caught.value
        finally:
            sparse.close()

    failure = asyncio.run(run())
    assert isinstance(failure, GatewayError) and failure.status == 504
    assert asked[0] == (0, quicklook.BLOCK - 1) and len(asked) >= 2
    assert not (tmp_path / "big.sparse").exists()  # closed: the sparse copy is gone


def test_concurrent_maps_of_one_file_read_in_parts(looks: Looks):
    """Twelve steps asked at once of a file read in parts: each its own map, every block
    fetched once (the renderings wait their turn without holding the server's threads)."""
    steps = range(12, 24)
    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(
            lambda t: httpx.get(looks.url_of("big24.nc"), params={"time": t}, timeout=180), steps
        ))  # fmt: skip
    assert [a.status_code for a in answers] == [200] * len(steps), answers[0].text
    with ql.open_netcdf(looks.root / "big24.nc") as ds:
        for step, answer in zip(steps, answers, strict=True):
            assert answer.content == ql.render_map(ds, "tas", time=step).png, step
    copy = _copy_of(looks, "big24.nc")
    held = sum(min(quicklook.BLOCK, copy.size - i * quicklook.BLOCK)
               for i, h in enumerate(copy.held) if h)  # fmt: skip
    assert copy.fetched == held < copy.size  # every block once, and not the first half
