"""The quick look's rendering (ndnsci.sdk.quicklook): what it draws is the file's data.

The map's 2-D array is compared with xarray's own slice; a field that grows with latitude
must come out in the colour map's order from the bottom of the image to the top; every file
of tests/data/netcdf renders or fails with a QuicklookError that says why.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("matplotlib")

from matplotlib import colormaps  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from ndnsci.errors import QuicklookError  # noqa: E402
from ndnsci.sdk import quicklook as ql  # noqa: E402

NETCDF = Path(__file__).resolve().parents[1] / "data" / "netcdf"
FILES = sorted(p for p in NETCDF.rglob("*") if p.is_file() and p.suffix != ".md")


def write_gradient(path: Path, *, calendar: str = "noleap", times: int = 3) -> Path:
    """tas(time, lat, lon) = 200 + lat + 10 * time, on a regular 2.5-degree grid."""
    lat = np.arange(-88.75, 90, 2.5)
    lon = np.arange(0, 360, 5.0)
    t = np.arange(times) * 30.0
    data = 200 + lat[None, :, None] + 10 * t[:, None, None] / 30 + 0 * lon[None, None, :]
    ds = xr.Dataset(
        {"tas": (("time", "lat", "lon"), data.astype("float32"),
                 {"units": "K", "long_name": "Near-Surface Air Temperature"})},
        coords={
            "time": ("time", t, {"units": "days since 2000-01-01", "calendar": calendar,
                                 "standard_name": "time", "axis": "T"}),
            "lat": ("lat", lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "lon": ("lon", lon, {"units": "degrees_east", "standard_name": "longitude"}),
        },
    )  # fmt: skip
    ds.to_netcdf(path, engine="netcdf4")
    return path


def write_curvilinear(path: Path) -> Path:
    """thetao(time, lev, j, i) on a 2-D (rotated) lat/lon grid named by `coordinates`."""
    j, i = np.meshgrid(np.arange(20), np.arange(30), indexing="ij")
    lat2 = -60 + j * 6.0 + i * 0.2
    lon2 = i * 12.0 + j * 0.5
    data = np.stack([np.stack([lat2 + 100 * k + 1000 * n for k in range(4)]) for n in range(2)])
    data[0, 0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"thetao": (("time", "lev", "j", "i"), data,
                    {"units": "degC", "standard_name": "sea_water_potential_temperature"})},
        coords={
            "time": ("time", [15.0, 45.0], {"units": "days since 1850-01-01",
                                            "calendar": "360_day"}),
            "lev": ("lev", [5.0, 15.0, 25.0, 35.0], {"units": "m", "positive": "down"}),
            "latitude": (("j", "i"), lat2, {"units": "degrees_north"}),
            "longitude": (("j", "i"), lon2, {"units": "degrees_east"}),
        },
    )  # fmt: skip
    ds.to_netcdf(path, engine="netcdf4")
    return path


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(NETCDF)) for p in FILES])
def test_every_file_renders_or_says_why(path):
    try:
        ds = ql.open_netcdf(path)
    except QuicklookError as exc:
        assert exc.code == "not-netcdf" and path.name in str(exc)
        return
    with ds:
        try:
            rendered = ql.render_map(ds)
        except QuicklookError as exc:
            assert exc.code == "no-map"
            assert "dimension" in str(exc)
            return
        assert rendered.png.startswith(b"\x89PNG\r\n\x1a\n")
        name = rendered.field.variable
        # what was drawn is xarray's own first slice
        var = ds[name]
        expected = var.isel({d: 0 for d in var.dims if d not in _spatial(rendered, var)})
        expected = np.asarray(expected.values, dtype="float64")
        np.testing.assert_array_equal(np.isnan(rendered.data), np.isnan(expected))
        np.testing.assert_allclose(rendered.data, expected, equal_nan=True)
        if np.isfinite(expected).any():  # some subsets are all ocean or all land: all missing
            assert np.nanmean(rendered.data) == pytest.approx(float(np.nanmean(expected)))
            low, high = np.nanmin(expected), np.nanmax(expected)
            if low < high:  # (a constant field gets a colour bar of +-0.5 around it)
                assert rendered.limits == (low, high)
        series = ql.global_mean(ds)
        assert series.variable == name and len(series.values) == len(series.times) >= 1


def _spatial(rendered, var):
    return list(map(str, var.dims))[-2:]  # every file here has its grid last


def test_the_slice_drawn_is_xarrays(tmp_path):
    path = write_curvilinear(tmp_path / "curvi.nc")
    with ql.open_netcdf(path) as ds:
        rendered = ql.render_map(ds, "thetao", time=1, level=2)
        expected = ds["thetao"].isel(time=1, lev=2).values
        np.testing.assert_array_equal(rendered.data, expected)
        assert rendered.field.lat.shape == (20, 30)  # the file's own 2-D grid
        assert rendered.field.units == "degC"
        assert rendered.field.title == "sea_water_potential_temperature"
        assert rendered.field.time_label.startswith("1850-02-16")  # 360_day calendar
        assert rendered.field.level_label == "lev=25 m"
        # the missing value is left out, not drawn as a number
        first = ql.render_map(ds, "thetao")
        assert np.isnan(first.data[0, 0])
        assert first.limits[0] == pytest.approx(float(np.nanmin(ds["thetao"][0, 0].values)))


def test_a_latitude_gradient_comes_out_in_colour_order(tmp_path):
    path = write_gradient(tmp_path / "gradient.nc")
    with ql.open_netcdf(path) as ds:
        rendered = ql.render_map(ds, "tas", coastlines=False)
    image = imread(io.BytesIO(rendered.png))[:, :, :3]
    left, top, right, bottom = rendered.axes_box
    column = image[top + 3 : bottom - 3, (left + right) // 2]
    # each pixel's position in the colour map: the nearest of its 256 colours
    lut = colormaps[rendered.colormap](np.linspace(0, 1, 256))[:, :3]
    index = np.argmin(((column[:, None, :] - lut[None, :, :]) ** 2).sum(axis=2), axis=1)
    distance = np.min(((column[:, None, :] - lut[None, :, :]) ** 2).sum(axis=2), axis=1)
    assert distance.max() < 1e-3  # every pixel inside the map is a colour of the colour map
    # north (top of the image) is warm: the index falls from top to bottom, never rises
    assert index[0] > 240 and index[-1] < 15
    assert np.all(np.diff(index) <= 0)
    # and a meridian is one colour: the field does not vary with longitude
    row = image[(top + bottom) // 2, left + 3 : right - 3]
    assert np.ptp(row, axis=0).max() < 1e-6


def test_the_global_mean_is_cos_lat_weighted_in_the_files_calendar(tmp_path):
    path = write_gradient(tmp_path / "gradient.nc", calendar="360_day", times=3)
    with ql.open_netcdf(path) as ds:
        series = ql.global_mean(ds, "tas")
        weights = np.cos(np.deg2rad(ds["lat"]))
        expected = ds["tas"].weighted(weights).mean(("lat", "lon")).values
    assert series.values == pytest.approx(list(expected), rel=1e-6)
    # the symmetric latitude gradient averages out: 200 K, then 10 K more each step
    assert series.values == pytest.approx([200, 210, 220], abs=1e-3)
    assert series.calendar == "360_day" and series.weights == "cos(latitude)"
    # 30-day months (the standard calendar would give 2000-01-31 for day 30)
    assert series.times == ["2000-01-01", "2000-02-01", "2000-03-01"]
    png = ql.render_timeseries(series)
    assert png.startswith(b"\x89PNG")
    assert series.to_dict()["values"] == series.values


def test_errors_say_what_to_ask_instead(tmp_path):
    path = write_gradient(tmp_path / "gradient.nc", times=3)
    with ql.open_netcdf(path) as ds:
        with pytest.raises(QuicklookError, match=r"no variable 'pr'.*tas") as exc:
            ql.render_map(ds, "pr")
        assert exc.value.code == "unknown-variable"
        with pytest.raises(QuicklookError, match=r"time 3 is out of range.*0 to 2") as exc:
            ql.render_map(ds, "tas", time=3)
        assert exc.value.code == "time-out-of-range"
        with pytest.raises(QuicklookError, match="no level dimension") as exc:
            ql.render_map(ds, "tas", level=2)
        assert exc.value.code == "level-out-of-range"
        with pytest.raises(QuicklookError) as exc:
            ql.render_map(ds, "lat")
        assert exc.value.code == "no-map"
        assert ql.render_map(ds, "tas", time=-1).field.time == 2  # the last step
    (tmp_path / "text.nc").write_text("not netcdf\n")
    with pytest.raises(QuicklookError, match="not a netCDF file") as exc:
        ql.open_netcdf(tmp_path / "text.nc")
    assert exc.value.code == "not-netcdf"


def test_the_first_data_variable_skips_bounds(tmp_path):
    path = write_gradient(tmp_path / "gradient.nc")
    with xr.open_dataset(path) as opened:
        ds = opened.load()
    bnds = np.stack([ds["lat"].values - 1.25, ds["lat"].values + 1.25], axis=1)
    ds = ds.assign(lat_bnds=(("lat", "bnds"), bnds))
    ds["lat"].attrs["bounds"] = "lat_bnds"
    ds = ds[["lat_bnds", "tas"]]
    ds.to_netcdf(tmp_path / "bounds.nc")
    with ql.open_netcdf(tmp_path / "bounds.nc") as opened:
        assert ql.choose_variable(opened) == "tas"
        info = ql.describe_variable(opened, "tas")
    assert info["times"] == 3 and info["levels"] == 1 and info["grid"] == "regular"


def test_quicklook_returns_the_figure(tmp_path):
    from matplotlib.figure import Figure

    import ndnsci

    figure = ndnsci.quicklook(write_gradient(tmp_path / "g.nc"), time=1)
    assert isinstance(figure, Figure)
    assert "Near-Surface Air Temperature" in figure.axes[0].get_title()
    assert figure.axes[1].get_ylabel() == "K"


def test_coastlines_ship_with_a_package_and_are_drawn(tmp_path):
    lines = ql.coastlines()
    assert len(lines) > 100  # GSHHS crude: the continents and the larger islands
    points = np.concatenate(lines)
    assert points[:, 0].min() >= -180 and points[:, 0].max() <= 180
    assert points[:, 1].min() >= -90 and points[:, 1].max() <= 90
    path = write_gradient(tmp_path / "gradient.nc")
    with ql.open_netcdf(path) as ds:
        drawn, bare = ql.render_map(ds, "tas"), ql.render_map(ds, "tas", coastlines=False)
    np.testing.assert_array_equal(drawn.data, bare.data)

    def dark(png: bytes) -> int:
        left, top, right, bottom = drawn.axes_box
        inside = imread(io.BytesIO(png))[top + 2 : bottom - 2, left + 2 : right - 2, :3]
        return int((inside.sum(axis=2) < 0.3).sum())

    # black coast lines inside the map (viridis' darkest colour is well above 0.3 in sum)
    assert dark(bare.png) == 0 and dark(drawn.png) > 500


def _colour_index(rendered, pixels):
    """Each pixel's position in the colour map (0..255) and its distance from that colour."""
    lut = colormaps[rendered.colormap](np.linspace(0, 1, 256))[:, :3]
    squares = ((pixels[:, None, :] - lut[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(squares, axis=1), np.min(squares, axis=1)


def _middle_row(rendered, margin: float = 0.04):
    image = imread(io.BytesIO(rendered.png))[:, :, :3]
    left, top, right, bottom = rendered.axes_box
    inset = int((right - left) * margin) + 2
    return image[(top + bottom) // 2, left + inset : right - inset]


def write_seam(path: Path, grid: str) -> Path:
    """A field equal to its (continuous) longitude, on a grid that crosses the file's 0/360 seam.

    ``regional-1d``: lon 300..355 then 0..55 in the file's order; ``curvilinear``: a skewed 2-D
    grid from 300 E eastwards over Greenwich, stored modulo 360; ``global-curvilinear``: a whole
    turn starting at 73 E (an ocean model's tripolar grid), stored modulo 360.
    """
    if grid == "regional-1d":
        lon = np.concatenate([np.arange(300, 360, 5.0), np.arange(0, 60, 5.0)])
        lat = np.arange(-30, 31, 5.0)
        value = np.where(lon < 180, lon + 360, lon)[None, :] + 0 * lat[:, None]
        ds = xr.Dataset(
            {"tas": (("lat", "lon"), value, {"units": "K"})},
            coords={"lat": ("lat", lat, {"units": "degrees_north"}),
                    "lon": ("lon", lon, {"units": "degrees_east"})},
        )  # fmt: skip
    else:
        ny, nx = 20, 30 if grid == "curvilinear" else 72
        j, i = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
        if grid == "curvilinear":
            unwrapped, lat2 = 300 + i * 4.0 + j * 0.3, -30 + j * 3.0
        else:
            unwrapped, lat2 = 73 + i * 5.0, -60 + j * 6.0 + 0 * i
        # the field: the continuous longitude (regional) or the longitude in 0..360 (global)
        value = unwrapped if grid == "curvilinear" else unwrapped % 360
        ds = xr.Dataset(
            {"tos": (("j", "i"), value, {"units": "degC"})},
            coords={"latitude": (("j", "i"), lat2, {"units": "degrees_north"}),
                    "longitude": (("j", "i"), unwrapped % 360, {"units": "degrees_east"})},
        )  # fmt: skip
    ds.to_netcdf(path, engine="netcdf4")
    return path


@pytest.mark.parametrize("grid", ["regional-1d", "curvilinear", "global-curvilinear"])
def test_a_grid_across_the_seam_is_drawn_in_one_piece(tmp_path, grid):
    path = write_seam(tmp_path / f"{grid}.nc", grid)
    with ql.open_netcdf(path) as ds:
        rendered = ql.render_map(ds, coastlines=False)
        coasts = ql.render_map(ds)
        stored = np.asarray(ds[rendered.field.variable].values)
    # the data handed back is the file's, in the file's order; only the drawing moves
    np.testing.assert_array_equal(rendered.data, stored)
    index, distance = _colour_index(rendered, _middle_row(rendered))
    # one piece: every pixel along the middle row is the field's colour, none is the gap or
    # the smear of a cell drawn from one side of the map to the other
    assert distance.max() < 1e-3
    # and the field grows eastwards across the whole map: the colour index never falls
    assert np.all(np.diff(index) >= 0), index
    assert index[0] < 20 and index[-1] > 235
    xlim = coasts.figure.axes[0].get_xlim()
    if grid == "global-curvilinear":
        assert xlim == (0.0, 360.0)  # the file's own convention (0..360), filled to the edges
    else:
        assert 290 < xlim[0] < 300 and 410 < xlim[1] < 430  # over Greenwich, not 0..360

    def dark(png: bytes) -> int:
        left, top, right, bottom = coasts.axes_box
        inside = imread(io.BytesIO(png))[top + 2 : bottom - 2, left + 2 : right - 2, :3]
        return int((inside.sum(axis=2) < 0.3).sum())

    # the coasts come along: Africa and South America are in every one of these windows
    assert dark(rendered.png) == 0 and dark(coasts.png) > 200


def test_continuous_longitude_keeps_grids_without_a_seam():
    regular = np.arange(0, 360, 2.5)
    np.testing.assert_array_equal(ql.continuous_longitude(regular), regular)
    centred = np.arange(-180, 180, 2.5)
    np.testing.assert_array_equal(ql.continuous_longitude(centred), centred)
    descending = regular[::-1]
    np.testing.assert_array_equal(ql.continuous_longitude(descending), descending)
    missing = np.array([[350.0, np.nan], [355.0, 5.0]])
    np.testing.assert_array_equal(ql.continuous_longitude(missing), missing)
    # rows of a 2-D grid that start a turn apart are brought together
    rows = np.array([[350.0, 355.0, 0.0], [-5.0, 0.0, 5.0]])
    np.testing.assert_allclose(ql.continuous_longitude(rows), [[350, 355, 360], [355, 360, 365]])
