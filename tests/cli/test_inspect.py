"""`ndnsci inspect`: a readable summary or JSON lines per file; bad files never stop the run."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ndnsci.cli import main

DATA = Path(__file__).parents[1] / "data" / "netcdf"
HADGEM = (
    DATA / "cmip5/output1/MOHC/HadGEM2-ES/esmControl/yr/ocnBgchem/Oyr/r1i1p1/v20120514/co3"
    "/co3_Oyr_HadGEM2-ES_esmControl_r1i1p1_2078-2100.nc"
)
TAS = DATA / "edge" / "esmvalcore_tas_nondrs_name.nc"
GRIB = DATA / "edge" / "not_netcdf_example.grib"
GZIP = DATA / "edge" / "gzipped_example_1.nc.gz"
TRUNCATED = DATA / "edge" / "truncated_fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc"
NDNSCI = Path(sys.executable).with_name("ndnsci")


def json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_summary_shows_time_box_dimensions_variables_and_attributes(capsys):
    assert main(["inspect", str(HADGEM)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == str(HADGEM)
    assert "  format      NETCDF4, 41,820 bytes" in lines
    assert (
        "  time        2077-12-01T00:00:00 to 2079-12-01T00:00:00 "
        "(calendar 360_day, 2 steps, from time_bnds)"
    ) in lines
    assert "  lat/lon     lat -90.5 to -85.5, lon -0.5 to 4.5 (from lat_bnds, lon_bnds)" in lines
    assert "  dimensions  time=2, bnds=2, lev=40, lat=5, lon=5" in lines
    assert "  derived     ensemble=r1i1p1, table=Oyr" in lines
    co3 = next(line for line in lines if line.strip().startswith("co3 "))
    assert "float32(time, lev, lat, lon) [mol m-3]" in co3
    assert any(line.split() == ["product", "output"] for line in lines)
    assert "latitude-out-of-range" in out


def test_long_attributes_are_cut_in_the_summary_and_whole_in_json(capsys):
    main(["inspect", str(HADGEM)])
    history = next(line for line in capsys.readouterr().out.splitlines() if "history " in line)
    assert history.endswith("...") and len(history) < 140
    main(["inspect", "--json", str(HADGEM)])
    (record,) = json_lines(capsys.readouterr().out)
    assert len(record["global_attributes"]["history"]) > 100


def test_json_one_object_per_file_in_input_order_bad_files_included(capsys):
    files = [str(TAS), str(GRIB), str(HADGEM), "/no/such/file.nc", str(GZIP), str(TRUNCATED)]
    code = main(["inspect", "--json", *files])
    captured = capsys.readouterr()
    records = json_lines(captured.out)
    assert [r["path"] for r in records] == files
    assert [r["ok"] for r in records] == [True, False, True, False, False, False]
    errors = [r["error"]["code"] for r in records if not r["ok"]]
    assert errors == ["grib", "not-found", "gzip-compressed", "truncated"]
    assert all(set(r) == {"path", "ok", "error"} for r in records if not r["ok"])
    assert all(r["error"]["message"] for r in records if not r["ok"])
    tas = records[0]
    assert list(tas)[:3] == ["path", "ok", "size"] and tas["error"] is None
    assert tas["time"]["start"] == "1850-01-01T00:00:00"
    assert tas["time"]["calendar"] == "365_day"
    assert tas["derived"] == {"ensemble": "r1i1p1", "table": "Amon"}
    assert captured.err == ""
    assert code == 1


def test_table_mode_reports_a_bad_file_in_one_line_and_goes_on(capsys):
    code = main(["inspect", str(GRIB), str(TAS)])
    captured = capsys.readouterr()
    error_lines = captured.err.splitlines()
    assert error_lines[0] == (
        f"ndnsci inspect: {GRIB}: a GRIB file, not netCDF: "
        "convert it (cdo -f nc copy) or use cfgrib [grib]"
    )
    assert error_lines[-1] == "2 files: 1 read, 1 failed"
    assert captured.out.splitlines()[0] == str(TAS)
    assert "Traceback" not in captured.err
    assert code == 1


def test_a_directory_is_a_clear_error(capsys, tmp_path):
    assert main(["inspect", str(tmp_path)]) == 1
    assert "directory" in capsys.readouterr().err


def test_checksum_adds_the_sha256(capsys):
    assert main(["inspect", "--json", "--checksum", str(TAS)]) == 0
    (record,) = json_lines(capsys.readouterr().out)
    assert record["sha256"] == hashlib.sha256(TAS.read_bytes()).hexdigest()
    main(["inspect", "--checksum", str(TAS)])
    assert f"  sha256      {record['sha256']}" in capsys.readouterr().out.splitlines()


def test_json_without_checksum_has_null_sha256(capsys):
    main(["inspect", "--json", str(TAS)])
    (record,) = json_lines(capsys.readouterr().out)
    assert record["sha256"] is None


def test_file_without_attributes_or_time(capsys):
    assert main(["inspect", str(DATA / "edge" / "no_attributes_ubyte.nc")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  time        none" in lines
    assert "  attributes  none" in lines


def test_undecodable_time_shows_raw_values(capsys, tmp_path):
    netCDF4 = pytest.importorskip("netCDF4")
    path = tmp_path / "months.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "months since 2000-01-01", "calendar": "noleap"})
        time[:] = [0.5, 11.5]
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0.5 to 11.5 months since 2000-01-01 (not decoded, see warnings; 2 steps)" in out
    assert "time-undecodable" in out


def test_no_file_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["inspect"])
    assert info.value.code == 2


def test_console_script_end_to_end():
    proc = subprocess.run(
        [str(NDNSCI), "inspect", "--json", str(TAS), str(GZIP)],
        capture_output=True,
        text=True,
        check=False,
    )
    records = json_lines(proc.stdout)
    assert [r["ok"] for r in records] == [True, False]
    assert records[0]["time"]["end"] == "1850-03-01T00:00:00"
    assert records[1]["error"]["code"] == "gzip-compressed"
    assert proc.returncode == 1
    assert proc.stderr == ""


def test_every_edge_file_in_one_run(capsys):
    files = sorted(str(p) for p in (DATA / "edge").iterdir())
    assert main(["inspect", *files]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("ndnsci inspect: ")]
    assert sorted(e.rsplit("[", 1)[1] for e in errors) == [
        "grib]",
        "gzip-compressed]",
        "truncated]",
    ]
    assert captured.err.splitlines()[-1] == f"{len(files)} files: {len(files) - 3} read, 3 failed"
    assert "Traceback" not in captured.err


def test_curvilinear_box_shows_the_longitudes_as_written(capsys):
    mpi = next((DATA / "cmip5").rglob("co3_Oyr_MPI-ESM-LR_*.nc"))
    main(["inspect", str(mpi)])
    assert (
        "  lat/lon     lat 76.024254 to 76.88111, lon 309.42075 to 313.08163 "
        "(from lat_vertices, lon_vertices)"
    ) in capsys.readouterr().out.splitlines()
