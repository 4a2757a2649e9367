"""GET /api/v1/quicklook/<NDN name>: maps and global means of published netCDF files, fetched
over a real forwarder from a real producer, served by uvicorn on loopback."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
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

from matplotlib.image import imread

from ndnsci.sdk import quicklook as ql
from ndnsci_catalog.gateway import quicklook
from tests.sdk.test_quicklook import write_curvilinear, write_gradient

NETCDF = Path(__file__).resolve().parents[1] / "data" / "netcdf"
FILES = sorted(
    p.relative_to(NETCDF) for p in NETCDF.rglob("*") if p.is_file() and p.suffix != ".md"
)


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
