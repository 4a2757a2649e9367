"""Header-only netCDF extraction: real CMIP5 files, the edge files, and files made here for each
CF calendar and each way a file can be unreadable."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import netCDF4
import numpy as np
import pytest

from ndnsci_translators import netcdf
from ndnsci_translators.netcdf import MetadataError

DATA = Path(__file__).parents[1] / "data" / "netcdf"
CMIP5 = DATA / "cmip5"
EDGE = DATA / "edge"
SAMPLE = sorted(CMIP5.rglob("*.nc"))
DRS_NAMED = [p for p in SAMPLE if p.name != "odd_file.nc"]


def cmip5(*parts: str) -> Path:
    matches = [p for p in SAMPLE if all(part in p.parts or part == p.name for part in parts)]
    assert len(matches) == 1, matches
    return matches[0]


HADGEM_CO3 = cmip5("HadGEM2-ES", "co3_Oyr_HadGEM2-ES_esmControl_r1i1p1_2078-2100.nc")
CESM_CO3 = cmip5("CESM1-BGC", "co3_Oyr_CESM1-BGC_esmControl_r1i1p1_0701-0800.nc")
MPI_CO3 = cmip5("MPI-ESM-LR", "co3_Oyr_MPI-ESM-LR_esmControl_r1i1p1_2800-2849.nc")
CNRM_HFLS = cmip5("r7i1p1", "hfls_Amon_CNRM-CM5_historical_r7i1p1_195001-200512.nc")
GISS_HFLS = cmip5("hfls_Amon_GISS-E2-R_historical_r1i1p124_200101-200512.nc")
ODD = cmip5("odd_file.nc")


def error_of(path: str | os.PathLike[str]) -> MetadataError:
    with pytest.raises(MetadataError) as info:
        netcdf.extract(path)
    return info.value


# ------------------------------------------------------------------------- module contract


def test_importing_the_module_loads_no_heavy_library():
    code = (
        "import sys; from ndnsci_translators import netcdf; "
        "print(' '.join(m for m in ('netCDF4', 'cftime', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == ""


# ------------------------------------------------------------------- the real CMIP5 archive


def test_the_sample_archive_has_33_files():
    assert len(SAMPLE) == 33


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.name)
def test_every_sample_file_extracts_with_time_space_and_attributes(path):
    meta = netcdf.extract(path)
    assert meta.format == "NETCDF4"
    assert meta.size == path.stat().st_size
    assert meta.global_attributes["project_id"] == "CMIP5"
    assert meta.time is not None and meta.time.bounds == "time_bnds"
    assert meta.time.start is not None and meta.time.start < meta.time.end
    assert meta.spatial is not None and meta.spatial.lat_min < meta.spatial.lat_max
    variable = meta.variable(path.name.split("_")[0]) if path in DRS_NAMED else None
    assert path not in DRS_NAMED or (variable is not None and variable.units)
    json.dumps(meta.to_dict(), allow_nan=False)


@pytest.mark.parametrize("path", DRS_NAMED, ids=lambda p: p.name)
def test_first_time_step_falls_in_the_period_the_file_name_gives(path):
    period = path.stem.rsplit("_", 1)[1].split("-")[0]  # 185001 or 2078
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.first is not None
    digits = meta.time.first[:7].replace("-", "")
    assert digits[: len(period)] == period


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.name)
def test_attributes_and_derived_facets_agree_with_the_drs_directories(path):
    parts = path.relative_to(CMIP5).parts
    _, institute, model, experiment, frequency, realm, _, ensemble = parts[:8]
    attributes = netcdf.read_global_attributes(path)
    assert (attributes["institute_id"], attributes["model_id"]) == (institute, model)
    assert (attributes["experiment_id"], attributes["frequency"]) == (experiment, frequency)
    assert attributes["modeling_realm"] == realm
    # raw attributes are kept as written: the translator maps 'output' to the 'output1' directory
    assert attributes["product"] == "output"
    assert attributes["table_id"].startswith("Table ")
    assert "ensemble" not in attributes and "member_id" not in attributes
    derived = netcdf.derive_facets(attributes)
    assert derived["ensemble"] == ensemble
    table = path.name.split("_")[1] if path in DRS_NAMED else "Omon"
    assert derived["table"] == table


def test_hadgem2_360_day_years_start_in_december():
    meta = netcdf.extract(HADGEM_CO3)
    assert meta.time is not None
    assert meta.time.to_dict() == {
        "variable": "time",
        "units": "days since 1859-12-01",
        "calendar": "360_day",
        "length": 2,
        "bounds": "time_bnds",
        "start": "2077-12-01T00:00:00",  # 78480 days = 218 years of 360 days
        "end": "2079-12-01T00:00:00",
        "first": "2078-06-01T00:00:00",  # 78660 days = 218.5 years
        "last": "2079-06-01T00:00:00",
        "raw_start": 78480.0,
        "raw_end": 79200.0,
    }
    assert [(d.name, d.size) for d in meta.dimensions] == [
        ("time", 2),
        ("bnds", 2),
        ("lev", 40),
        ("lat", 5),
        ("lon", 5),
    ]
    co3 = meta.variable("co3")
    assert co3 is not None
    assert (co3.dtype, co3.units, co3.dimensions) == (
        "float32",
        "mol m-3",
        ("time", "lev", "lat", "lon"),
    )
    assert co3.attributes["_FillValue"] == 1e20  # float32 digits kept, not 1.0000000200408773e+20
    assert meta.spatial is not None
    box = meta.spatial.to_dict()
    assert box["source"] == ["lat_bnds", "lon_bnds"]
    assert (box["lat_min"], box["lat_max"], box["lon_min"], box["lon_max"]) == (
        -90.5,
        -85.5,
        -0.5,
        4.5,
    )
    # HadGEM's polar cell bound really is -90.5: reported as written, with a warning
    assert [w.code for w in meta.warnings] == ["latitude-out-of-range"]
    assert meta.derived == {"ensemble": "r1i1p1", "table": "Oyr"}


def test_cesm_noleap_axis_counted_from_year_zero():
    meta = netcdf.extract(CESM_CO3)
    assert meta.time is not None
    assert (meta.time.units, meta.time.calendar) == ("days since 0000-01-01 00:00:00", "noleap")
    assert (meta.time.start, meta.time.end) == ("0701-01-01T00:00:00", "0703-01-01T00:00:00")
    assert meta.time.first == "0701-07-02T12:00:00"  # 256047.5 days = 701.5 years of 365 days


def test_mpi_curvilinear_grid_box_from_cell_vertices_in_0_360_longitudes():
    meta = netcdf.extract(MPI_CO3)
    assert meta.time is not None and meta.time.calendar == "proleptic_gregorian"
    assert meta.time.first == "2800-07-03T00:00:00"
    assert meta.spatial == netcdf.SpatialBounds(
        lat_min=76.024254,
        lat_max=76.88111,
        lon_min=309.42075,
        lon_max=313.08163,
        west=-50.57925,
        east=-46.91837,
        source=("lat_vertices", "lon_vertices"),
        approximate=False,
    )
    lat = meta.variable("lat")
    assert lat is not None and lat.dimensions == ("j", "i")


def test_cnrm_gregorian_month_and_giss_physics_version_124():
    meta = netcdf.extract(CNRM_HFLS)
    assert meta.time is not None
    assert (meta.time.calendar, meta.time.units) == ("gregorian", "days since 1850-1-1")
    assert (meta.time.start, meta.time.end) == ("1950-01-01T00:00:00", "1950-03-01T00:00:00")
    assert meta.time.first == "1950-01-16T12:00:00"
    hfls = meta.variable("hfls")
    assert hfls is not None
    assert (hfls.units, hfls.standard_name) == ("W m-2", "surface_upward_latent_heat_flux")
    assert netcdf.derive_facets(netcdf.read_global_attributes(GISS_HFLS))["ensemble"] == (
        "r1i1p124"
    )


def test_read_global_attributes_returns_plain_json_values():
    attributes = netcdf.read_global_attributes(HADGEM_CO3)
    assert attributes["table_id"] == "Table Oyr (26 July 2011) 4a4fa20f3a3627af555d7528b7e23347"
    assert attributes["realization"] == 1 and type(attributes["realization"]) is int
    assert attributes["branch_time"] == 0.0 and type(attributes["branch_time"]) is float
    assert attributes == netcdf.extract(HADGEM_CO3).global_attributes
    json.dumps(attributes, allow_nan=False)


def test_read_global_attributes_accepts_a_path_object_and_a_string():
    assert netcdf.read_global_attributes(ODD) == netcdf.read_global_attributes(str(ODD))


def test_checksum_is_the_sha256_of_the_whole_file():
    expected = hashlib.sha256(HADGEM_CO3.read_bytes()).hexdigest()
    assert netcdf.extract(HADGEM_CO3, checksum=True).sha256 == expected
    assert netcdf.extract(HADGEM_CO3).sha256 is None
    assert netcdf.sha256_file(HADGEM_CO3, chunk_size=4096) == expected


# --------------------------------------------------------------------- naming helpers


def test_mip_table_from_cmip5_sentence_and_cmip6_name():
    assert netcdf.mip_table("Table Omon (26 July 2011) 1f4ad3a5e2a8e3d4c6b8a1f2e3d4c5b6") == "Omon"
    assert netcdf.mip_table("Omon") == "Omon"
    assert netcdf.mip_table("no table here") is None


def test_cmip5_ensemble_needs_all_three_whole_numbers():
    rip = {"realization": 2, "initialization_method": "1", "physics_version": 3.0}
    assert netcdf.cmip5_ensemble(rip) == "r2i1p3"
    assert netcdf.cmip5_ensemble({**rip, "physics_version": None}) is None
    assert netcdf.cmip5_ensemble({"realization": 1}) is None
    assert netcdf.cmip5_ensemble({**rip, "realization": 1.5}) is None
    assert netcdf.cmip5_ensemble({**rip, "realization": [1, 2]}) is None


def test_cmip6_member_id_from_variant_label():
    assert netcdf.cmip6_member_id({"variant_label": "r1i1p1f1"}) == "r1i1p1f1"
    assert netcdf.cmip6_member_id({"variant_label": "r1i1p1f1", "sub_experiment_id": "none"}) == (
        "r1i1p1f1"
    )
    assert (
        netcdf.cmip6_member_id({"variant_label": "r1i1p1f1", "sub_experiment_id": "s1960"})
        == "s1960-r1i1p1f1"
    )
    assert netcdf.cmip6_member_id({"member_id": "r2i1p1f2", "variant_label": "x"}) == "r2i1p1f2"
    assert netcdf.cmip6_member_id({}) is None
    assert netcdf.derive_facets({"variant_label": "r1i1p1f1", "table_id": "Amon"}) == {
        "table": "Amon",
        "member_id": "r1i1p1f1",
    }


def test_attribute_lookup_falls_back_to_any_case():
    attributes = {"TITLE": "GOLD", "title2": "x"}
    assert netcdf.attribute(attributes, "title") == "GOLD"
    assert netcdf.attribute(attributes, "TITLE") == "GOLD"
    assert netcdf.attribute(attributes, "missing") is None


# ----------------------------------------------------------------------- the edge files


EDGE_OUTCOMES = {
    # file -> error code, or "ok" (readable; the tests below check what is read)
    "truncated_fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc": "truncated",
    "not_netcdf_example.grib": "grib",
    "gzipped_example_1.nc.gz": "gzip-compressed",
    "no_attributes_ubyte.nc": "ok",
    "uppercase_attrs_test_gold.nc": "ok",
    "cfchecker_bad_units.nc": "ok",
    "cfchecker_bad_data_type.nc": "ok",
    "cfchecker_bad_missing_data.nc": "ok",
    "cfchecker_bad-instance.nc": "ok",
    "esmvalcore_tas_nondrs_name.nc": "ok",
    "esmvalcore_areacella_nondrs_name.nc": "ok",
}


def test_every_edge_file_has_a_decided_outcome():
    assert sorted(p.name for p in EDGE.iterdir()) == sorted(EDGE_OUTCOMES)


@pytest.mark.parametrize(("name", "outcome"), EDGE_OUTCOMES.items())
def test_edge_file_outcome(name, outcome):
    try:
        meta = netcdf.extract(EDGE / name)
    except MetadataError as exc:
        assert exc.code == outcome
        assert exc.message and exc.path == str(EDGE / name)
        return
    assert outcome == "ok"
    json.dumps(meta.to_dict(), allow_nan=False)


def test_edge_truncated_cmip5_file_is_reported_truncated():
    error = error_of(EDGE / "truncated_fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc")
    assert error.code == "truncated"
    assert "5000 bytes but its header declares 27187" in error.message
    with pytest.raises(MetadataError, match="truncated"):
        netcdf.read_global_attributes(
            EDGE / "truncated_fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc"
        )


def test_edge_grib_file():
    error = error_of(EDGE / "not_netcdf_example.grib")
    assert (error.code, error.to_dict()["code"]) == ("grib", "grib")
    assert "GRIB" in error.message and str(EDGE / "not_netcdf_example.grib") in str(error)


def test_edge_gzipped_netcdf():
    error = error_of(EDGE / "gzipped_example_1.nc.gz")
    assert error.code == "gzip-compressed" and "gunzip" in error.message


def test_edge_file_without_attributes():
    meta = netcdf.extract(EDGE / "no_attributes_ubyte.nc")
    assert meta.format == "NETCDF3_CLASSIC"
    assert meta.global_attributes == {} and meta.derived == {}
    assert [(v.name, v.dtype, v.dimensions) for v in meta.variables] == [
        ("ub", "int8", ("d",)),
        ("sb", "int8", ("d",)),
        ("sb2", "int8", ("d",)),
    ]
    assert meta.variables[0].attributes == {"_Unsigned": "true"}
    assert (meta.time, meta.spatial, meta.warnings) == (None, None, [])


def test_edge_upper_case_attribute_names_are_kept_as_written():
    meta = netcdf.extract(EDGE / "uppercase_attrs_test_gold.nc")
    attributes = meta.global_attributes
    assert attributes["TITLE"] == "GOLD Level 1C spectral radiance image in Rayleighs"
    assert "title" not in attributes
    assert netcdf.attribute(attributes, "title") == attributes["TITLE"]
    assert attributes["SC_POS"] == [-41795.168, 5524.458, 83.83979]  # float32 array
    assert attributes["OBS_ID"] == 442
    radiance = meta.variable("RADIANCE")
    assert radiance is not None
    # units from UNITS, long name from LONG_NAME; a NaN fill value becomes a JSON string
    assert (radiance.units, radiance.long_name) == ("Rayleighs/nm", "Radiance")
    assert radiance.attributes["_FILLVALUE"] == "NaN"
    json.dumps(meta.to_dict(), allow_nan=False)


def test_edge_cf_bad_units_time_in_seconds_without_a_reference_date():
    meta = netcdf.extract(EDGE / "cfchecker_bad_units.nc")
    assert meta.time is not None
    assert (meta.time.variable, meta.time.units, meta.time.start) == ("time", "s", None)
    codes = [w.code for w in meta.warnings]
    assert codes == ["time-missing-values", "time-units-invalid", "spatial-missing-values"]
    lat = meta.variable("lat")
    assert lat is not None and (lat.units, lat.shape) == ("degrees_E", ())


def test_edge_cf_bad_data_type_bounds_pointing_at_a_data_variable_are_ignored():
    meta = netcdf.extract(EDGE / "cfchecker_bad_data_type.nc")
    assert meta.global_attributes == {"featureType": "pointzz"}
    bounds = [w for w in meta.warnings if w.code == "bounds-invalid"]
    assert len(bounds) == 1 and "'salinity'" in bounds[0].message
    temp = meta.variable("temp")
    assert temp is not None
    assert temp.attributes["add_offset"] == "c"  # a string offset: reported, never applied
    assert temp.dimensions == ("time", "time")


def test_edge_cf_bad_missing_data_keeps_the_one_raw_time_value():
    meta = netcdf.extract(EDGE / "cfchecker_bad_missing_data.nc")
    assert meta.time is not None
    assert (meta.time.raw_start, meta.time.raw_end, meta.time.start) == (1.0, 1.0, None)
    assert [w.code for w in meta.warnings][:2] == ["time-missing-values", "time-units-invalid"]
    assert meta.dimensions[0] == netcdf.DimensionInfo("time", 3, True)
    assert meta.variable("geo_region") is not None
    assert meta.variable("geo_region").dtype == "char"  # type: ignore[union-attr]


def test_edge_cf_bad_instance_station_file():
    meta = netcdf.extract(EDGE / "cfchecker_bad-instance.nc")
    assert meta.time is not None and meta.time.units == "seconds since 1970-01-01"
    assert meta.time.start is None  # the time values were never written (all fill values)
    station = meta.variable("station_name")
    assert station is not None
    assert (station.dtype, station.attributes) == ("char", {"cf_role": "timeseries_id"})


def test_edge_real_cmip5_data_under_a_non_drs_name():
    meta = netcdf.extract(EDGE / "esmvalcore_tas_nondrs_name.nc")
    assert meta.format == "NETCDF3_CLASSIC"
    assert meta.time is not None
    assert (meta.time.start, meta.time.end) == ("1850-01-01T00:00:00", "1850-03-01T00:00:00")
    assert meta.derived == {"ensemble": "r1i1p1", "table": "Amon"}
    fx = netcdf.extract(EDGE / "esmvalcore_areacella_nondrs_name.nc")
    assert fx.time is None
    assert fx.derived == {"ensemble": "r0i0p0", "table": "fx"}
    assert fx.spatial is not None
    assert (fx.spatial.lat_min, fx.spatial.lon_min, fx.spatial.lon_max) == (
        -90.0,
        -1.40625,
        4.21875,
    )


# --------------------------------------------------------------- files that are not netCDF


def test_missing_file(tmp_path):
    error = error_of(tmp_path / "absent.nc")
    assert error.code == "not-found"


def test_directory(tmp_path):
    error = error_of(tmp_path)
    assert error.code == "not-a-file" and "directory" in error.message


def test_empty_file(tmp_path):
    (tmp_path / "empty.nc").write_bytes(b"")
    assert error_of(tmp_path / "empty.nc").code == "empty"


def test_text_file(tmp_path):
    (tmp_path / "notes.nc").write_text("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc\n")
    error = error_of(tmp_path / "notes.nc")
    assert error.code == "not-netcdf" and "text file" in error.message


def test_binary_junk(tmp_path):
    (tmp_path / "junk.nc").write_bytes(bytes(range(256)) * 4)
    assert error_of(tmp_path / "junk.nc").code == "not-netcdf"


@pytest.mark.parametrize(
    ("magic", "code"),
    [
        (b"BZh91AY&SY", "compressed"),
        (b"\xfd7zXZ\x00\x00", "compressed"),
        (b"root\x00", "not-netcdf"),
    ],
)
def test_other_look_alikes(tmp_path, magic, code):
    (tmp_path / "file").write_bytes(magic + bytes(100))
    assert error_of(tmp_path / "file").code == code


def test_hdf5_signature_with_a_corrupt_body_is_unreadable(tmp_path):
    (tmp_path / "bad.nc").write_bytes(b"\x89HDF\r\n\x1a\n" + b"\xff" * 200)
    error = error_of(tmp_path / "bad.nc")
    assert error.code == "unreadable" and "HDF5" in error.message


def test_file_without_read_permission(tmp_path):
    if os.geteuid() != 0:
        target = tmp_path / "secret.nc"
        shutil.copy(ODD, target)
        target.chmod(0)
        assert error_of(target).code == "permission-denied"
        return
    # root reads anything: check in a forked child that became an unprivileged user (it cannot
    # exec a new interpreter, which lives under /root), in a directory that user can enter
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        target = Path(directory) / "secret.nc"
        shutil.copy(ODD, target)
        target.chmod(0)
        assert as_nobody(lambda: error_of(target).code) == "permission-denied"


def as_nobody(func):
    """``func()`` run in a forked child with uid/gid 65534; its result (a str) or its error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            result = str(func())
        except BaseException as exc:
            result = f"child raised {exc!r}"
        os.write(write_end, result.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        result = pipe.read()
    os.waitpid(pid, 0)
    return result


# ---------------------------------------------------------------- truncated classic files


@pytest.mark.parametrize("fmt", ["NETCDF3_CLASSIC", "NETCDF3_64BIT_OFFSET", "NETCDF3_64BIT_DATA"])
def test_truncated_classic_files_are_caught_although_the_library_opens_them(tmp_path, fmt):
    whole = tmp_path / "whole.nc"
    with netCDF4.Dataset(whole, "w", format=fmt) as ds:
        ds.title = "records"
        ds.createDimension("time", None)
        ds.createDimension("x", 3)
        ds.createVariable("x", "f4", ("x",))[:] = [1, 2, 3]
        ds.createVariable("a", "f8", ("time", "x"))[:] = np.ones((4, 3))
        ds.createVariable("b", "i2", ("time",))[:] = np.arange(4)
    assert netcdf.extract(whole).dimensions[0] == netcdf.DimensionInfo("time", 4, True)
    data = whole.read_bytes()
    for cut in (len(data) - 8, 200, 40):
        part = tmp_path / f"cut{cut}.nc"
        part.write_bytes(data[:cut])
        error = error_of(part)
        assert error.code == "truncated", (cut, error)


@pytest.mark.parametrize("fmt", ["NETCDF4", "NETCDF4_CLASSIC"])
def test_truncated_netcdf4_file_written_here_superblock_v2(tmp_path, fmt):
    whole = tmp_path / "whole.nc"
    with netCDF4.Dataset(whole, "w", format=fmt) as ds:
        ds.createDimension("x", 1000)
        ds.createVariable("x", "f8", ("x",))[:] = np.arange(1000)
    data = whole.read_bytes()
    assert data[8] == 2  # superblock version 2, the MIROC edge file has version 0
    (tmp_path / "cut.nc").write_bytes(data[: len(data) // 2])
    error = error_of(tmp_path / "cut.nc")
    assert error.code == "truncated" and f"declares {len(data)}" in error.message


def test_corrupt_classic_header_is_unreadable(tmp_path):
    # a valid magic and record count, then a list tag that is neither ABSENT nor a dimension list
    (tmp_path / "bad.nc").write_bytes(b"CDF\x01" + bytes(4) + b"\x00\x00\x00\x07" + bytes(64))
    error = error_of(tmp_path / "bad.nc")
    assert error.code == "unreadable" and "classic header" in error.message


def test_absurd_name_length_in_a_classic_header_is_truncation_not_a_huge_read(tmp_path):
    header = b"CDF\x01" + bytes(4) + b"\x00\x00\x00\x0a" + b"\x00\x00\x00\x01"
    (tmp_path / "bad.nc").write_bytes(header + b"\x7f\xff\xff\xff" + bytes(16))
    assert error_of(tmp_path / "bad.nc").code == "truncated"


def test_attribute_bytes_that_are_not_utf8_do_not_stop_extraction(tmp_path):
    # old CMIP5 files hold Latin-1 text (e.g. 'Meteo-France' with accents)
    path = tmp_path / "latin1.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.institution = "XXXXX-France"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"XXXXX", b"M\xe9t\xe9o"))  # same length: layout unchanged
    institution = netcdf.read_global_attributes(path)["institution"]
    assert institution == "M\ufffdt\ufffdo-France"  # undecodable bytes replaced, never fatal


def test_a_lone_unpadded_byte_record_variable_is_not_called_truncated(tmp_path):
    path = tmp_path / "bytes.nc"
    with netCDF4.Dataset(path, "w", format="NETCDF3_CLASSIC") as ds:
        ds.createDimension("time", None)
        ds.createVariable("flag", "i1", ("time",))[:] = np.arange(5, dtype="i1")
    assert netcdf.extract(path).variable("flag") is not None


def test_every_classic_edge_file_passes_the_length_check():
    classic = [p for p in EDGE.glob("*.nc") if p.read_bytes()[:3] == b"CDF"]
    assert len(classic) == 5
    for path in classic:
        assert netcdf.extract(path).format.startswith("NETCDF3")


# ------------------------------------------------------------------- CF time in every calendar


def make_time_file(path, units, calendar, values, bounds=None, **extra_attrs):
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = units
        if calendar is not None:
            time.calendar = calendar
        for key, value in extra_attrs.items():
            time.setncattr(key, value)
        time[:] = values
        if bounds is not None:
            ds.createDimension("bnds", 2)
            time.bounds = "time_bnds"
            ds.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = bounds
    return path


@pytest.mark.parametrize(
    ("calendar", "start", "end"),
    [
        # day 59 is 1 March except in all_leap/366_day (29 February) and 360_day (30 February)
        ("standard", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
        ("gregorian", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
        ("proleptic_gregorian", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
        ("noleap", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
        ("365_day", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
        ("all_leap", "2001-01-01T00:00:00", "2001-02-29T00:00:00"),
        ("366_day", "2001-01-01T00:00:00", "2001-02-29T00:00:00"),
        ("360_day", "2001-01-01T00:00:00", "2001-02-30T00:00:00"),
        ("julian", "2001-01-01T00:00:00", "2001-03-01T00:00:00"),
    ],
)
def test_time_bounds_decode_in_every_cf_calendar(tmp_path, calendar, start, end):
    path = make_time_file(
        tmp_path / "t.nc",
        "days since 2001-01-01",
        calendar,
        [15.5, 45.0],
        bounds=[[0, 31], [31, 59]],
    )
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.calendar, meta.time.start, meta.time.end) == (calendar, start, end)
    assert meta.time.first == "2001-01-16T12:00:00"
    assert meta.warnings == []


@pytest.mark.parametrize(
    ("calendar", "last"),
    [
        # 365000 days after 0001-01-01, worked out by hand from each calendar's leap rule
        ("noleap", "1001-01-01T00:00:00"),  # exactly 1000 years of 365 days
        ("360_day", "1014-11-21T00:00:00"),  # 1013 years + 10 months + 20 days
        ("all_leap", "0998-04-08T00:00:00"),  # 997 years of 366 days + 98 days
        ("julian", "1000-04-26T00:00:00"),  # 250 days short of 1001 (250 leap years)
        ("proleptic_gregorian", "1000-05-04T00:00:00"),  # 242 days short (242 leap years)
    ],
)
def test_days_since_year_one(tmp_path, calendar, last):
    path = make_time_file(tmp_path / "t.nc", "days since 0001-01-01", calendar, [0.0, 365000.0])
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.start, meta.time.end) == ("0001-01-01T00:00:00", last)
    assert (meta.time.first, meta.time.last) == (meta.time.start, meta.time.end)
    assert meta.time.bounds is None


def test_missing_calendar_means_standard(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "hours since 1970-01-01 00:00:00", None, [0, 36])
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.calendar, meta.time.end) == ("standard", "1970-01-02T12:00:00")


def test_months_since_in_a_365_day_calendar_gives_raw_values_and_a_warning(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "months since 2000-01-01", "noleap", [0.5, 11.5])
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.start, meta.time.end, meta.time.first) == (None, None, None)
    assert (meta.time.raw_start, meta.time.raw_end) == (0.5, 11.5)
    assert [w.code for w in meta.warnings] == ["time-undecodable"]
    assert "months since" in meta.warnings[0].message


def test_months_since_in_the_360_day_calendar_decodes(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "months since 2000-01-01", "360_day", [0.5, 11.5])
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.start, meta.time.end) == ("2000-01-16T00:00:00", "2000-12-16T00:00:00")


def test_year_zero_in_the_standard_calendar_is_undecodable_not_fatal(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "days since 0000-01-01", "standard", [0.0, 1.0])
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.start is None
    assert [w.code for w in meta.warnings] == ["time-undecodable"]


def test_unknown_calendar_is_undecodable_not_fatal(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "days since 2000-01-01", "lunar", [0.0, 1.0])
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.calendar == "lunar"
    assert [w.code for w in meta.warnings] == ["time-undecodable"]


def test_decreasing_time_axis_still_gives_start_before_end(tmp_path):
    path = make_time_file(
        tmp_path / "t.nc",
        "days since 2000-01-01",
        "noleap",
        [45.0, 15.5],
        bounds=[[59, 31], [31, 0]],
    )
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.start, meta.time.end) == ("2000-01-01T00:00:00", "2000-03-01T00:00:00")
    assert (meta.time.first, meta.time.last) == ("2000-02-15T00:00:00", "2000-01-16T12:00:00")


def test_climatology_bounds_are_used_like_bounds(tmp_path):
    path = tmp_path / "clim.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 1)
        ds.createDimension("nv", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "days since 1961-01-01", "calendar": "noleap"})
        time.climatology = "climatology_bnds"
        time[:] = [5475.0]
        ds.createVariable("climatology_bnds", "f8", ("time", "nv"))[:] = [[0, 10950]]
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert meta.time.bounds == "climatology_bnds"
    assert (meta.time.start, meta.time.end) == ("1961-01-01T00:00:00", "1991-01-01T00:00:00")


def test_time_bnds_without_a_bounds_attribute_are_still_used(tmp_path):
    # post-processing often drops time@bounds (the HadGEM2 sample's history shows it put back)
    path = make_time_file(
        tmp_path / "t.nc", "days since 2000-01-01", "noleap", [15.5, 45.0], [[0, 31], [31, 59]]
    )
    with netCDF4.Dataset(path, "a") as ds:
        ds["time"].delncattr("bounds")
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.bounds == "time_bnds"
    assert (meta.time.start, meta.time.end) == ("2000-01-01T00:00:00", "2000-03-01T00:00:00")


def test_bounds_attribute_naming_an_absent_variable_is_a_warning(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "days since 2000-01-01", "noleap", [15.5], bounds=None)
    with netCDF4.Dataset(path, "a") as ds:
        ds["time"].bounds = "nowhere"
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.start == "2000-01-16T12:00:00"
    assert [w.code for w in meta.warnings] == ["bounds-missing"]


def test_float_rounding_noise_is_rounded_to_the_second(tmp_path):
    # 1/3 day in float32 is 0.33333334: 08:00:00.0005 once decoded
    path = tmp_path / "t.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 1)
        time = ds.createVariable("time", "f4", ("time",))
        time.units = "days since 2000-01-01"
        time[:] = [1 / 3]
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.start == "2000-01-01T08:00:00"


def test_empty_unlimited_time_axis(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "days since 2000-01-01", "noleap", [])
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.length, meta.time.start, meta.time.raw_start) == (0, None, None)
    assert [w.code for w in meta.warnings] == ["time-empty"]


