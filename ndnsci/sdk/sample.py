"""A small sample archive (``ndnsci sample DIR``): CMIP5 netCDF files and CMS-named files.

CMIP5: three models, two experiments, three atmosphere variables and an ocean one, monthly, on
a 15-degree grid, written as CMOR 2 would: the DRS directory layout and file names, the CMIP5
global attributes, a CF time axis with bounds in the model's own calendar (HadCM3's 360-day
year, the others' 365-day one), and fields that look like climate (a pole-to-equator gradient,
seasons, a warming trend). Historical runs come in two time chunks, as archives split them.

CMS: files named by real-looking logical file names (``store/mc/...``, ``store/data/...``)
holding random bytes behind the ROOT magic number; one is larger, for transfer and caching
demonstrations.

Everything is deterministic (fixed seeds), so a regenerated archive has the same checksums.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ndnsci.errors import missing

NLAT, NLON = 12, 24  # 15 degrees


@dataclass(frozen=True)
class Model:
    institute: str
    model: str
    calendar: str
    version: str
    institution: str
    offset: float  # each model's own bias, K


MODELS = (
    Model("MOHC", "HadCM3", "360_day", "v20110823", "Met Office Hadley Centre, UK", -0.6),
    Model("CCCma", "CanESM2", "365_day", "v20120410", "Canadian Centre for Climate Modelling "
          "and Analysis", 0.4),
    Model("MIROC", "MIROC5", "365_day", "v20120710", "AORI, NIES and JAMSTEC, Japan", 0.1),
)  # fmt: skip

# experiment -> (long name, parent, time chunks as (first year, last year))
EXPERIMENTS = {
    "historical": ("historical", "piControl", ((1990, 1999), (2000, 2005))),
    "rcp45": ("RCP4.5", "historical", ((2006, 2015),)),
}


@dataclass(frozen=True)
class Variable:
    name: str
    table: str
    realm: str
    units: str
    standard_name: str
    long_name: str


VARIABLES = (
    Variable("tas", "Amon", "atmos", "K", "air_temperature", "Near-Surface Air Temperature"),
    Variable("pr", "Amon", "atmos", "kg m-2 s-1", "precipitation_flux", "Precipitation"),
    Variable("psl", "Amon", "atmos", "Pa", "air_pressure_at_sea_level", "Sea Level Pressure"),
    Variable("tos", "Omon", "ocean", "K", "sea_surface_temperature", "Sea Surface Temperature"),
)

CMS_FILES = (
    "store/mc/RunIISummer20UL18NanoAODv9/DYJetsToLL_M-50_TuneCP5_13TeV-amcatnloFXFX-pythia8/"
    "NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v2/2520000/",
    "store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/NANOAODSIM/"
    "106X_upgrade2018_realistic_v16_L1v1-v1/130000/",
    "store/data/Run2018A/DoubleMuon/NANOAOD/UL2018_MiniAODv2_NanoAODv9-v1/2540000/",
    "store/data/Run2016H/SingleMuon/MINIAOD/17Jul2018-v1/00000/",
)
CMS_SIZES_MIB = (1, 2, 2, 3)


@dataclass(frozen=True)
class Sample:
    """What :func:`make_sample` wrote."""

    root: Path
    cmip5: list[Path]
    cms: list[Path]

    @property
    def files(self) -> list[Path]:
        return [*self.cmip5, *self.cms]

    @property
    def size(self) -> int:
        return sum(p.stat().st_size for p in self.files)


def make_sample(dest: str | Path, *, big_mib: int = 32) -> Sample:
    """Write the sample archive into ``dest`` (created if needed); returns what was written.

    The CMIP5 files go to ``dest/cmip5/output1/...`` (the DRS below the project directory), the
    CMS ones to ``dest/store/...``; one CMS file is ``big_mib`` MiB (0: none). Writing it again
    overwrites the same files with the same bytes.

    Example::

        >>> sample = ndnsci.make_sample("/tmp/sample")
        >>> len(sample.cmip5), len(sample.cms)
        (33, 5)

    Raises:
        MissingDependencyError: netCDF4 is not installed (``pip install 'ndnsci[netcdf]'``).
        OSError: ``dest`` cannot be written.
    """
    try:
        import netCDF4
        import numpy
    except ImportError as exc:
        raise missing("netCDF4", "netcdf", "the sample archive") from exc
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    cmip5 = [
        _write_cmip5(
            netCDF4,
            numpy,
            root / drs_path(model, experiment, variable, first, last),
            _Run(model, experiment, first, last),
            variable,
        )
        for model in MODELS
        for experiment, (_, _, chunks) in EXPERIMENTS.items()
        for first, last in chunks
        for variable in _variables(model)
    ]
    cms = _write_cms(root, big_mib)
    return Sample(root, cmip5, cms)


def _variables(model: Model) -> tuple[Variable, ...]:
    # the ocean variable for two models only: facet counts that differ are more instructive
    return VARIABLES if model.model != "MIROC5" else VARIABLES[:3]


# --- CMIP5 ---------------------------------------------------------------------------------------


def drs_path(model: Model, experiment: str, variable: Variable, first: int, last: int) -> str:
    """The DRS path of one file below the archive root."""
    filename = (
        f"{variable.name}_{variable.table}_{model.model}_{experiment}_r1i1p1_{first}01-{last}12.nc"
    )
    return "/".join(
        [
            "cmip5", "output1", model.institute, model.model, experiment, "mon", variable.realm,
            variable.table, "r1i1p1", model.version, variable.name, filename,
        ]
    )  # fmt: skip


@dataclass(frozen=True)
class _Run:
    """One time chunk of one model's experiment."""

    model: Model
    experiment: str
    first: int
    last: int


