"""CMIP6 naming scheme: DRS paths, file names, ESGF ids and netCDF attributes -> /CMIP6 names."""

import csv
import re
from pathlib import Path

import pytest

from ndnsci_translators import get_translator, translate
from ndnsci_translators.cmip6 import FACET_KEYS, CMIP6Translator
from ndnsci_translators.names import split_name

CORPORA = Path(__file__).parents[1] / "data" / "corpora"
CMIP6 = CMIP6Translator()

TAS = "tas_Amon_IPSL-CM6A-LR_historical_r1i1p1f1_gr_185001-201412.nc"
TAS_NAME = f"/CMIP6/CMIP/IPSL/IPSL-CM6A-LR/historical/r1i1p1f1/Amon/tas/gr/v20180803/{TAS}"
# the global attributes a real DCPP file carries: no member_id, variant_label + sub_experiment_id
DCPP_FILE = "tas_Amon_EC-Earth3_dcppA-hindcast_s1960-r2i1p1f1_gr_196011-196110.nc"
DCPP_ATTRIBUTES = {
    "mip_era": "CMIP6",
    "activity_id": "DCPP",
    "institution_id": "EC-Earth-Consortium",
    "source_id": "EC-Earth3",
    "experiment_id": "dcppA-hindcast",
    "sub_experiment_id": "s1960",
    "variant_label": "r2i1p1f1",
    "table_id": "Amon",
    "variable_id": "tas",
    "grid_label": "gr",
}


def rows(name):
    with open(CORPORA / name, newline="") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


PATHS = rows("cmip6_paths.tsv")[1:]
MALFORMED = rows("cmip6_malformed.tsv")


def rules(result):
    return [c.rule for c in result.corrections]


def test_registered_with_the_contract_facets_in_order():
    assert isinstance(get_translator("cmip6"), CMIP6Translator)
    assert CMIP6.root == "CMIP6"
    assert CMIP6.facet_keys == (
        "mip_era", "activity_id", "institution_id", "source_id", "experiment_id", "member_id",
        "table_id", "variable_id", "grid_label", "version", "time_range",
    )  # fmt: skip


def test_drs_path_is_named_by_its_components():
    result = CMIP6.translate(f"/badc/cmip6/data{TAS_NAME}")
    assert result.ok, result.error
    assert result.name == TAS_NAME
    assert result.filename == TAS
    assert result.corrections == []
    assert result.facets == {
        "mip_era": "CMIP6",
        "activity_id": "CMIP",
        "institution_id": "IPSL",
        "source_id": "IPSL-CM6A-LR",
        "experiment_id": "historical",
        "member_id": "r1i1p1f1",
        "table_id": "Amon",
        "variable_id": "tas",
        "grid_label": "gr",
        "version": "v20180803",
        "time_range": "185001-201412",
    }


@pytest.mark.parametrize(
    "root",
    [
        "",
        "/badc/cmip6/data",
        "./tests/sample_data/cmip",
        "..",
        "gs://cmip6",
        "https://esgf.ceda.ac.uk/thredds/fileServer/esg_cmip6",
        "/pool/data/CMIP6/data/cmip6",
    ],
)
def test_the_root_in_front_of_the_drs_does_not_matter(root):
    assert CMIP6.translate(f"{root}{TAS_NAME}").name == TAS_NAME


def test_windows_path():
    result = CMIP6.translate("D:" + TAS_NAME.replace("/", "\\"))
    assert result.name == TAS_NAME


def test_relative_drs_path_without_the_cmip6_directory():
    result = CMIP6.translate(TAS_NAME.removeprefix("/CMIP6/"))
    assert result.name == TAS_NAME


def test_dataset_directory_is_named_without_a_file_name():
    result = CMIP6.translate(
        "/CMIP6/CMIP/AS-RCEC/TaiESM1/historical/r1i1p1f1/Amon/tas/gn/v20200623/"
    )
    assert result.ok, result.error
    assert result.name == "/CMIP6/CMIP/AS-RCEC/TaiESM1/historical/r1i1p1f1/Amon/tas/gn/v20200623"
    assert result.filename is None
    assert result.facets["time_range"] is None
    assert result.facets["version"] == "v20200623"