def test_time_found_by_axis_attribute_under_another_name(tmp_path):
    path = tmp_path / "t.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("t", 2)
        ds.createVariable("other", "f8", ("t",))[:] = [1, 2]
        valid = ds.createVariable("t", "f8", ("t",))
        valid.setncatts({"axis": "T", "units": "hours since 2000-01-01"})
        valid[:] = [0, 6]
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (meta.time.variable, meta.time.end) == ("t", "2000-01-01T06:00:00")


def test_string_typed_time_variable_is_a_warning(tmp_path):
    path = tmp_path / "t.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 2)
        time = ds.createVariable("time", str, ("time",))
        time.units = "days since 2000-01-01"
        time[0], time[1] = "a", "b"
    meta = netcdf.extract(path)
    assert meta.time is not None and meta.time.start is None
    assert "values-unreadable" in [w.code for w in meta.warnings]
    assert meta.variable("time").dtype == "string"  # type: ignore[union-attr]


# ------------------------------------------------------------------------------ lat/lon box


def make_grid_file(path, lat, lon, lon_bounds=None):
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("lat", len(lat))
        ds.createDimension("lon", len(lon))
        ds.createVariable("lat", "f8", ("lat",)).setncatts({"units": "degrees_north"})
        ds["lat"][:] = lat
        ds.createVariable("lon", "f8", ("lon",)).setncatts({"units": "degrees_east"})
        ds["lon"][:] = lon
        if lon_bounds is not None:
            ds.createDimension("bnds", 2)
            ds["lon"].bounds = "lon_bnds"
            ds.createVariable("lon_bnds", "f8", ("lon", "bnds"))[:] = lon_bounds
    return path


