"""Quick-look rendering: how long a map and a global mean take, from a local file (no NDN).

Prints one figure per line (the best of --repeat rounds): opening the file, the map of a
real CMIP5 subset (5x5, tests/data/netcdf), the map of a written 1-degree global field
(180x360, 12 steps) with and without coastlines, and its 12-step global mean (JSON and PNG).
The gateway adds the file's fetch over NDN (once per file: local copies by SHA-256) and serves
repeats from its image cache.

    .venv/bin/python bench/quicklook.py [--repeat N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xarray as xr

from ndnsci.sdk import quicklook as ql

REAL = next(
    (Path(__file__).parents[1] / "tests" / "data" / "netcdf" / "cmip5").rglob("tasmax_*.nc")
)


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def global_field(path: Path) -> Path:
    lat = np.arange(-89.5, 90, 1.0)
    lon = np.arange(0.5, 360, 1.0)
    data = (
        250
        + 30 * np.cos(np.deg2rad(lat))[None, :, None]
        + np.random.default_rng(1).normal(size=(12, lat.size, lon.size))
    )
    xr.Dataset(
        {"tas": (("time", "lat", "lon"), data.astype("float32"), {"units": "K"})},
        coords={
            "time": ("time", np.arange(12) * 30.0, {"units": "days since 2000-01-01",
                                                    "calendar": "360_day"}),
            "lat": ("lat", lat, {"units": "degrees_north"}),
            "lon": ("lon", lon, {"units": "degrees_east"}),
        },
    ).to_netcdf(path)  # fmt: skip
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ql.coastlines()  # read once per process
    with tempfile.TemporaryDirectory() as tmp:
        big = global_field(Path(tmp) / "global.nc")

        def real_map() -> None:
            with ql.open_netcdf(REAL) as ds:
                ql.render_map(ds)

        def big_map(coast: bool) -> None:
            with ql.open_netcdf(big) as ds:
                ql.render_map(ds, "tas", time=5, coastlines=coast)

        def big_mean(png: bool) -> None:
            with ql.open_netcdf(big) as ds:
                series = ql.global_mean(ds, "tas")
                if png:
                    ql.render_timeseries(series)

        figures = [
            ("open (5x5 CMIP5 subset)", lambda: ql.open_netcdf(REAL).close()),
            ("map, 5x5 CMIP5 subset, with coastlines", real_map),
            ("map, 180x360, with coastlines", lambda: big_map(True)),
            ("map, 180x360, no coastlines", lambda: big_map(False)),
            ("global mean, 12x180x360 (JSON)", lambda: big_mean(False)),
            ("global mean, 12x180x360 (PNG)", lambda: big_mean(True)),
        ]
        for label, func in figures:
            print(f"quicklook {label}: {best(func, args.repeat) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