def test_sub_experiment_member_and_numbered_grid_label():
    path = (
        "/badc/cmip6/data/CMIP6/DCPP/EC-Earth-Consortium/EC-Earth3/dcppA-hindcast/s1960-r2i1p1f1/"
        f"Amon/tas/gr/v20201215/{DCPP_FILE}"
    )
    result = CMIP6.translate(path)
    assert result.facets["member_id"] == "s1960-r2i1p1f1"
    assert result.name.endswith(f"/s1960-r2i1p1f1/Amon/tas/gr/v20201215/{DCPP_FILE}")
    gr1 = CMIP6.translate(
        "esmvaltool_sample_data/data/timeseries/CMIP6/CMIP/INM/INM-CM5-0/historical/r1i1p1f1/"
        "Amon/ta/gr1/v20190610/ta_Amon_INM-CM5-0_historical_r1i1p1f1_gr1_201001-201412.nc"
    )
    assert gr1.facets["grid_label"] == "gr1"


def test_fixed_field_and_climatology_file_names():
    fx = CMIP6.translate(
        "CMIP/MOHC/HadGEM3-GC31-LL/historical/r1i1p1f1/Ofx/volcello/gn/v20200101/"
        "volcello_Ofx_HadGEM3-GC31-LL_historical_r1i1p1f1_gn.nc"
    )
    assert fx.ok and fx.facets["time_range"] is None
    clim = CMIP6.translate(TAS_NAME.replace("201412.nc", "201412-clim.nc"))
    assert clim.facets["time_range"] == "185001-201412-clim"


def test_variable_directory_after_the_version_is_a_layout_not_an_error():
    result = CMIP6.translate(
        "sample_data/cmip/CMIP6/CMIP/IPSL/IPSL-CM6A-LR/1pctCO2/r1i1p1f1/Omon/co3/gn/v20180727/co3/"
        "co3_Omon_IPSL-CM6A-LR_1pctCO2_r1i1p1f1_gn_195001-199912.nc"
    )
    assert result.corrections == []
    assert result.facets["version"] == "v20180727"


def test_esgf_dataset_id_with_data_node():
    result = CMIP6.translate(
        "CMIP6.CMIP.IPSL.IPSL-CM6A-LR.historical.r1i1p1f1.Amon.tas.gr.v20180803|esgf-data1.llnl.gov"
    )
    assert result.ok, result.error
    assert result.name == TAS_NAME.rsplit("/", 1)[0]
    assert result.filename is None


def test_esgf_file_id_is_named_like_its_path():
    file_id = (
        "CMIP6.CMIP.NCAR.CESM2.historical.r4i1p1f1.Amon.tas.gn.v20190308."
        "tas_Amon_CESM2_historical_r4i1p1f1_gn_185001-201412.nc"
    )
    path = (
        "//replica/CMIP6/CMIP/NCAR/CESM2/historical/r4i1p1f1/Amon/tas/gn/v20190308/"
        "tas_Amon_CESM2_historical_r4i1p1f1_gn_185001-201412.nc"
    )
    assert CMIP6.translate(file_id).name == CMIP6.translate(path).name
    assert CMIP6.translate(file_id).corrections == []


# -- correction rules: one real corpus example each ---------------------------------------------


def test_version_missing_gives_latest():
    result = CMIP6.translate(
        "CMIP6.CMIP.NCAR.CESM2.historical.r4i1p1f1.Amon.tas.gn."
        "tas_Amon_CESM2_historical_r4i1p1f1_gn_185001-201412.nc"
    )
    assert result.facets["version"] == "latest"
    assert "/gn/latest/tas_Amon_CESM2" in result.name
    assert rules(result) == ["version-missing"]


def test_esgf_publisher_files_directory_is_not_a_version():
    result = CMIP6.translate(
        "../CMIP6/CMIP/IPSL/IPSL-CM6A-LR/1pctCO2/r1i1p1f1/Omon/co3/gn/files/d20180605/"
        "co3_Omon_IPSL-CM6A-LR_1pctCO2_r1i1p1f1_gn_195001-199912.nc"
    )
    assert result.facets["activity_id"] == "CMIP"
    assert result.facets["version"] == "latest"
    assert rules(result) == ["version-missing"]