def _write_cmip5(nc: Any, np: Any, path: Path, run: _Run, variable: Variable) -> Path:
    model, experiment, first, last = run.model, run.experiment, run.first, run.last
    path.parent.mkdir(parents=True, exist_ok=True)
    times, bounds = _time_axis(nc, model.calendar, first, last)
    seed = f"{model.model}/{experiment}/{variable.name}/{first}"
    with nc.Dataset(path, "w", format="NETCDF4_CLASSIC") as ds:
        ds.setncatts(_global_attributes(model, experiment, variable, seed))
        _write_axes(ds, np, (times, bounds), model.calendar, variable)
        data = ds.createVariable(
            variable.name, "f4", ("time", "lat", "lon"), zlib=True, fill_value=np.float32(1e20)
        )
        data.setncatts(
            {
                "standard_name": variable.standard_name,
                "long_name": variable.long_name,
                "units": variable.units,
                "cell_methods": "time: mean",
                "cell_measures": "area: areacella"
                if variable.realm == "atmos"
                else "area: areacello",
                "missing_value": np.float32(1e20),
            }
        )
        if variable.name == "tas":
            data.coordinates = "height"
        data[:] = _field(np, variable.name, run, len(times), random.Random(seed))
    return path


def _time_axis(nc: Any, calendar: str, first: int, last: int) -> tuple[list[float], list[Any]]:
    """Mid-month times and month bounds, in days since 1850-01-01 of ``calendar``."""
    import cftime

    units = "days since 1850-01-01 00:00:00"
    starts = [
        cftime.datetime(year, month, 1, calendar=calendar)
        for year in range(first, last + 1)
        for month in range(1, 13)
    ]
    starts.append(cftime.datetime(last + 1, 1, 1, calendar=calendar))
    edges = [float(nc.date2num(d, units, calendar=calendar)) for d in starts]
    bounds = [(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]
    return [(a + b) / 2 for a, b in bounds], bounds


def _write_axes(
    ds: Any, np: Any, time_axis: tuple[list[float], list[Any]], calendar: str, variable: Variable
) -> None:
    times, bounds = time_axis
    ds.createDimension("time", None)
    ds.createDimension("lat", NLAT)
    ds.createDimension("lon", NLON)
    ds.createDimension("bnds", 2)
    time = ds.createVariable("time", "f8", ("time",))
    time.setncatts(
        {
            "bounds": "time_bnds",
            "units": "days since 1850-01-01 00:00:00",
            "calendar": calendar,
            "axis": "T",
            "long_name": "time",
            "standard_name": "time",
        }
    )
    time[:] = times
    ds.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = bounds
    lat_edges = np.linspace(-90, 90, NLAT + 1)
    lon_edges = np.linspace(0, 360, NLON + 1)
    for name, edges, units, axis, standard in (
        ("lat", lat_edges, "degrees_north", "Y", "latitude"),
        ("lon", lon_edges, "degrees_east", "X", "longitude"),
    ):
        coord = ds.createVariable(name, "f8", (name,))
        coord.setncatts(
            {
                "bounds": f"{name}_bnds",
                "units": units,
                "axis": axis,
                "long_name": standard,
                "standard_name": standard,
            }
        )
        coord[:] = (edges[:-1] + edges[1:]) / 2
        ds.createVariable(f"{name}_bnds", "f8", (name, "bnds"))[:] = np.stack(
            [edges[:-1], edges[1:]], axis=1
        )
    if variable.name == "tas":
        height = ds.createVariable("height", "f8", ())
        height.setncatts(
            {"units": "m", "axis": "Z", "positive": "up", "long_name": "height",
             "standard_name": "height"}
        )  # fmt: skip
        height.assignValue(2.0)


def _field(np: Any, name: str, run: _Run, steps: int, rng: random.Random) -> Any:
    """A plausible monthly field: gradient + seasons + trend + noise."""
    model = run.model
    lat = np.deg2rad(np.linspace(-90 + 7.5, 90 - 7.5, NLAT))[None, :, None]
    lon = np.deg2rad(np.linspace(7.5, 360 - 7.5, NLON))[None, None, :]
    months = np.arange(steps)[:, None, None]
    season = np.cos(2 * np.pi * (months % 12 - 0.5) / 12) * np.sin(lat)
    years = run.first + months / 12 - 1990
    # seeded from the file's identity: a regenerated archive has the same bytes
    noise = np.random.default_rng(rng.getrandbits(64)).standard_normal((steps, NLAT, NLON))
    if name in ("tas", "tos"):
        base = 300 - 45 * np.sin(lat) ** 2 + 12 * season + 0.03 * years + model.offset
        values = base + 0.1 * np.cos(3 * lon) + 0.7 * noise
        if name == "tos":
            values = np.maximum(values, 271.35)  # sea water freezes
    elif name == "pr":
        # each model puts its rain belt a little elsewhere, and is a little wetter or drier
        wet = 1 + np.cos(3 * (lat - 0.04 * model.offset)) + 0.3 * season
        values = 3e-5 * (1 + 0.2 * model.offset) * np.clip(wet, 0.05, None) * np.exp(0.2 * noise)
    else:
        values = 101325 + 900 * np.cos(2 * lat) + 300 * season + 150 * noise
    return values.astype("f4")


def _global_attributes(
    model: Model, experiment: str, variable: Variable, seed: str
) -> dict[str, Any]:
    long_name, parent, _ = EXPERIMENTS[experiment]
    return {
        "institution": model.institution,
        "institute_id": model.institute,
        "experiment_id": experiment,
        "source": model.model,
        "model_id": model.model,
        "forcing": "GHG,SA,Oz,Sl,Vl,LU" if experiment == "historical" else "GHG,SA,Oz,LU",
        "parent_experiment_id": parent,
        "parent_experiment_rip": "r1i1p1",
        "branch_time": 0.0,
        "contact": "ndnsci sample archive (synthetic data)",
        "history": "Synthetic data written by `ndnsci sample` in the layout CMOR 2 writes.",
        "comment": "Not model output: a small stand-in for demonstrations and tests.",
        "references": "https://pcmdi.llnl.gov/mips/cmip5/",
        "initialization_method": np_int(1),
        "physics_version": np_int(1),
        "tracking_id": str(uuid.UUID(int=random.Random(seed).getrandbits(128), version=4)),
        "product": "output",
        "experiment": long_name,
        "frequency": "mon",
        "creation_date": "2011-08-23T12:00:00Z",
        "Conventions": "CF-1.4",
        "project_id": "CMIP5",
        "table_id": f"Table {variable.table} (27 April 2011) 9c851218e3842df9a62ef38b1e2575bb",
        "title": f"{model.model} model output prepared for CMIP5 {long_name}",
        "parent_experiment": parent,
        "modeling_realm": variable.realm,
        "realization": np_int(1),
        "cmor_version": "2.7.1",
    }


def np_int(value: int) -> Any:
    import numpy

    return numpy.int32(value)


# --- CMS -----------------------------------------------------------------------------------------


def _write_cms(root: Path, big_mib: int) -> list[Path]:
    sizes = [*CMS_SIZES_MIB, *([big_mib] if big_mib > 0 else [])]
    directories = [*CMS_FILES, *([CMS_FILES[0]] if big_mib > 0 else [])]
    paths = []
    for number, (directory, mib) in enumerate(zip(directories, sizes, strict=True)):
        rng = random.Random(f"cms/{number}")
        guid = str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()
        path = root / directory / f"{guid}.root"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"root" + rng.randbytes(mib * (1 << 20) - 4))
        paths.append(path)
    return paths
