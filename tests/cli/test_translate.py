"""`ndnsci translate`: the JSON-lines contract other tools rely on."""

import json
import subprocess
from pathlib import Path

import pytest
from support import CLI, run_cli

from ndnsci.cli import main

KEYS = ["input", "ok", "scheme", "name", "filename", "facets", "corrections", "error"]
CMIP5_FILE = "tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc"
CMIP6_FILE = "tas_Amon_IPSL-CM6A-LR_historical_r1i1p1f1_gr_185001-201412.nc"
CMS_LFN = (
    "/store/data/Run2010A/Cosmics/RECO/v4/000/143/316/0000/"
    "F65F4AFE-14AC-DF11-B3BE-00215E21F32E.root"
)
DATA = Path(__file__).parents[1] / "data"


def _json_lines(text):
    return [json.loads(line) for line in text.splitlines()]


def test_json_gives_one_object_per_input_in_order_with_the_contract_keys(capsys):
    inputs = [CMS_LFN, "not a science file", CMIP5_FILE, CMIP6_FILE]
    code = main(["translate", "--json", *inputs])
    records = _json_lines(capsys.readouterr().out)
    assert [r["input"] for r in records] == inputs
    assert all(list(r) == KEYS for r in records)
    assert [r["scheme"] for r in records] == ["cms", None, "cmip5", "cmip6"]
    assert [r["ok"] for r in records] == [True, False, True, True]
    assert records[1]["error"]["code"] == "unknown-scheme"
    assert records[1]["name"] is None
    assert records[0]["name"] == "/CMS" + CMS_LFN
    assert code == 1  # one input could not be named


def test_facet_keys_are_the_documented_ones(capsys):
    main(["translate", "--json", CMIP5_FILE, CMIP6_FILE, CMS_LFN])
    cmip5, cmip6, cms = _json_lines(capsys.readouterr().out)
    assert list(cmip5["facets"]) == [
        "activity", "product", "institute", "model", "experiment", "frequency", "realm",
        "table", "ensemble", "version", "variable", "time_range", "geo",
    ]  # fmt: skip
    assert list(cmip6["facets"]) == [
        "mip_era", "activity_id", "institution_id", "source_id", "experiment_id", "member_id",
        "table_id", "variable_id", "grid_label", "version", "time_range",
    ]  # fmt: skip
    assert list(cms["facets"]) == [
        "area", "era", "primary_dataset", "tier", "processing", "counter", "filename",
    ]  # fmt: skip
    assert cmip5["facets"]["model"] == "HadCM3"
    assert cmip5["facets"]["geo"] is None


def test_all_named_exits_zero(capsys):
    assert main(["translate", "--json", CMIP5_FILE]) == 0


def test_forced_scheme_that_does_not_fit_is_an_error(capsys):
    main(["translate", "--json", "--scheme", "cms", CMIP5_FILE])
    (record,) = _json_lines(capsys.readouterr().out)
    assert record["ok"] is False
    assert record["scheme"] == "cms"


def test_unknown_scheme_is_a_usage_error(capsys):
    assert main(["translate", "--scheme", "cmip7", CMIP5_FILE]) == 2
    assert "valid schemes: cmip5, cmip6, cms" in capsys.readouterr().err