def test_bare_file_name_takes_activity_and_institution_from_rules():
    result = CMIP6.translate(
        "data/cmip6/o3_Amon_GFDL-ESM4_historical_r1i1p1f1_gr1_185001-194912.nc"
    )
    assert result.name == (
        "/CMIP6/CMIP/NOAA-GFDL/GFDL-ESM4/historical/r1i1p1f1/Amon/o3/gr1/latest/"
        "o3_Amon_GFDL-ESM4_historical_r1i1p1f1_gr1_185001-194912.nc"
    )
    assert rules(result) == [
        "activity-from-experiment",
        "institution-from-source",
        "version-missing",
    ]


def test_institution_rule_says_when_a_model_has_several_publishers():
    result = CMIP6.translate("tos_Omon_MPI-ESM1-2-HR_historical_r1i1p1f1_gn_185001.nc")
    message = next(c.message for c in result.corrections if c.rule == "institution-from-source")
    assert "'MPI-M'" in message and "DWD" in message


def test_version_directory_holding_the_file_is_used_outside_the_drs():
    result = CMIP6.translate(
        "v20191030/siconc_SImon_FGOALS-g3_piControl_r1i1p1f1_gn_080001-089912.nc"
    )
    assert result.facets["version"] == "v20191030"
    assert "version-missing" not in rules(result)


def test_source_and_experiment_swapped_in_the_file_name_are_put_back_from_the_path():
    result = CMIP6.translate(
        "/work/ik1017/CMIP6/data/CMIP6/CMIP/NASA-GISS/GISS-E2-1-G/historical/r1i1p1f1/Amon/ta/gn/"
        "v20180827/ta_Amon_historical_GISS-E2-1-G_r1i1p1f1_gn_185001-190012.nc"
    )
    assert result.filename == "ta_Amon_GISS-E2-1-G_historical_r1i1p1f1_gn_185001-190012.nc"
    assert result.facets["source_id"] == "GISS-E2-1-G"
    assert rules(result) == ["source-experiment-swapped"]
    assert "historical_GISS-E2-1-G" in result.corrections[0].message


def test_source_and_experiment_swapped_without_a_path_are_put_back_by_the_rule_tables():
    result = CMIP6.translate("sftlf_fx_hist-GHG_NorESM2-LM_r1i1p1f1_gn.nc")
    assert result.filename == "sftlf_fx_NorESM2-LM_hist-GHG_r1i1p1f1_gn.nc"
    assert result.facets["activity_id"] == "DAMIP"
    assert rules(result)[0] == "source-experiment-swapped"


def test_single_date_time_range_becomes_first_and_last_date():
    result = CMIP6.translate("tos_Omon_AWI-ESM-1-1-LR_historical_r1i1p1f1_gn_185001.nc")
    assert result.facets["time_range"] == "185001-185001"
    assert result.filename == "tos_Omon_AWI-ESM-1-1-LR_historical_r1i1p1f1_gn_185001-185001.nc"
    assert rules(result)[0] == "time-range-single-date"


def test_non_drs_file_name_is_rebuilt_from_the_global_attributes():
    result = CMIP6.translate("_historical_r1i1p1f1_gr_185001-185012.nc", DCPP_ATTRIBUTES)
    assert result.ok, result.error
    assert result.filename == (
        "tas_Amon_EC-Earth3_dcppA-hindcast_s1960-r2i1p1f1_gr_185001-185012.nc"
    )
    assert rules(result) == ["filename-from-attributes", "version-missing"]


def test_attributes_fill_activity_and_institution_without_rules():
    result = CMIP6.translate(DCPP_FILE, {**DCPP_ATTRIBUTES, "version": "v20201215"})
    assert result.name == (
        "/CMIP6/DCPP/EC-Earth-Consortium/EC-Earth3/dcppA-hindcast/s1960-r2i1p1f1/Amon/tas/gr/"
        f"v20201215/{DCPP_FILE}"
    )
    assert result.corrections == []


def test_esgf_style_version_attribute_without_the_v():
    result = CMIP6.translate(DCPP_FILE, {**DCPP_ATTRIBUTES, "version": "20201215"})
    assert result.facets["version"] == "v20201215"