def test_global_0_360_grid_with_bounds_is_the_whole_world(tmp_path):
    centres = np.arange(1.25, 360, 2.5)
    bounds = np.stack([centres - 1.25, centres + 1.25], axis=1)
    path = make_grid_file(tmp_path / "g.nc", [-88.75, 88.75], centres, bounds)
    box = netcdf.extract(path).spatial
    assert box is not None
    assert (box.lon_min, box.lon_max, box.west, box.east) == (0.0, 360.0, -180.0, 180.0)
    assert box.source == ("lat", "lon_bnds")


@pytest.mark.parametrize(
    ("lon", "west", "east"),
    [
        ([0.0, 180.0], 0.0, 180.0),
        ([180.0, 350.0], -180.0, -10.0),
        ([350.0, 370.0], -10.0, 10.0),  # around Greenwich, written past 360
        ([170.0, 190.0], 170.0, -170.0),  # crosses the antimeridian: west > east
        ([-30.0, 40.0], -30.0, 40.0),
    ],
)
def test_regional_longitudes_normalised_for_search(tmp_path, lon, west, east):
    box = netcdf.extract(make_grid_file(tmp_path / "r.nc", [10.0, 20.0], lon)).spatial
    assert box is not None
    assert (box.lon_min, box.lon_max) == (lon[0], lon[1])
    assert (box.west, box.east) == (west, east)


