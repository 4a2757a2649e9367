"""Header extraction speed on the real CMIP5 sample archive (tests/data/netcdf/cmip5).

Prints one figure per line: median and 95th percentile milliseconds per file of
``netcdf.extract()`` (attributes, dimensions, variables, time coverage from bounds, lat/lon box),
of ``netcdf.read_global_attributes()``, and of ``xarray.open_dataset(decode_times=True)`` reading
less (global attributes, dimensions, first and last time step), then the xarray/ndnsci ratio.
Target (issue): extract() median under 5 ms per file.

The three are measured in the same run, interleaved file by file in a rotating order, after one
warm-up pass, so the page cache and CPU frequency treat them alike.

    .venv/bin/python bench/extract.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import xarray

from ndnsci_translators import netcdf

SAMPLE = Path(__file__).parents[1] / "tests" / "data" / "netcdf" / "cmip5"


def with_xarray(path: Path) -> Any:
    with xarray.open_dataset(path, decode_times=True) as ds:
        times = ds["time"].values
        return dict(ds.attrs), dict(ds.sizes), times[0], times[-1]


CONTENDERS: dict[str, Callable[[Path], Any]] = {
    "extract()": netcdf.extract,
    "read_global_attributes()": netcdf.read_global_attributes,
    "xarray open_dataset + attrs, dims, time first/last": with_xarray,
}


def measure(files: list[Path], rounds: int) -> dict[str, list[float]]:
    names = list(CONTENDERS)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        for path in files:
            for name in names[round_ % 3 :] + names[: round_ % 3]:
                start = time.perf_counter_ns()
                CONTENDERS[name](path)
                samples[name].append((time.perf_counter_ns() - start) / 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30, help="passes over the archive")
    args = parser.parse_args()
    files = sorted(SAMPLE.rglob("*.nc"))
    # xarray warns about non-standard calendars on every open: noise, not a result
    warnings.simplefilter("ignore")
    measure(files, 1)  # warm-up: imports, page cache, first-open costs of each library
    samples = measure(files, args.rounds)

    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"{name} median: {medians[name]:.2f} ms/file ({len(files)} real CMIP5 files)")
        print(f"{name} p95: {p95:.2f} ms/file")
    xarray_name = list(CONTENDERS)[2]
    ratio = medians[xarray_name] / medians["extract()"]
    print(f"xarray/extract() median ratio: {ratio:.1f}x")
    ratio = medians[xarray_name] / medians["read_global_attributes()"]
    print(f"xarray/read_global_attributes() median ratio: {ratio:.1f}x")


if __name__ == "__main__":
    main()