def test_attribute_disagreeing_with_the_name_is_recorded_and_the_name_kept():
    result = CMIP6.translate(DCPP_FILE, {**DCPP_ATTRIBUTES, "grid_label": "gn"})
    assert result.facets["grid_label"] == "gr"
    assert rules(result) == ["attribute-mismatch", "version-missing"]
    assert "grid_label='gn'" in result.corrections[0].message


def test_several_activities_in_the_attribute_take_the_first():
    result = CMIP6.translate(
        "tas_Amon_EC-Earth3_ssp370_r1i1p1f1_gr_201501-210012.nc",
        {"activity_id": "ScenarioMIP AerChemMIP", "institution_id": "EC-Earth-Consortium"},
    )
    assert result.facets["activity_id"] == "ScenarioMIP"
    assert rules(result) == ["activity-first-of-many", "version-missing"]


def test_upper_case_attribute_names_and_byte_values_are_understood():
    attributes = {k.upper(): v.encode() for k, v in DCPP_ATTRIBUTES.items()}
    result = CMIP6.translate("_historical_r1i1p1f1_gr_185001-185012.nc", attributes)
    assert result.ok, result.error
    assert result.facets["member_id"] == "s1960-r2i1p1f1"


# the time coverage netcdf.naming_attributes derives from the DCPP file's time axis (first and
# last monthly means) and the frequency every CMIP6 file carries
DCPP_COVERAGE = {
    "frequency": "mon",
    "time_coverage_start": "1960-11-16T00:00:00",
    "time_coverage_end": "1961-10-16T12:00:00",
}


def test_rebuilt_file_name_takes_its_time_range_from_the_time_coverage():
    result = CMIP6.translate("odd.nc", {**DCPP_ATTRIBUTES, **DCPP_COVERAGE})
    assert result.filename == DCPP_FILE
    assert result.facets["time_range"] == "196011-196110"
    assert rules(result) == ["filename-from-attributes", "version-missing"]
    assert result.corrections[0].message.startswith(f"'odd.nc' -> '{DCPP_FILE}'")
    assert "time_coverage_start" in result.corrections[0].message


def test_time_range_from_the_time_axis_is_recorded(tmp_path):
    """Constructed: a CMOR-shaped monthly tas file renamed tas.nc, no time_coverage_*, its
    time axis January-December 1960 with cell bounds; the range comes from the axis."""
    import netCDF4

    from ndnsci_translators.netcdf import naming_attributes

    path = tmp_path / "tas.nc"
    with netCDF4.Dataset(path, "w") as ds:
        ds.setncatts({**DCPP_ATTRIBUTES, "frequency": "mon"})
        ds.createDimension("time", None)
        ds.createDimension("bnds", 2)
        time = ds.createVariable("time", "f8", ("time",))
        time.setncatts({"units": "days since 1960-01-01", "calendar": "360_day"})
        time.bounds = "time_bnds"
        time[:] = [15.0 + 30 * month for month in range(12)]
        ds.createVariable("time_bnds", "f8", ("time", "bnds"))[:] = [
            [30 * month, 30 * (month + 1)] for month in range(12)
        ]
        ds.createVariable("tas", "f4", ("time",))
    result = CMIP6.translate(str(path), naming_attributes(path))
    assert result.filename == "tas_Amon_EC-Earth3_dcppA-hindcast_s1960-r2i1p1f1_gr_196001-196012.nc"
    assert rules(result) == ["filename-from-attributes", "time-range-from-axis", "version-missing"]
    assert result.corrections[0].message.endswith("(time range from the time axis)")
    assert result.corrections[1].message == (
        "time range '196001-196012' from the time axis: first and last records "
        "1960-01-16T00:00:00 and 1960-12-16T00:00:00, written yyyymm as the DRS sets for "
        "frequency 'mon' (the file states no time_coverage_start/end)"
    )


def test_time_coverage_wins_over_a_range_in_the_old_name():
    result = CMIP6.translate(
        "_historical_r1i1p1f1_gr_185001-185012.nc", {**DCPP_ATTRIBUTES, **DCPP_COVERAGE}
    )
    assert result.facets["time_range"] == "196011-196110"