def test_zonal_mean_has_latitude_only(tmp_path):
    path = tmp_path / "zonal.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("lat", 3)
        lat = ds.createVariable("lat", "f8", ("lat",))
        lat.standard_name = "latitude"
        lat[:] = [-45, 0, 45]
    box = netcdf.extract(path).spatial
    assert box is not None
    assert (box.lat_min, box.lat_max, box.lon_min, box.west) == (-45.0, 45.0, None, None)
    assert box.source == ("lat",)


def test_large_curvilinear_grid_is_sampled_by_rows(tmp_path, monkeypatch):
    ny, nx = 50, 40
    lat2d = np.repeat(np.linspace(-80, 89, ny)[:, None], nx, axis=1)
    lat2d[25, 7] = 89.5  # an interior extreme that row sampling may skip
    lon2d = np.repeat(np.linspace(0, 359, nx)[None, :], ny, axis=0)
    path = tmp_path / "curvi.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("j", ny)
        ds.createDimension("i", nx)
        for name, values, std in (("lat", lat2d, "latitude"), ("lon", lon2d, "longitude")):
            var = ds.createVariable(name, "f8", ("j", "i"))
            var.standard_name = std
            var[:] = values
    whole = netcdf.extract(path).spatial
    assert whole is not None and not whole.approximate and whole.lat_max == 89.5
    monkeypatch.setattr(netcdf, "COORDINATE_READ_LIMIT", 400)  # 10 of the 50 rows
    sampled = netcdf.extract(path).spatial
    assert sampled is not None and sampled.approximate
    assert (sampled.lat_min, sampled.lat_max) == (-80.0, 89.0)  # first and last rows are read
    assert (sampled.lon_min, sampled.lon_max) == (0.0, 359.0)