def test_reverse_prints_the_original_file_name(capsys):
    main(["translate", "--json", CMIP5_FILE])
    name = json.loads(capsys.readouterr().out)["name"]
    assert main(["translate", "--reverse", "--json", name]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["filename"] == CMIP5_FILE
    assert record["facets"]["model"] == "HadCM3"
    main(["translate", "--reverse", name])
    assert CMIP5_FILE in capsys.readouterr().out


def test_table_output_is_readable(capsys):
    main(["translate", CMIP5_FILE, "junk"])
    captured = capsys.readouterr()
    assert "/CMIP5/" in captured.out
    assert "unknown-scheme" in captured.out
    assert "version-missing" in captured.out  # a bare file name carries no version
    assert captured.err.startswith("2 inputs: 0 named, 1 named after corrections, 1 could not")


def test_a_directory_is_walked(capsys):
    main(["translate", "--json", str(DATA / "netcdf" / "cmip5")])
    records = _json_lines(capsys.readouterr().out)
    assert len(records) == 33
    assert sum(r["ok"] for r in records) >= 32


def test_stdin_streams_and_keeps_order(tmp_path):
    lines = [CMIP5_FILE, "", "junk", CMS_LFN] * 5000
    proc = run_cli("translate", "--stdin", "--json", input="\n".join(lines) + "\n")
    records = _json_lines(proc.stdout)
    assert [r["input"] for r in records] == [line for line in lines if line]
    assert proc.returncode == 1


def test_stdin_answers_each_line_before_the_input_ends():
    # a caller may write one name, wait for its answer, then write the next
    proc = subprocess.Popen(
        [*CLI, "translate", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        for text in (CMIP5_FILE, CMS_LFN):
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["input"] == text
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize(
    ("raw", "refused"),
    [
        (b"\xff\xfe/store/x\x00.root\n", ["control-character"]),  # the NUL (the rest: a prefix)
        (b"\r\n\r\n", []),  # blank lines are no inputs
        (b"a" * 100000 + b"\n", ["unknown-scheme"]),
    ],
)
def test_hostile_input_bytes_never_crash(raw, refused):
    proc = run_cli("translate", "--stdin", "--json", input=raw)
    assert proc.returncode == (1 if refused else 0), proc.stderr
    assert proc.stderr == b""
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all(list(record) == KEYS for record in records)
    assert [(r["ok"], r["error"]["code"]) for r in records] == [(False, c) for c in refused]


def test_metadata_fills_and_checks_components_from_real_files(capsys):
    main(["translate", "--json", "--metadata", str(DATA / "netcdf" / "cmip5")])
    records = _json_lines(capsys.readouterr().out)
    assert len(records) == 33
    assert all(r["ok"] for r in records)
    assert {r["facets"]["institute"] for r in records} >= {"MOHC", "IPSL", "NASA-GISS"}
    # the one non-DRS name of the archive is named from its contents; its DRS directories count
    odd = next(r for r in records if r["input"].endswith("/files/odd_file.nc"))
    assert odd["name"] == (
        "/CMIP5/output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/Omon/r1i1p1/latest/fgco2/"
        "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-145002.nc"
    )
    assert [c["rule"] for c in odd["corrections"]] == [
        "filename-from-attributes",
        "time-range-from-axis",  # no time_coverage_*: from its time axis and bounds
        "dir-ignored",  # files/: drslib's storage directory without its <variable>_<date>
        "dir-file-mismatch",  # cfMon/: BNU-ESM's Omon files sit under a cfMon directory
        "version-missing",
    ]


def test_metadata_names_the_archive_as_its_paths_do_but_the_non_drs_file(capsys):
    archive = str(DATA / "netcdf" / "cmip5")
    main(["translate", "--json", archive])
    from_paths = _json_lines(capsys.readouterr().out)
    main(["translate", "--json", "--metadata", archive])
    with_metadata = _json_lines(capsys.readouterr().out)
    changed = [
        b["input"]
        for a, b in zip(from_paths, with_metadata, strict=True)
        if (a["name"], a["facets"], a["corrections"]) != (b["name"], b["facets"], b["corrections"])
    ]
    assert [Path(p).name for p in changed] == ["odd_file.nc"]


EDGE_NAMES = {
    "esmvalcore_tas_nondrs_name.nc": "/CMIP5/output1/CCCma/CanESM2/historical/mon/atmos/Amon/"
    "r1i1p1/latest/tas/tas_Amon_CanESM2_historical_r1i1p1_185001-185002.nc",
    "esmvalcore_areacella_nondrs_name.nc": "/CMIP5/output1/CCCma/CanESM2/historical/fx/atmos/fx/"
    "r0i0p0/latest/areacella/areacella_fx_CanESM2_historical_r0i0p0.nc",
}


def test_metadata_names_files_as_publish_does(capsys):
    code = main(["translate", "--json", "--metadata", str(DATA / "netcdf" / "edge")])
    captured = capsys.readouterr()
    records = _json_lines(captured.out)
    assert len(records) == len(list((DATA / "netcdf" / "edge").iterdir()))
    assert "Traceback" not in captured.err
    truncated = next(r for r in records if "truncated_fgco2" in r["input"])
    # a netCDF file whose header cannot be read gets the reader's error, as `ndnsci publish`
    # quarantines it: naming it from its path would publish a damaged file
    assert not truncated["ok"] and truncated["error"]["code"] == "truncated"
    assert "header declares 27187" in truncated["error"]["message"]
    named = {Path(r["input"]).name: r["name"] for r in records if r["ok"]}
    assert named == EDGE_NAMES  # real CMIP5 data under non-DRS names: named from its contents
    assert code == 1  # the files that are no CMIP data cannot be named


def test_metadata_records_the_original_name_of_a_file_named_from_its_contents(capsys):
    path = DATA / "netcdf" / "edge" / "esmvalcore_tas_nondrs_name.nc"
    code = main(["translate", "--json", "--metadata", str(path)])
    (record,) = _json_lines(capsys.readouterr().out)
    assert code == 0
    assert record["input"] == str(path)
    assert record["scheme"] == "cmip5"
    assert record["name"] == EDGE_NAMES[path.name]
    assert record["corrections"][0] == {
        "rule": "filename-from-attributes",
        "message": "'esmvalcore_tas_nondrs_name.nc' -> "
        "'tas_Amon_CanESM2_historical_r1i1p1_185001-185002.nc': not a CMIP5 DRS file name; "
        "rebuilt from the global attributes (time range from the time axis)",
    }
    assert record["corrections"][1] == {
        "rule": "time-range-from-axis",  # the file states no time_coverage_*
        "message": "time range '185001-185002' from the time axis: first and last records "
        "1850-01-16T12:00:00 and 1850-02-15T00:00:00, written yyyymm as the DRS sets for "
        "table Amon's mon data (the file states no time_coverage_start/end)",
    }
    assert [c["rule"] for c in record["corrections"]] == [
        "filename-from-attributes",
        "time-range-from-axis",
        "product-output",
        "version-missing",
    ]