@pytest.mark.parametrize(
    ("frequency", "start", "end", "time_range"),
    [
        ("yr", "1960-07-02T00:00:00", "1969-07-02T00:00:00", "1960-1969"),
        ("dec", "1965-01-01T00:00:00", "1975-01-01T00:00:00", "1965-1975"),
        ("day", "1960-11-01T12:00:00", "1961-10-31T12:00:00", "19601101-19611031"),
        ("6hrPt", "1960-11-01T06:00:00", "1961-10-31T18:00:00", "196011010600-196110311800"),
        ("3hr", "2000-01-01T01:30:00", "2000-01-01T04:30:00", "200001010130-200001010430"),
        ("subhrPt", "2000-01-01T00:12:30", "2000-01-01T00:37:30", "20000101001230-20000101003730"),
        # climatologies, as CMOR 3 names them (its test_filename_time_range.py)
        ("monC", "2000-01-01T00:00:00", "2000-03-01T00:00:00", "200001-200002-clim"),
        ("1hrCM", "2000-01-01T00:00:00", "2000-01-01T00:50:00", "200001010000-200001010050-clim"),
    ],
)
def test_time_range_precision_follows_the_frequency(frequency, start, end, time_range):
    attributes = {
        **DCPP_ATTRIBUTES,
        "frequency": frequency,
        "time_coverage_start": start,
        "time_coverage_end": end,
    }
    result = CMIP6.translate("odd.nc", attributes)
    assert result.facets["time_range"] == time_range


def test_fixed_fields_get_no_time_range():
    attributes = {**DCPP_ATTRIBUTES, **DCPP_COVERAGE, "frequency": "fx", "table_id": "fx"}
    result = CMIP6.translate("odd_185001-185012.nc", {**attributes, "variable_id": "areacella"})
    assert result.filename == "areacella_fx_EC-Earth3_dcppA-hindcast_s1960-r2i1p1f1_gr.nc"


def test_missing_rebuild_attribute_is_named_in_the_error():
    attributes = {k: v for k, v in DCPP_ATTRIBUTES.items() if k != "grid_label"}
    result = CMIP6.translate("odd.nc", attributes)
    assert result.error.code == "not-drs"
    assert "(no grid_label attribute to rebuild it from)" in result.error.message
    assert "to rebuild" not in CMIP6.translate("odd.nc").error.message


@pytest.mark.parametrize(
    ("attributes", "score"),
    [
        (DCPP_ATTRIBUTES, 80),
        ({"MIP_ERA": b"CMIP6"}, 80),
        ({"project_id": "CMIP6"}, 80),
        ({"project_id": "CMIP5"}, 0),
        ({}, 0),
    ],
)
def test_guess_attributes(attributes, score):
    assert CMIP6.guess_attributes(attributes) == score


class _Hostile:
    def __str__(self):
        raise RuntimeError("no")


class _BrokenMapping(dict):
    def items(self):
        raise RuntimeError("no")


@pytest.mark.parametrize("attributes", [{"mip_era": _Hostile()}, _BrokenMapping()])
def test_hostile_attributes_never_raise(attributes):
    assert CMIP6.guess_attributes(attributes) == 0
    assert CMIP6.translate(TAS, attributes).ok