# ------------------------------------------------------------------------ header only


@pytest.fixture
def big_file(tmp_path):
    """A 400 MB variable (never written: chunks stay unallocated) and a 2-million-step time."""
    path = tmp_path / "big.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("y", 10_000)
        ds.createDimension("x", 10_000)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "seconds since 2000-01-01", "calendar": "standard"})
        time[:] = np.arange(2_000_000, dtype="f8")
        ds.createVariable("big", "f4", ("y", "x"), chunksizes=(1000, 1000))
    return path


def _peak_memory(func, *args):
    tracemalloc.start()
    try:
        result = func(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_data_variables_are_never_read(big_file):
    meta, peak = _peak_memory(netcdf.extract, big_file)
    assert meta.time is not None and meta.time.end == "2000-01-24T03:33:19"
    assert meta.variable("big").shape == (10_000, 10_000)  # type: ignore[union-attr]
    assert peak < 2_000_000, f"extract() allocated {peak:,} bytes"


def test_user_defined_types_are_named_not_read(tmp_path):
    path = tmp_path / "types.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("n", 2)
        pair = ds.createCompoundType(np.dtype([("a", "f4"), ("b", "i4")]), "pair")
        ds.createVariable("pairs", pair, ("n",))
        ragged = ds.createVLType("i4", "ragged")
        ds.createVariable("rows", ragged, ("n",))
        group = ds.createGroup("extra")
        group.note = "groups are listed, not descended into"
    meta = netcdf.extract(path)
    assert [(v.name, v.dtype) for v in meta.variables] == [
        ("pairs", "CompoundType:pair"),
        ("rows", "VLType:ragged"),
    ]
    assert meta.groups == ["extra"]


# ------------------------------------------------------------- naming_attributes (translators)

NAMING_KEYS = ("variable_id", "time_coverage_start", "time_coverage_end")


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.name)
def test_naming_attributes_give_each_sample_files_variable_and_first_and_last_records(path):
    attributes = netcdf.naming_attributes(path)
    added = {k: attributes.pop(k) for k in NAMING_KEYS}
    assert sorted(attributes.pop("ndnsci:derived")) == sorted(NAMING_KEYS)  # said so
    assert attributes == netcdf.read_global_attributes(path)  # the rest as read_global_attributes
    meta = netcdf.extract(path)
    assert meta.time is not None
    assert (added["time_coverage_start"], added["time_coverage_end"]) == (
        meta.time.first,
        meta.time.last,
    )  # coordinate values, not bounds
    if path != ODD:
        assert added["variable_id"] == path.name.split("_")[0]
    else:  # the file whose name says nothing holds BNU-ESM fgco2, as its directories say
        assert added["variable_id"] == "fgco2"