def test_auto_detection_names_a_cmip6_file_under_any_name_from_its_attributes():
    attributes = {**DCPP_ATTRIBUTES, **DCPP_COVERAGE}
    assert translate("/archive/run42/output.nc").error.code == "unknown-scheme"
    result = translate("/archive/run42/output.nc", attributes=attributes)
    assert result.scheme == "cmip6"
    assert result.filename == DCPP_FILE


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "attributes", "code", "hint"),
    [
        ("", None, "empty", "nothing to translate"),
        ("   ", None, "empty", "nothing to translate"),
        (
            "cl_Amon_CESM2_amip_r1i1p1f1_gn_195001-201412.nc.md5",
            None,
            "not-netcdf",
            "translate 'cl_Amon_CESM2_amip_r1i1p1f1_gn_195001-201412.nc'",
        ),
        ("tas_Amon_CESM2_amip_r1i1p1f1_gn_195001-201412.grib", None, "not-netcdf", "end in .nc"),
        (
            "/cmip6/Next_Generation/tas/ann/g025/tas_ann_IPSL-CM6A-LR_ssp585_r1i1p1f1_g025.nc",
            None,
            "derived-product",
            "cmip6-ng",
        ),
        ("tas_mon_IPSL-CM6A-LR_ssp126_r1i1p1f1_native.nc", None, "derived-product", "'native'"),
        (
            "CMIP6_GFDL-ESM4_Amon_historical-ssp585_r1i1p1f1_tas_gn_18500101-21000101.nc",
            None,
            "derived-product",
            "ESMValTool",
        ),
        (
            "areacella_ti-u-hxy-u_fx_glb_gn_PCMDI-test-1-0_historical_r1i1p1f1.nc",
            None,
            "cmip7-name",
            "CMIP7",
        ),
        (
            "tas_mon_IPSL-CM7A-LR_historical_r1i1p1f1_glb_g1_185001-201412.nc",
            None,
            "cmip7-name",
            "",
        ),
        (
            "sic_SImon_CCCma-CanESM5_ssp245_r13i1p2f1_2020.nc",
            None,
            "not-drs",
            "no grid label",
        ),
        (
            "o3_AERmon_MPI-ESM1-2-LR_historical_r1i1p1f1_gn_185001_zm.nc",
            None,
            "not-drs",
            "'_zm' after the time range",
        ),
        ("_historical_r1i1p1f1_gr_185001-185012.nc", None, "not-drs", "before member_id"),
        ("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc", None, "not-drs", "no member_id"),
        ("/CMIP6/CMIP/NCAR", None, "not-drs", "dataset directory"),
        ("CMIP6.CMIP.NCAR.CESM2", None, "not-drs", "ESGF CMIP6 id"),
        (DCPP_FILE, {**DCPP_ATTRIBUTES, "mip_era": "CMIP5"}, "not-cmip6", "'CMIP5'"),
        (
            f"/CMIP6/CMIP/IPSL/IPSL-CM6A-LR/historical/r1i1p1f1/Amon/pr/gr/v20180803/{TAS}",
            None,
            "inconsistent",
            "wrong directory",
        ),
        (
            f"CMIP6.CMIP.IPSL.IPSL-CM6A-LR.historical.r1i1p1f1.Amon.pr.gr.v20180803.{TAS}",
            None,
            "inconsistent",
            "variable_id 'pr'",
        ),
        ("tas_Amon_NewModel-1_historical_r1i1p1f1_gn_185001.nc", None, "missing-facet", "model"),
        ("tas_Amon_CESM2_newexp_r1i1p1f1_gn_185001.nc", None, "missing-facet", "experiment"),
        (DCPP_FILE, {**DCPP_ATTRIBUTES, "version": "bad"}, "invalid-attribute", "vYYYYMMDD"),
        (DCPP_FILE, {**DCPP_ATTRIBUTES, "activity_id": "XMIP"}, "invalid-attribute", "XMIP"),
        (
            "odd.nc",
            {**DCPP_ATTRIBUTES, "grid_label": "g025"},
            "invalid-attribute",
            "grid_label",
        ),
    ],
)
def test_what_cannot_be_named_gets_a_structured_error(text, attributes, code, hint):
    result = CMIP6.translate(text, attributes)
    assert not result.ok
    assert result.name is None
    assert result.error.code == code, result.error
    assert hint in result.error.message
    assert result.input == text
    assert tuple(result.facets) == FACET_KEYS


@pytest.mark.parametrize(
    "text",
    [
        "tas_Amon_CESM2_historical_r1i1p1f1_gn_185001-201412.nc\x00",
        "tas_Amon_CESM2_histor\udcffical_r1i1p1f1_gn_185001-201412.nc",
        "tas_Amon_CESM2_hist\nrical_r1i1p1f1_gn_185001-201412.nc",
        "../../../../etc/passwd.nc",
        "/" * 5000,
        "r1i1p1f1" * 1000 + ".nc",
        "CMIP6." * 100,
        "tas_Amon_CESM2_historical_r1i1p1f1_gn_185001-201412.nc/",
    ],
)
def test_hostile_input_never_raises_and_never_escapes_the_root(text):
    for attributes in (None, DCPP_ATTRIBUTES):
        result = CMIP6.translate(text, attributes)
        if result.ok:
            components = split_name(result.name)
            assert components[0] == "CMIP6"
            assert not {".", ".."} & set(components)
        else:
            assert result.error.code


# -- corpora ---------------------------------------------------------------------------------


DRS_TAIL = re.compile(
    r"([^/]+)/([^/]+)/([^/]+)/([^/]+)/((?:s\d{4}-)?r\d+i\d+p\d+f\d+)/([^/]+)/([^/]+)/([^/]+)/"
    r"(v\d{8}|latest)/(?:[^/]+/)?(?:[^/]+\.nc)?$"
)


def drs_components(path):
    """activity..version of a DRS path (file or dataset directory), None when not a DRS path."""
    match = DRS_TAIL.search(path)
    return None if match is None else list(match.groups())


def test_every_corpus_path_translates_and_agrees_with_the_path():
    checked = 0
    for path, _host, source, kind in PATHS:
        result = CMIP6.translate(path)
        assert result.ok, (path, source, result.error)
        assert (result.filename is None) == (kind == "dataset-dir"), path
        drs = drs_components(path)
        if drs is not None:
            facets = [result.facets[k] for k in FACET_KEYS[1:10]]
            assert facets == drs, path
            checked += 1
        if kind == "file" and not result.corrections:
            assert result.filename == path.rsplit("/", 1)[1]
    assert checked > 2000


def test_corpus_paths_that_needed_corrections_say_which():
    corrected = {tuple(rules(CMIP6.translate(row[0]))) for row in PATHS} - {()}
    assert corrected == {
        ("source-experiment-swapped",),
        ("version-missing",),
        ("activity-from-experiment", "institution-from-source", "version-missing"),
        ("activity-from-experiment", "institution-from-source"),
    }


# one representative of each class of odd name (third column of cmip6_malformed.tsv)
MALFORMED_CLASSES = {
    "CMIP6-like name with non-CMIP6 table 'ann' / grid 'g025' (e.g. ETH cmip6-ng archive)": (
        "/net/atmos/data/cmip6-ng/tas/ann/g025/tas_ann_IPSL-CM6A-LR_ssp585_r2i1p1f1_g025.nc",
        "derived-product",
    ),
    "cmip6-ng style name with '_native' instead of CMIP6 grid label": (
        "hfds_mon_IPSL-CM6A-LR_ssp585_r2i1p1f1_native.nc",
        "derived-product",
    ),
    "CMIP7-style branded-variable/region file name (MIP-DS7 DRS), not CMIP6": (
        "tas_mon_IPSL-CM7A-LR_historical_r2i1p1f1_glb_g1_185001-201412.nc",
        "cmip7-name",
    ),
    "ESMValTool/ESMValCore derived-output name (<project>_<dataset>_<mip>_<exp>_<ens>_<var>_<years>), not CMIP6 DRS": (  # noqa: E501
        "CMIP6_GFDL-ESM4_fx_historical_r1i1p1f1_areacella_gn.nc",
        "derived-product",
    ),
    "extra/other extension '.nc.md5'": (
        "siconc_SImon_MIROC6_historical_r1i1p1f1_gn_185001-194912.nc.md5",
        "not-netcdf",
    ),
    "extra/other extension '.nc.md5'; ensemble not a separate _-delimited rNiNpN field": (
        "tas_Amon_EC-Earth3_dcppA-hindcast_s1960-r2i1p1f1_gr_196011-196110.nc.md5",
        "not-netcdf",
    ),
    "contains dots in stem": (
        "CMIP6.CMIP.NCAR.CESM2.historical.r4i1p1f1.Amon.tas.gn.v20190308."
        "tas_Amon_CESM2_historical_r4i1p1f1_gn_185001-201412.nc",
        [],
    ),
    "no grid label after member_id; contains dots in stem": (
        "2.6.1_atm_amip_R2B5_r1i1p1f1_horizontalgrid.nc",
        "not-drs",
    ),
    "no grid label after member_id; unparsed": (
        "atm_amip-rad_R2B4_r1i1p1f1_atm_2d_ml_1990-1999.nc",
        "not-drs",
    ),
    "unparsed": (
        "volcello_Omon_GFDL-OM4p5B_omip1_r1i1p1f1_gn_176801.nc",
        [
            "time-range-single-date",
            "activity-from-experiment",
            "institution-from-source",
            "version-missing",
        ],
    ),
}