def test_naming_attributes_of_the_non_drs_esmvalcore_files():
    tas = netcdf.naming_attributes(EDGE / "esmvalcore_tas_nondrs_name.nc")
    # two monthly means of a 365_day calendar: 15.5 and 45 days since 1850-01-01
    assert {k: tas[k] for k in NAMING_KEYS} == {
        "variable_id": "tas",  # not height (scalar), lat/lon (coordinates), *_bnds (bounds)
        "time_coverage_start": "1850-01-16T12:00:00",
        "time_coverage_end": "1850-02-15T00:00:00",
    }
    assert tas["project_id"] == "CMIP5" and tas["model_id"] == "CanESM2"
    fx = netcdf.naming_attributes(EDGE / "esmvalcore_areacella_nondrs_name.nc")
    assert fx["variable_id"] == "areacella"
    assert "time_coverage_start" not in fx and "time_coverage_end" not in fx  # no time axis


@pytest.mark.parametrize(("name", "outcome"), EDGE_OUTCOMES.items())
def test_naming_attributes_of_every_edge_file(name, outcome):
    try:
        attributes = netcdf.naming_attributes(EDGE / name)
    except MetadataError as exc:
        assert exc.code == outcome
        return
    assert outcome == "ok"
    json.dumps(attributes, allow_nan=False)
    added = set(attributes) - set(netcdf.read_global_attributes(EDGE / name))
    assert added <= {*NAMING_KEYS, "ndnsci:derived"}
    assert set(attributes.get("ndnsci:derived", [])) == added - {"ndnsci:derived"}