@pytest.mark.parametrize("reason", sorted(MALFORMED_CLASSES))
def test_one_representative_of_each_odd_name_class(reason):
    name, expected = MALFORMED_CLASSES[reason]
    assert [name, reason] == next([row[0], row[2]] for row in MALFORMED if row[0] == name), (
        "the representative must be a corpus line of that class"
    )
    result = CMIP6.translate(name)
    if isinstance(expected, str):
        assert result.error is not None and result.error.code == expected, result
    else:
        assert result.ok, result.error
        assert rules(result) == expected


def test_every_class_of_odd_name_has_a_representative():
    assert {row[2] for row in MALFORMED} == set(MALFORMED_CLASSES)


def test_every_odd_name_is_named_or_refused_with_a_reason():
    outcomes = {}
    for name, _source, reason in MALFORMED:
        result = CMIP6.translate(name)
        assert result.ok or (result.error.code and result.error.message), name
        outcomes.setdefault(reason, set()).add(result.error.code if result.error else "named")
    assert outcomes["extra/other extension '.nc.md5'"] == {"not-netcdf"}
    assert outcomes["unparsed"] == {"named", "not-drs"}


def test_round_trip_over_the_corpora():
    names = 0
    for row in PATHS + MALFORMED:
        result = CMIP6.translate(row[0])
        if not result.ok:
            continue
        back = CMIP6.reverse(result.name)
        assert back.ok, (row[0], back.error)
        assert (back.input, back.name) == (result.name, result.name)
        assert back.filename == result.filename
        assert back.facets == result.facets
        again = CMIP6.translate(result.name)
        assert again.name == result.name and again.corrections == []
        names += 1
    assert names > 2600


# -- reverse ---------------------------------------------------------------------------------


def test_reverse_gives_file_name_and_facets():
    back = CMIP6.reverse("ndn:" + TAS_NAME)
    assert back.ok
    assert back.name == TAS_NAME
    assert back.filename == TAS
    assert back.facets == CMIP6.translate(TAS_NAME).facets


@pytest.mark.parametrize(
    "name",
    [
        "/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/latest/tas/x.nc",
        "/CMIP6/CMIP/IPSL",
        TAS_NAME + "/extra",
        TAS_NAME.replace("/CMIP/", "/XMIP/"),
        TAS_NAME.replace("/Amon/tas/", "/Amon/pr/"),
        TAS_NAME.replace("201412.nc", "201412.nc4"),
        TAS_NAME.replace("185001-201412", "185001"),
        TAS_NAME.replace("/IPSL/", "/IP%2FSL/"),
        TAS_NAME + "/v=1/seg=0",
        "CMIP6/CMIP",
        "/CMIP6/" + "%ZZ",
    ],
)
def test_reverse_refuses_names_that_are_not_cmip6_names(name):
    back = CMIP6.reverse(name)
    assert not back.ok
    assert back.error.code == "invalid-name"
    assert back.input == name


# -- auto detection --------------------------------------------------------------------------


def test_guess_claims_cmip6_names_paths_and_ids():
    for text in (TAS, TAS_NAME, "CMIP6.CMIP.IPSL", "/CMIP6/CMIP/IPSL/", "s1960-r1i1p1f1"):
        assert CMIP6.guess(text) >= 90
    assert translate(TAS).scheme == "cmip6"


def test_guess_does_not_steal_cmip5_or_cms_names():
    cmip5 = [row[0] for row in rows("cmip5_paths.tsv")[1:]]
    cmip5 += [row[0] for row in rows("cmip5_malformed.tsv")]
    assert max(CMIP6.guess(text) for text in cmip5) == 0
    lfns = [row[0] for row in rows("cms_lfns.tsv")[1:]]
    assert max(CMIP6.guess(text) for text in lfns) == 0