def make_cmip_like_file(path, **global_attrs):
    """A CMOR-shaped monthly file: tas(time, lat, lon) with height, bounds and cell measures."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.setncatts(global_attrs)
        for dim, size in (("time", None), ("lat", 2), ("lon", 2), ("bnds", 2)):
            ds.createDimension(dim, size)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts(
            {"units": "days since 2000-01-01", "calendar": "360_day", "bounds": "time_bnds"}
        )
        time[:] = [15.0, 45.0, 75.0]
        ds.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = [[0, 30], [30, 60], [60, 90]]
        for axis in ("lat", "lon"):
            ds.createVariable(axis, "f8", (axis,))[:] = [0.0, 1.0]
            ds[axis].bounds = f"{axis}_bnds"
            ds.createVariable(f"{axis}_bnds", "f8", (axis, "bnds"))
        ds.createVariable("height", "f8", ())
        tas = ds.createVariable("tas", "f4", ("time", "lat", "lon"))
        tas.setncatts({"coordinates": "height", "cell_measures": "area: areacella"})
        ds.createVariable("areacella", "f4", ("lat", "lon"))
    return path


def test_naming_attributes_time_in_a_360_day_calendar_from_the_coordinate(tmp_path):
    attributes = netcdf.naming_attributes(make_cmip_like_file(tmp_path / "x.nc"))
    assert attributes["variable_id"] == "tas"  # areacella is a cell measure of tas
    assert (attributes["time_coverage_start"], attributes["time_coverage_end"]) == (
        "2000-01-16T00:00:00",
        "2000-03-16T00:00:00",
    )


def test_naming_attributes_keep_what_the_file_says_in_any_case(tmp_path):
    path = make_cmip_like_file(
        tmp_path / "x.nc", VARIABLE_ID="pr", time_coverage_start="1999-12-01"
    )
    attributes = netcdf.naming_attributes(path)
    assert attributes["VARIABLE_ID"] == "pr" and "variable_id" not in attributes
    assert attributes["time_coverage_start"] == "1999-12-01"  # the file's own
    assert attributes["time_coverage_end"] == "2000-03-16T00:00:00"  # the missing one, derived


def test_naming_attributes_leave_variable_id_out_when_several_variables_qualify(tmp_path):
    path = make_cmip_like_file(tmp_path / "x.nc")
    with netCDF4.Dataset(path, "a") as ds:
        ds.createVariable("pr", "f4", ("time", "lat", "lon"))
    attributes = netcdf.naming_attributes(path)
    assert "variable_id" not in attributes
    assert attributes["time_coverage_start"] == "2000-01-16T00:00:00"


def test_main_variable_skips_formula_terms_grid_mapping_and_unreferenced_bounds(tmp_path):
    # a CMOR hybrid-level file (cl with a, b, p0, ps) after a tool dropped lev@bounds
    path = tmp_path / "cl.nc"
    with netCDF4.Dataset(path, "w") as ds:
        for dim, size in (("time", None), ("lev", 3), ("lat", 2), ("bnds", 2)):
            ds.createDimension(dim, size)
        ds.createVariable("time", "f8", ("time",))
        ds.createVariable("lat", "f8", ("lat",))
        lev = ds.createVariable("lev", "f8", ("lev",))
        lev.formula_terms = "p0: p0 a: a b: b ps: ps"
        ds.createVariable("lev_bnds", "f8", ("lev", "bnds"))
        ds.createVariable("p0", "f8", ())
        for name in ("a", "b"):
            ds.createVariable(name, "f8", ("lev",))
        ds.createVariable("ps", "f4", ("time", "lat"))
        ds.createVariable("crs", "i4", ())
        cl = ds.createVariable("cl", "f4", ("time", "lev", "lat"))
        cl.grid_mapping = "crs"
    assert netcdf.naming_attributes(path)["variable_id"] == "cl"


def test_naming_attributes_of_a_climatology_are_its_period(tmp_path):
    # a monthly climatology of 1986-2005, January to December (CF climatology bounds)
    path = tmp_path / "clim.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 2)
        ds.createDimension("nv", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts(
            {"units": "days since 1986-01-01", "calendar": "360_day", "climatology": "clim_bnds"}
        )
        time[:] = [3435.0, 3765.0]  # mid-January and mid-December 1995
        ds.createVariable("clim_bnds", "f8", ("time", "nv"))[:] = [[0, 6870], [330, 7200]]
        ds.createVariable("difvso", "f4", ("time",))
    attributes = netcdf.naming_attributes(path)
    assert (attributes["time_coverage_start"], attributes["time_coverage_end"]) == (
        "1986-01-01T00:00:00",
        "2006-01-01T00:00:00",
    )


def test_naming_attributes_without_a_decodable_time_axis(tmp_path):
    path = make_time_file(tmp_path / "t.nc", "months since 2000-01-01", "noleap", [0.5, 11.5])
    attributes = netcdf.naming_attributes(path)
    assert "time_coverage_start" not in attributes and "time_coverage_end" not in attributes
    assert "variable_id" not in attributes  # the time axis is the only variable


def test_naming_attributes_errors_are_metadata_errors(tmp_path):
    with pytest.raises(MetadataError) as info:
        netcdf.naming_attributes(
            EDGE / "truncated_fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc"
        )
    assert info.value.code == "truncated"
    with pytest.raises(MetadataError) as info:
        netcdf.naming_attributes(tmp_path / "missing.nc")
    assert info.value.code == "not-found"


def test_naming_attributes_read_two_time_values_and_no_data(big_file):
    """Naming reads a header and two time values, never the data."""
    attributes, peak = _peak_memory(netcdf.naming_attributes, big_file)
    assert attributes == {
        "variable_id": "big",
        "time_coverage_start": "2000-01-01T00:00:00",
        "time_coverage_end": "2000-01-24T03:33:19",
        "ndnsci:derived": ["time_coverage_end", "time_coverage_start", "variable_id"],
    }
    assert peak < 2_000_000, f"naming_attributes() allocated {peak:,} bytes"


def test_main_variable_skips_string_valued_coordinate_variables(tmp_path):
    # CMIP5 msftmyz: basin(basin, strlen) names the ocean basins, msftmyz(time, basin, lev, lat)
    path = tmp_path / "msftmyz.nc"
    with netCDF4.Dataset(path, "w") as ds:
        for dim, size in (("time", None), ("basin", 3), ("strlen", 21), ("lev", 2), ("lat", 2)):
            ds.createDimension(dim, size)
        for axis in ("time", "lev", "lat"):
            ds.createVariable(axis, "f8", (axis,))
        ds.createVariable("basin", "S1", ("basin", "strlen"))
        ds.createVariable("msftmyz", "f4", ("time", "basin", "lev", "lat"))
    assert netcdf.naming_attributes(path)["variable_id"] == "msftmyz"
