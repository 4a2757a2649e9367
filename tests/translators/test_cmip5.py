"""CMIP5 naming scheme: DRS file names, paths under any root, ESGF ids, attributes -> /CMIP5."""

import csv
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndnsci_translators import cmip5 as cmip5_module
from ndnsci_translators import get_translator, reverse, translate
from ndnsci_translators.cmip5 import FACET_KEYS, CMIP5Translator
from ndnsci_translators.names import build_name, split_name

DATA = Path(__file__).parents[1] / "data"
CORPORA = DATA / "corpora"
ARCHIVE = DATA / "netcdf" / "cmip5"
NAMING_DOC = Path(__file__).parents[2] / "docs" / "naming.md"
CMIP5 = CMIP5Translator()

TAS = "tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc"
TAS_NAME = f"/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/v20110101/tas/{TAS}"
# corrections of a bare file name: everything but the file name's own components is filled in
BARE = [
    "default-product",
    "institute-from-model",
    "frequency-from-table",
    "realm-from-table",
    "version-missing",
]


def rows(name):
    with open(CORPORA / name, newline="") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


PATHS = rows("cmip5_paths.tsv")
HEADER, PATHS = PATHS[0], PATHS[1:]
MALFORMED = rows("cmip5_malformed.tsv")
EVERY_LINE = [r[0] for r in PATHS] + [r[0] for r in MALFORMED]


def rules(result):
    return [c.rule for c in result.corrections]


def attributes_of(path):
    import netCDF4

    with netCDF4.Dataset(path) as ds:
        return {k: ds.getncattr(k) for k in ds.ncattrs()}


# --- the contract --------------------------------------------------------------------------


def test_registered_with_the_contract_facets_in_order():
    assert isinstance(get_translator("cmip5"), CMIP5Translator)
    assert CMIP5.scheme == "cmip5"
    assert CMIP5.root == "CMIP5"
    assert CMIP5.facet_keys == FACET_KEYS == (
        "activity", "product", "institute", "model", "experiment", "frequency", "realm",
        "table", "ensemble", "version", "variable", "time_range", "geo",
    )  # fmt: skip


def test_drs_path_under_any_root_is_named_by_its_components():
    for root in ("/badc/cmip5/data/cmip5", "", "./x", "%s", "...", "gs://bucket/cmip5"):
        result = translate(root + TAS_NAME.removeprefix("/CMIP5"))
        assert result.ok, result.error
        assert result.scheme == "cmip5"
        assert result.name == TAS_NAME
        assert result.filename == TAS
        assert result.corrections == []
        assert result.facets == {
            "activity": "CMIP5", "product": "output1", "institute": "MOHC", "model": "HadCM3",
            "experiment": "historical", "frequency": "mon", "realm": "atmos", "table": "Amon",
            "ensemble": "r1i1p1", "version": "v20110101", "variable": "tas",
            "time_range": "185001-200512", "geo": None,
        }  # fmt: skip
        assert list(result.facets) == list(FACET_KEYS)


def test_bare_file_name_gets_rules_and_defaults_as_the_registry_documents():
    result = translate(TAS)
    assert result.name == (
        "/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/latest/tas/" + TAS
    )
    assert rules(result) == BARE
    assert result.facets["version"] == "latest"


@pytest.mark.parametrize(
    ("time", "facet"),
    [
        ("1850-2005", "1850-2005"),
        ("185001-200512", "185001-200512"),
        ("18500101-20051231", "18500101-20051231"),
        ("1850010100-2005123118", "1850010100-2005123118"),
        ("185001010000-200512311800", "185001010000-200512311800"),
        ("18500101000000-20051231180000", "18500101000000-20051231180000"),
        ("185001-200512-clim", "185001-200512-clim"),
    ],
)
def test_every_time_precision_and_climatology(time, facet):
    result = CMIP5.translate(f"tas_Amon_HadCM3_historical_r1i1p1_{time}.nc")
    assert result.ok, result.error
    assert result.facets["time_range"] == facet
    assert result.filename == f"tas_Amon_HadCM3_historical_r1i1p1_{time}.nc"


def test_geographic_suffix_is_kept_and_reversible():
    name = "tas_Amon_HadCM3_historical_r1i1p1_185001-200512_g-lat20S20Nlon170W130W-areaavg.nc"
    result = CMIP5.translate(name)
    assert result.ok, result.error
    assert result.facets["geo"] == "g-lat20S20Nlon170W130W-areaavg"
    assert result.facets["time_range"] == "185001-200512"
    assert result.filename == name
    assert CMIP5.reverse(result.name).facets == result.facets


def test_fx_file_has_no_time_range_and_realm_from_its_variable():
    result = CMIP5.translate("areacello_fx_GFDL-ESM2G_historical_r0i0p0.nc")
    assert result.ok, result.error
    assert result.facets["time_range"] is None
    assert result.facets["frequency"] == "fx"
    assert result.facets["realm"] == "ocean"
    assert result.facets["institute"] == "NOAA-GFDL"


def test_realm_rule_knows_ocean_biogeochemistry():
    omon = CMIP5.translate("fgco2_Omon_CanESM2_esmHistorical_r1i1p1_185001-200512.nc")
    assert omon.facets["realm"] == "ocnBgchem"
    assert (
        CMIP5.translate("tos_Omon_CanESM2_historical_r1i1p1_185001-200512.nc").facets["realm"]
        == "ocean"
    )


def test_file_name_case_is_canonicalised():
    result = CMIP5.translate("tas_AMON_fio-esm_Historical_R1I1P1_185001-200512.nc")
    assert result.ok, result.error
    assert result.filename == "tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc"
    assert rules(result)[:4] == ["case-fix"] * 4
    assert result.facets["institute"] == "FIO"


def test_unknown_model_takes_its_institute_from_the_path():
    path = "output/MPI-M/ECHAM6-MPIOM-XX/rcp45/mon/ocean/tos/r1i1p1/tos_Omon_ECHAM6-MPIOM-XX_rcp45_r1i1p1_186001-186012.nc"  # noqa: E501
    result = CMIP5.translate(path)
    assert result.ok, result.error
    assert result.facets["institute"] == "MPI-M"
    assert result.facets["product"] == "output"
    assert rules(result) == ["version-missing"]


def test_unknown_model_without_institute_is_an_error():
    result = CMIP5.translate("tas_Amon_MyModel_historical_r1i1p1_185001-200512.nc")
    assert result.error.code == "unknown-institute"
    assert "institute_id" in result.error.message


def test_esgf_search_id_with_data_node():
    dataset = "cmip5.output1.MOHC.HadCM3.historical.mon.atmos.Amon.r1i1p1.v20110101"
    result = CMIP5.translate(f"{dataset}.{TAS}|esgf-data1.ceda.ac.uk")
    assert result.ok, result.error
    assert result.name == TAS_NAME
    assert result.corrections == []


def test_dirs_and_file_name_disagreeing_the_file_name_wins():
    path = "output1/MOHC/HadCM3/historical/mon/atmos/Omon/r2i1p1/v20110101/pr/" + TAS
    result = CMIP5.translate(path)
    assert result.name == TAS_NAME
    assert rules(result) == ["dir-file-mismatch"] * 3
    messages = " ".join(c.message for c in result.corrections)
    assert "'Omon'" in messages and "'r2i1p1'" in messages and "'pr'" in messages


def test_unrecognised_directory_inside_the_drs_tree_is_ignored_and_recorded():
    result = CMIP5.translate(TAS_NAME.replace("/tas/", "/tas/old/").removeprefix("/CMIP5"))
    assert result.name == TAS_NAME
    assert rules(result) == ["dir-ignored"]


# --- the corpora -----------------------------------------------------------------------------


def test_glade_rows_agree_with_the_catalog_ground_truth():
    """Every gt_* column agrees, except two documented artefacts of the GLADE catalog builder.

    The builder finds the realm with the regex ``aerosol|atmos|land|landIce|...`` so a
    ``landIce`` directory becomes ``land``, and it writes ``v0`` when a path has no version;
    the name keeps the DRS realm and uses the documented default ``latest`` (docs/naming.md).
    """
    keys = [h.removeprefix("gt_") for h in HEADER[3:]]
    checked = deviations = 0
    for row in PATHS:
        if not row[3]:
            continue
        truth = dict(zip(keys, row[3:], strict=True))
        truth["time_range"] = truth.pop("time") or None
        result = CMIP5.translate(row[0])
        assert result.ok, (row[0], result.error)
        got = {k: result.facets[k] for k in truth}
        if truth["realm"] == "land" and got["realm"] == "landIce":
            assert "/landIce/" in row[0]
            truth["realm"] = "landIce"
            deviations += 1
        if truth["version"] == "v0":
            assert got["version"] == "latest" and "version-missing" in rules(result)
            truth["version"] = "latest"
            deviations += 1
        assert got == truth, row[0]
        checked += 1
    assert checked == 2889
    assert deviations == 275


def test_glade_output_product_is_kept():
    result = CMIP5.translate(
        "/glade/collections/cmip/cmip5/output/CCCma/CanCM4/historical/mon/atmos/r10i1p1/"
        "v20130331/hfls/hfls_Amon_CanCM4_historical_r10i1p1_196101-200512.nc"
    )
    assert result.facets["product"] == "output"
    assert result.name.startswith("/CMIP5/output/CCCma/CanCM4/historical/mon/atmos/Amon/")
    assert result.corrections == []


def _named_or_refused(line):
    """What is wrong with the result for ``line`` (None when it is a name or a clear refusal)."""
    result = CMIP5.translate(line)
    if result.scheme != "cmip5" or result.input != line or result.ok == (result.error is not None):
        return "not a well-formed result"
    if not result.ok:
        if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", result.error.code) is None:
            return f"error code {result.error.code!r}"
        return None if len(result.error.message) > 20 else "error message too short"
    if list(result.facets) != list(FACET_KEYS) or len(split_name(result.name)) != 12:
        return "facets or name components wrong"
    return None if result.name.endswith("/" + result.filename) else "file name not last"


def test_every_corpus_line_is_named_or_refused_with_a_reason():
    problems = {line: _named_or_refused(line) for line in EVERY_LINE}
    assert {line: why for line, why in problems.items() if why} == {}
    assert len(EVERY_LINE) == 4828 + 675


def test_all_cmip5_paths_are_named():
    failed = [r[0] for r in PATHS if not CMIP5.translate(r[0]).ok]
    assert failed == []


def test_every_name_round_trips_through_reverse():
    for line in EVERY_LINE:
        result = CMIP5.translate(line)
        if not result.ok:
            continue
        back = reverse(result.name)
        assert back.ok, (line, back.error)
        assert back.input == result.name
        assert back.name == result.name
        assert back.filename == result.filename
        assert back.facets == result.facets, line


def test_names_are_what_build_name_gives():
    for line in EVERY_LINE:
        result = CMIP5.translate(line)
        if result.ok:
            assert result.name == build_name(split_name(result.name))


def test_fast_tier_and_general_parser_agree():
    fast = 0
    for line in EVERY_LINE:
        quick = cmip5_module._translate_fast(line)
        if quick is None:
            continue
        fast += 1
        assert quick.to_dict() == cmip5_module._translate_slow(line, None).to_dict(), line
    assert fast > 0.9 * len(PATHS)


class OK(NamedTuple):
    name: str
    rules: list[str]


class ERR(NamedTuple):
    code: str
    says: str  # a fragment of the message


# One or more real lines for every class of problem in cmip5_malformed.tsv (column 3, with
# quoted specifics folded); test_malformed_classes_are_all_covered keeps the list complete.
MALFORMED_CASES = [
    ("//cmip5_css02_data/cmip5/output1/INM/inmcm4/historical/mon/atmos/Amon/r1i1p1/tas/1/tas_Amon_inmcm4_historical_r1i1p1_185001-200512.nc",
     OK("/CMIP5/output1/INM/inmcm4/historical/mon/atmos/Amon/r1i1p1/v1/tas/tas_Amon_inmcm4_historical_r1i1p1_185001-200512.nc",
        ["version-format"])),
    ("tos_day_HadGEM2-ES_rcp85_r1i1p1_20051201-20101130.nc.1",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/rcp85/day/ocean/day/r1i1p1/latest/tos/tos_day_HadGEM2-ES_rcp85_r1i1p1_20051201-20101130.nc",
        ["extension", *BARE])),
    ("co3_Oyr_HadGEM2-ES_esmControl_r1i1p1_2078-2100.nco",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/esmControl/yr/ocnBgchem/Oyr/r1i1p1/latest/co3/co3_Oyr_HadGEM2-ES_esmControl_r1i1p1_2078-2100.nc",
        ["extension", *BARE])),
    ("mrsos_day_HadGEM2-ES_rcp45_r1i1p1_20051201-20151130.nc.md5", ERR("sidecar-file", ".md5")),
    ("tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc.html", ERR("sidecar-file", ".html")),
    ("/badc/cmip5/data/cmip5/output1/INM/inmcm4/rcp45/mon/ocean/Omon/r1i1p1/latest/zostoga/zostoga_Omon_inmcm4_rcp45_r1i1p1_200601-210012.nc",
     OK("/CMIP5/output1/INM/inmcm4/rcp45/mon/ocean/Omon/r1i1p1/latest/zostoga/zostoga_Omon_inmcm4_rcp45_r1i1p1_200601-210012.nc",
        [])),
    ("/Lmon/r1i1p1/latest/rh/rh_Lmon_HadGEM2-ES_historical_r1i1p1_193412-195911.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/historical/mon/land/Lmon/r1i1p1/latest/rh/rh_Lmon_HadGEM2-ES_historical_r1i1p1_193412-195911.nc",
        BARE[:-1])),
    ("test_data/group_workspaces/jasmin2/cp4cds1/vol1/data/c3s-cmip5/output1/ICHEC/EC-EARTH/historical/day/atmos/day/r1i1p1/tas/v20131231/tas_day_EC-EARTH_historical_r1i1p1_18500101-18591231.nc",
     OK("/CMIP5/output1/ICHEC/EC-EARTH/historical/day/atmos/day/r1i1p1/v20131231/tas/tas_day_EC-EARTH_historical_r1i1p1_18500101-18591231.nc",
        [])),
    ("esg_dataroot/cmip5/output1/MOHC/HadGEM2-ES/piControl/day/land/day/r1i1p1/v2/mrro/mrro_day_HadGEM2-ES_piControl_r1i1p1_19791201-19891130.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/piControl/day/land/day/r1i1p1/v2/mrro/mrro_day_HadGEM2-ES_piControl_r1i1p1_19791201-19891130.nc",
        [])),
    ("regridded_tos_day_CMCC-CESM_historical_r1i1p1_18680101-18731231.nc",
     ERR("not-drs-filename", "leading field(s) 'regridded'")),
    ("out_fgco2_Omon_CanESM2_esmHistorical_r1i1p1_185001-200512.nc",
     ERR("not-drs-filename", "leading field(s) 'out'")),
    ("./cmip5/output1/MOHC/HadGEM2-ES/historical/6hr/atmos/6hrPlev/r1i1p1/files/psl_20101006/psl_6hrPlev_HadGEM2-ES_historical_r1i1p1_194912010600-195012010000.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/historical/6hr/atmos/6hrPlev/r1i1p1/v20101006/psl/psl_6hrPlev_HadGEM2-ES_historical_r1i1p1_194912010600-195012010000.nc",
        ["drslib-version"])),
    (".../r1i1p1/files/tas_20100101/tas_day_HadCM3_1pctto4x_r1i1p1_2001123114-2004010104.nc",
     OK("/CMIP5/output1/MOHC/HadCM3/1pctto4x/day/atmos/day/r1i1p1/v20100101/tas/tas_day_HadCM3_1pctto4x_r1i1p1_2001123114-2004010104.nc",
        ["drslib-version", *BARE[:-1]])),
    ("cmip5.output1.FIO.FIO-ESM.historical.mon.atmos.Amon.r1i1p1.v20121010.tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
     OK("/CMIP5/output1/FIO/FIO-ESM/historical/mon/atmos/Amon/r1i1p1/v20121010/tas/tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
        [])),
    ("cmip5.output1.FIO.FIO-ESM.historical.mon.atmos.Amon.r1i1p1.tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
     OK("/CMIP5/output1/FIO/FIO-ESM/historical/mon/atmos/Amon/r1i1p1/latest/tas/tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
        ["version-missing"])),
    ("cmip5.output1.FIO.fio-esm.historical.mon.atmos.Amon.r1i1p1.v20121010.tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
     OK("/CMIP5/output1/FIO/FIO-ESM/historical/mon/atmos/Amon/r1i1p1/v20121010/tas/tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
        ["dir-case-mismatch"])),
    ("agessc_OmonOnRho_NorESM1-M_piControl_r1i1p1_070001-070312.nc",
     ERR("unknown-mip-table", "'OmonOnRho' is not a CMIP5 MIP table")),
    ("/glade/collections/cmip/cmip5/output1/INM/inmcm4/rcp85/3hr/atmos/3hr/r1i1p1/v20110323/tas/tas_3hr_inmcm4_rcp85_r1i1p1_2026010103-2026123121.nc",
     OK("/CMIP5/output1/INM/inmcm4/rcp85/3hr/atmos/3hr/r1i1p1/v20110323/tas/tas_3hr_inmcm4_rcp85_r1i1p1_2026010103-2026123121.nc",
        [])),
    ("bfe_Omon_MPI-ESM_rr002i2005p3_200601-209912.nc",
     ERR("not-drs-filename", "runs the experiment into the ensemble")),
    ("cct_Amon_HadGEM2-ES_piControl_r1i1p1.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/piControl/mon/atmos/Amon/r1i1p1/latest/cct/cct_Amon_HadGEM2-ES_piControl_r1i1p1.nc",
        BARE)),
    ("ESGFFile:cmip5/output1/MPI-M/MPI-ESM-MR/historical/fx/atmos/fx/r0i0p0/v20120503/areacella_fx_MPI-ESM-MR_historical_r0i0p0.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-MR/historical/fx/atmos/fx/r0i0p0/v20120503/areacella/areacella_fx_MPI-ESM-MR_historical_r0i0p0.nc",
        [])),
    ("areacella_fx_CanESM2_historical_r0i0p0.nc",
     OK("/CMIP5/output1/CCCma/CanESM2/historical/fx/atmos/fx/r0i0p0/latest/areacella/areacella_fx_CanESM2_historical_r0i0p0.nc",
        BARE)),
    ("/glade/collections/cmip/cmip5/output/CCCma/CanCM4/historical/mon/atmos/r10i1p1/v20130331/hfls/hfls_Amon_CanCM4_historical_r10i1p1_196101-200512.nc",
     OK("/CMIP5/output/CCCma/CanCM4/historical/mon/atmos/Amon/r10i1p1/v20130331/hfls/hfls_Amon_CanCM4_historical_r10i1p1_196101-200512.nc",
        [])),
    ("/work/mh1007/CMOR/MPI-GE/output1/MPI-M/MPI-ESM/piControl/mon/atmos/prsn/r001i1850p3/v20190123/prsn_Amon_MPI-ESM_piControl_r001i1850p3_310001-319912.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM/piControl/mon/atmos/Amon/r001i1850p3/v20190123/prsn/prsn_Amon_MPI-ESM_piControl_r001i1850p3_310001-319912.nc",
        [])),
    ("clt_day_IPSL-CM5A-LR_decadal_S19630101_r1i1p1_19630101-19721231.nc",
     ERR("not-drs-filename", "start-date field 'S19630101'")),
    ("cordex.output.EUR-11.KNMI.MOHC-HadGEM2-ES.historical.r1i1p1.RACMO22E.v2.mon.tas.v20160620.tas_EUR-11_MOHC-HadGEM2-ES_historical_r1i1p1_KNMI-RACMO22E_v2_mon_195001-195012.nc",
     ERR("other-project", "project 'cordex'")),
    ("%s/output1/MOHC/HadCM3/1pctto4x/day/atmos/day/r1i1p1/v20100101/tas/tas_day_HadCM3_1pctto4x_r1i1p1_2004010104-2005123119.nc",
     OK("/CMIP5/output1/MOHC/HadCM3/1pctto4x/day/atmos/day/r1i1p1/v20100101/tas/tas_day_HadCM3_1pctto4x_r1i1p1_2004010104-2005123119.nc",
        [])),
    ("o3_Amon_HadGEM2-ES_historical_r1i1p1_gn_193412-195911.nc",
     ERR("not-drs-filename", "grid label 'gn'")),
    ("pr_day_CanESM2_rcp85_r1i1p1_na10kgrid_qm-moving-50bins-detrend_2095.nc",
     ERR("not-drs-filename", "extra field(s) 'na10kgrid_qm-moving-50bins-detrend_2095'")),
    ("cmip5.output1.MOHC.HadGEM2-ES.piControl.day.land.day.r1i1p1.v2.mrro_day_HadGEM2-ES_piControl_r1i1p1_19791201-19891130.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/piControl/day/land/day/r1i1p1/v2/mrro/mrro_day_HadGEM2-ES_piControl_r1i1p1_19791201-19891130.nc",
        [])),
    ("CMIP5_GFDL-ESM2G_Amon_historical_r1i1p1_T2Ms_pr_2000-2002.nc",
     ERR("not-drs-filename", "extra field(s) 'T2Ms_pr_2000-2002'")),
    ("cmip5.output1.MOHC.HadGEM2-CC.rcp85.mon.atmos.Amon.r1i1p1.tas_Amon_HadGEM2-CC_rcp85_r1i1p1_200512-203011.nc_1",
     OK("/CMIP5/output1/MOHC/HadGEM2-CC/rcp85/mon/atmos/Amon/r1i1p1/latest/tas/tas_Amon_HadGEM2-CC_rcp85_r1i1p1_200512-203011.nc",
        ["extension", "version-missing"])),
    ("/glade/collections/cmip/cmip5/output1/MOHC/HadGEM2-ES/piControl/fx/atmos/fx/r1i1p1/v20110315/areacella/areacella_fx_HadGEM2-ES_piControl_r1i1p1.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/piControl/fx/atmos/fx/r1i1p1/v20110315/areacella/areacella_fx_HadGEM2-ES_piControl_r1i1p1.nc",
        [])),
    ("./tests/sample_data/cmip/cmip5/output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/cfMon/r1i1p1/v20120503/fgco2/fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc",
     OK("/CMIP5/output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/Omon/r1i1p1/v20120503/fgco2/fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc",
        ["dir-file-mismatch"])),
    ("BCCAQv2+ANUSPLIN300_CCSM4_historical+rcp45_r1i1p1_1950-2100_tg_mean_YS.nc",
     ERR("not-drs-filename", "is field 4 of 8")),
    ("arag_Oyr_HadGEM2-ES_rcp45_r1i1p1_202512010130-203011302230.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/rcp45/yr/ocnBgchem/Oyr/r1i1p1/latest/arag/arag_Oyr_HadGEM2-ES_rcp45_r1i1p1_202512010130-203011302230.nc",
        BARE)),
    ("//cmip5_css02_data/cmip5/output1/FIO/fio-esm/historical/mon/atmos/Amon/r1i1p1/v20121010/tas/tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
     OK("/CMIP5/output1/FIO/FIO-ESM/historical/mon/atmos/Amon/r1i1p1/v20121010/tas/tas_Amon_FIO-ESM_historical_r1i1p1_185001-200512.nc",
        ["dir-case-mismatch"])),
    ("/glade/collections/cmip/cmip5/output1/IPSL/IPSL-CM5A-MR/historical/6hr/atmos/6hrLev/r1i1p1/v20120114/ua/ua_6hrLev_IPSL-CM5A-MR_historical_r1i1p1_1940010103-1850010100.nc",
     OK("/CMIP5/output1/IPSL/IPSL-CM5A-MR/historical/6hr/atmos/6hrLev/r1i1p1/v20120114/ua/ua_6hrLev_IPSL-CM5A-MR_historical_r1i1p1_1940010103-1850010100.nc",
        [])),
    ("psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_19790101-19791231.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-LR/amip/6hr/atmos/6hrPlev/r1i1p1/latest/psl/psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_19790101-19791231.nc",
        BARE)),
    ("zos_Omon_bcc-csm1-1_rcp85_r1i1p1_200601.nc",
     OK("/CMIP5/output1/BCC/bcc-csm1-1/rcp85/mon/ocean/Omon/r1i1p1/latest/zos/zos_Omon_bcc-csm1-1_rcp85_r1i1p1_200601-200601.nc",
        ["time-range-single-date", *BARE])),
    ("clmcalipso_cf3hr_MPI-ESM-LR_amip_r1i1p1_200810221030.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-LR/amip/3hr/atmos/cf3hr/r1i1p1/latest/clmcalipso/clmcalipso_cf3hr_MPI-ESM-LR_amip_r1i1p1_200810221030-200810221030.nc",
        ["time-range-single-date", *BARE])),
    ("novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/rcp45/mon/atmos/Amon/r1i1p1/latest/novar1/novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc",
        BARE)),
    ("psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_1979010100-197912311800.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-LR/amip/6hr/atmos/6hrPlev/r1i1p1/latest/psl/psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_1979010100-197912311800.nc",
        BARE)),
    ("psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_19791231170001-19791231190001.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-LR/amip/6hr/atmos/6hrPlev/r1i1p1/latest/psl/psl_6hrPlev_MPI-ESM-LR_amip_r1i1p1_19791231170001-19791231190001.nc",
        BARE)),
    ("volcello_Ofx_HadGEM3-GC31-LL_historical_r0i0p0_gn.nc",
     ERR("cmip6-name", "use scheme cmip6")),
    ("tnt_sites_HadGEM2-A_tamip200907_r16i3p1_20090802180000-2009080717301800.nc",
     ERR("bad-time-range", "'2009080717301800' has 16 digits")),
    ("/glade/collections/cmip/cmip5/output1/NASA-GISS/GISS-E2-R/piControl/fx/atmos/fx/r0i0p142/v20130312/areacella/areacella_fx_GISS-E2-R_piControl_r0i0p142.nc",
     OK("/CMIP5/output1/NASA-GISS/GISS-E2-R/piControl/fx/atmos/fx/r0i0p142/v20130312/areacella/areacella_fx_GISS-E2-R_piControl_r0i0p142.nc",
        [])),
    ("/glade/collections/cmip/cmip5/output1/NASA-GISS/GISS-E2-R/piControl/fx/atmos/fx/r0i0p141/v20130312/areacella/areacella_fx_GISS-E2-R_piControl_r0i0p141.nc",
     OK("/CMIP5/output1/NASA-GISS/GISS-E2-R/piControl/fx/atmos/fx/r0i0p141/v20130312/areacella/areacella_fx_GISS-E2-R_piControl_r0i0p141.nc",
        [])),
    ("tas_amsterdam_CMIP5_CanESM2_Amon_historical_r1i1p1_tas_1850-2000.nc",
     ERR("not-drs-filename", "leading field(s) 'tas_amsterdam'")),
    ("gridspec_atmos_fx_MPI-ESM-MR_historical_r0i0p0.nc",
     OK("/CMIP5/output1/MPI-M/MPI-ESM-MR/historical/fx/atmos/fx/r0i0p0/latest/gridspec/gridspec_atmos_fx_MPI-ESM-MR_historical_r0i0p0.nc",
        ["default-product", "institute-from-model", "frequency-from-table", "version-missing"])),
    ("zos_Omon_bcc-csm1-1_rcp85_r1i1p1_200601.nc.md5", ERR("sidecar-file", "publish the .nc")),
    ("novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc",
     OK("/CMIP5/output1/MOHC/HadGEM2-ES/rcp45/mon/atmos/Amon/r1i1p1/latest/novar1/novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc",
        ["clim-suffix", *BARE])),
    ("pr_day_MPI-ESM-LR_decadal_series1_S19610101_r1i1p1_19610101-19701231.nc",
     ERR("not-drs-filename", "start-date field 'S19610101'")),
    ("_r0i0p0.nc", ERR("not-drs-filename", "is field 2 of 2")),
]  # fmt: skip


def _problem_class(reason):
    return re.sub(r"'[^']*'", "'…'", reason)


def test_malformed_classes_are_all_covered():
    reason = {name: why for name, _, why in MALFORMED}
    classes = {_problem_class(why) for why in reason.values()}
    covered = {_problem_class(reason[line]) for line, _ in MALFORMED_CASES}
    assert covered == classes
    assert len(classes) == 40


@pytest.mark.parametrize(("line", "expected"), MALFORMED_CASES)
def test_malformed_line_outcome(line, expected):
    result = CMIP5.translate(line)
    if isinstance(expected, ERR):
        assert not result.ok
        assert result.error.code == expected.code
        assert expected.says in result.error.message
    else:
        assert result.ok, result.error
        assert result.name == expected.name
        assert rules(result) == expected.rules


# --- the real sample archive ------------------------------------------------------------------

ARCHIVE_FILES = sorted(ARCHIVE.rglob("*.nc"))


def test_sample_archive_has_the_33_files():
    assert len(ARCHIVE_FILES) == 33


@pytest.mark.parametrize("path", ARCHIVE_FILES, ids=lambda p: p.name)
def test_sample_archive_translates_and_attributes_agree(path):
    text = str(path)
    plain = CMIP5.translate(text)
    with_attributes = CMIP5.translate(text, attributes_of(path))
    if path.name == "odd_file.nc":
        assert plain.error.code == with_attributes.error.code == "not-drs-filename"
        return
    assert plain.ok, plain.error
    assert (with_attributes.name, with_attributes.facets) == (plain.name, plain.facets)
    assert rules(with_attributes) == rules(plain)  # product 'output' is CMOR's: no mismatch
    drs = path.relative_to(ARCHIVE).parts
    assert plain.name == "/CMIP5/" + "/".join(
        drs if drs[6] != "cfMon" else (*drs[:6], "Omon", *drs[7:])
    )


def test_bnu_esm_omon_files_under_cfmon_are_named_by_their_table():
    path = next(p for p in ARCHIVE_FILES if p.name.startswith("fgco2_Omon_BNU-ESM_esmControl"))
    result = CMIP5.translate(str(path), attributes_of(path))
    assert result.facets["table"] == "Omon"
    assert rules(result) == ["dir-file-mismatch"]
    assert "'cfMon'" in result.corrections[0].message


@pytest.mark.parametrize("path", ARCHIVE_FILES[1:], ids=lambda p: p.name)
def test_file_name_and_attributes_give_the_path_components(path):
    """A bare file name plus its header gives the same name as its DRS path, but the version."""
    from_path = CMIP5.translate(str(path))
    result = CMIP5.translate(path.name, attributes_of(path))
    assert result.ok, result.error
    assert result.name == from_path.name.replace(from_path.facets["version"], "latest")
    assert rules(result) == ["product-output", "version-missing"]


# --- attributes -------------------------------------------------------------------------------

CANCM4 = "hfls_Amon_CanCM4_historical_r4i1p1_196101-200512.nc"
CANCM4_ATTRIBUTES = {
    "project_id": "CMIP5",
    "product": "output",
    "institute_id": "CCCma",
    "model_id": "CanCM4",
    "experiment_id": "historical",
    "frequency": "mon",
    "modeling_realm": "atmos",
    "table_id": "Table Amon (31 January 2011) 53b766a395ac41696af40aab76a49ae",
    "realization": np.int32(4),
    "initialization_method": np.int32(1),
    "physics_version": np.int32(1),
}


def test_attributes_fill_what_the_file_name_lacks():
    result = CMIP5.translate(CANCM4, CANCM4_ATTRIBUTES)
    assert result.ok, result.error
    assert result.facets["institute"] == "CCCma"
    assert rules(result) == ["product-output", "version-missing"]


@pytest.mark.parametrize(
    "value",
    [
        "CCCma",
        b"CCCma",
        np.str_("CCCma"),
        np.array(["CCCma"]),
        np.bytes_(b"CCCma"),
        "  CCCma\n",
    ],
)
def test_attribute_values_of_any_netcdf_type(value):
    result = CMIP5.translate(CANCM4, {**CANCM4_ATTRIBUTES, "institute_id": value})
    assert result.facets["institute"] == "CCCma"


def test_ensemble_attributes_as_arrays_and_floats_and_upper_case_keys():
    attributes = {k.upper(): v for k, v in CANCM4_ATTRIBUTES.items()}
    attributes["REALIZATION"] = np.array([4])
    attributes["PHYSICS_VERSION"] = 1.0
    result = CMIP5.translate(CANCM4, attributes)
    assert result.ok, result.error
    assert "attribute-mismatch" not in rules(result)


def test_attribute_disagreement_is_recorded_and_the_name_wins():
    # real files: the CNRM-CM5 r7i1p1 file named with the attributes of its r8i1p1 sibling
    r7, r8 = (
        next(p for p in ARCHIVE_FILES if p.name.startswith(f"hfls_Amon_CNRM-CM5_historical_{e}"))
        for e in ("r7i1p1", "r8i1p1")
    )
    result = CMIP5.translate(str(r7), attributes_of(r8))
    assert result.facets["ensemble"] == "r7i1p1"
    assert rules(result) == ["attribute-mismatch"]
    assert "'r8i1p1'" in result.corrections[0].message


def test_attributes_disagreeing_with_the_path_are_recorded():
    attributes = {**CANCM4_ATTRIBUTES, "institute_id": "MOHC", "frequency": "day"}
    path = "output1/CCCma/CanCM4/historical/mon/atmos/Amon/r4i1p1/v20120612/hfls/" + CANCM4
    result = CMIP5.translate(path, attributes)
    assert result.facets["institute"] == "CCCma"
    assert result.facets["frequency"] == "mon"
    assert rules(result) == ["attribute-mismatch", "attribute-mismatch"]


def test_product_attribute_output2_is_used():
    result = CMIP5.translate(CANCM4, {**CANCM4_ATTRIBUTES, "product": "output2"})
    assert result.facets["product"] == "output2"


def test_modeling_realm_lists_several_realms():
    attributes = {"modeling_realm": "landIce land"}
    result = CMIP5.translate("snw_day_HadGEM2-ES_rcp85_r1i1p1_20051201-20101130.nc", attributes)
    assert result.facets["realm"] == "landIce"
    assert "realm-from-table" not in rules(result)


class Hostile:
    def __str__(self):
        raise RuntimeError("no")

    def tolist(self):
        raise RuntimeError("no")


class BrokenMapping(dict):
    def items(self):
        raise RuntimeError("no")


@pytest.mark.parametrize(
    "attributes",
    [
        {},
        {"institute_id": Hostile()},
        {"institute_id": None, "model_id": 3.5, "table_id": [], "realization": "x"},
        {"institute_id": np.array(["A", "B"]), 7: "key not a string"},
        {"institute_id": "bad id with spaces", "frequency": "weekly", "modeling_realm": "space"},
        {"institute_id": "CC\x00Cma", "product": "\udcff"},
        BrokenMapping(),
    ],
)
def test_hostile_attributes_are_ignored(attributes):
    result = CMIP5.translate(CANCM4, attributes)
    assert result.ok, result.error
    assert result.facets["institute"] == "CCCma"


# --- hostile input ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty-input"),
        ("   ", "empty-input"),
        ("a" * 10_000, "input-too-long"),
        ("/" * 5000 + TAS, "input-too-long"),
        ("tas\x00_Amon_HadCM3_historical_r1i1p1_185001-200512.nc", "control-character"),
        (TAS_NAME.replace("/tas/", "/t\x07s/"), "control-character"),
        ("..", "not-netcdf"),
        ("../..", "not-netcdf"),
        ("/", "not-drs-filename"),
        ("output1/MOHC/", "not-drs-filename"),
        (".nc", "not-drs-filename"),
        ("..nc", "not-drs-filename"),
        ("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc.gz", "not-netcdf"),
        ("tas_Amon_Had\udcffCM3_historical_r1i1p1_185001-200512.nc", "control-character"),
        ("tas_Amon_HadCM3_hist/../orical_r1i1p1_185001-200512.nc", "not-drs-filename"),
        ("tas_Amon_HadCM3_historical_r1i1p1_1850-01.nc", "bad-time-range"),
        ("tas_Amon_HadCM3_historical_r1i1p1f1_gn_185001-200512.nc", "cmip6-name"),
        ("/store/mc/Run3/X/NANOAODSIM/1/0C9E1F2B.root", "not-netcdf"),
        (
            "cmip5.output1.MOHC.tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc",
            "not-drs-filename",
        ),
    ],
)
def test_hostile_and_broken_input_gets_a_structured_error(text, code):
    result = CMIP5.translate(text)
    assert not result.ok
    assert result.error.code == code
    assert len(result.error.message) < 400  # a 10k-character input is not echoed back


def test_dotdot_components_in_the_root_are_ignored():
    result = CMIP5.translate("../../x/.." + TAS_NAME.removeprefix("/CMIP5"))
    assert result.name == TAS_NAME


def test_surrogates_and_nul_anywhere_get_the_one_control_character_screen():
    """The screen every scheme and the catalog share: undecodable bytes are refused even in a
    root the name ignores, with the offset, so the file's path can be fixed (no crash)."""
    for bad in ("\udcff", "\x00", "\x85"):
        result = CMIP5.translate(f"/data/{bad}/" + TAS_NAME[7:])
        assert result.error.code == "control-character"
        assert "offset 6" in result.error.message


text_near_cmip5 = st.text(
    alphabet=st.characters(codec=None) | st.sampled_from(list("/_.-ripvnc0123456789Amon")),
    max_size=160,
)


@settings(max_examples=400, suppress_health_check=list(HealthCheck), deadline=None)
@given(text_near_cmip5, st.integers(0, len(TAS_NAME)), st.integers(0, len(TAS_NAME)))
def test_any_text_is_named_or_refused_and_names_round_trip(noise, i, j):
    for text in (noise, TAS_NAME[:i] + noise + TAS_NAME[j:], noise + TAS_NAME, TAS_NAME[:i]):
        result = CMIP5.translate(text)
        assert result.ok != (result.error is not None)
        if result.ok:
            back = CMIP5.reverse(result.name)
            assert (back.filename, back.facets) == (result.filename, result.facets)
        assert 0 <= CMIP5.guess(text) <= 100
    # reversed, the noise, the noise before the name and a cut name are refused: only the name
    # itself (the noise empty or "ndn:", the cut at the end) is one
    for text in (noise, noise + TAS_NAME, TAS_NAME[:i]):
        assert CMIP5.reverse(text).ok == (text.removeprefix("ndn:") == TAS_NAME), text
    spliced = CMIP5.reverse(TAS_NAME[:i] + noise + TAS_NAME[j:])  # maybe another name
    assert spliced.ok != (spliced.error is not None)


# --- reverse ---------------------------------------------------------------------------------


def test_reverse_gives_file_name_and_facets():
    result = CMIP5.reverse(TAS_NAME)
    assert result.ok, result.error
    assert result.input == result.name == TAS_NAME
    assert result.filename == TAS
    assert result.facets == CMIP5.translate(TAS_NAME.removeprefix("/CMIP5")).facets
    assert reverse("ndn:" + TAS_NAME).filename == TAS


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("", "invalid-name"),
        ("CMIP5/output1", "invalid-name"),
        (TAS_NAME + "/v=1", "invalid-name"),
        (TAS_NAME.replace("MOHC", "%FF%FE"), "invalid-name"),
        (TAS_NAME.replace("CMIP5", "CMIP6", 1), "wrong-root"),
        ("/CMIP5/output1/MOHC/HadCM3", "wrong-component-count"),
        (TAS_NAME.replace("/tas/", "/tas/extra/"), "wrong-component-count"),
        (TAS_NAME.replace("/atmos/", "/atmosphere/"), "invalid-component"),
        (TAS_NAME.replace("/v20110101/", "/1/"), "invalid-component"),
        (TAS_NAME.replace("/Amon/r1i1p1/", "/Omon/r1i1p1/"), "invalid-component"),
        (TAS_NAME.replace("/historical/mon", "/rcp45/mon"), "invalid-component"),
        (TAS_NAME.replace(".nc", ".nc.md5"), "invalid-component"),
        (TAS_NAME.replace("_185001-200512", "_185001-200512_clim"), "not-canonical"),
        (TAS_NAME.replace("/MOHC/", "/%00/"), "invalid-component"),
        (TAS_NAME.replace("tas_Amon_", "tas_AMON_"), "not-canonical"),
        ("/CMIP5/" + "/".join(["..."] * 11), "invalid-component"),
    ],
)
def test_reverse_refuses_names_that_are_not_cmip5_names(name, code):
    result = CMIP5.reverse(name)
    assert not result.ok
    assert result.error.code == code, result.error


# --- detection --------------------------------------------------------------------------------


def test_guess_claims_every_cmip5_line():
    assert all(CMIP5.guess(line) >= 90 for line in EVERY_LINE)


@pytest.mark.parametrize("corpus", ["cmip6_paths.tsv", "cmip6_malformed.tsv", "cms_lfns.tsv"])
def test_guess_does_not_steal_cmip6_or_cms_names(corpus):
    lines = [r[0] for r in rows(corpus)]
    assert [line for line in lines if CMIP5.guess(line) > 0] == []


@pytest.mark.parametrize(
    "text",
    [
        "tas_Amon_UKESM1-0-LL_historical_r1i1p1f2_gn_185001-194912.nc",
        "/badc/cmip6/data/CMIP6/CMIP/MOHC/UKESM1-0-LL/historical/r1i1p1f2/Amon/tas/gn/v1/x.nc",
        "/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu/NANOAODSIM/106X-v1/280000/0C9E.root",
        "/store/user/someone/r1i1p1/file.root",
    ],
)
def test_guess_is_zero_for_cmip6_and_cms(text):
    assert CMIP5.guess(text) == 0


def test_auto_detection_picks_cmip5():
    assert translate(EVERY_LINE[100]).scheme == "cmip5"
    assert translate("cmip5.output1.MOHC.HadCM3.historical.mon.atmos.Amon.r1i1p1." + TAS).ok


# --- documentation ----------------------------------------------------------------------------


def _emitted(kind):
    source = Path(cmip5_module.__file__).read_text()
    if kind == "rule":
        found = re.findall(r'Correction\(\s*"([a-z0-9-]+)"', source)
        found += re.findall(r'\.correct\(\s*"([a-z0-9-]+)"', source)
    else:
        found = re.findall(r'Rejected\(\s*"([a-z0-9-]+)"', source)
        found.append("control-character")  # the screen every scheme shares (_core.py)
        found += re.findall(r'return "([a-z0-9-]+)", ', source)
    return set(found)


@pytest.mark.parametrize("kind", ["rule", "code"])
def test_every_rule_id_and_error_code_is_documented(kind):
    doc = NAMING_DOC.read_text()
    cmip5_section = doc[doc.index("## CMIP5") :]
    emitted = _emitted(kind)
    assert len(emitted) >= (17 if kind == "rule" else 15)
    assert {r for r in emitted if f"`{r}`" not in cmip5_section} == set()


def test_an_ensemble_derived_by_the_extractor_is_checked():
    attributes = {"ensemble": "r2i1p1", "model_id": "CanCM4"}
    result = CMIP5.translate(CANCM4, attributes)
    assert rules(result)[0] == "attribute-mismatch"
    assert "'r2i1p1'" in result.corrections[0].message


# --- a file whose name is not a DRS name, named from its attributes ----------------------------

EDGE = DATA / "netcdf" / "edge"
ESMVALCORE_TAS = EDGE / "esmvalcore_tas_nondrs_name.nc"
ESMVALCORE_FX = EDGE / "esmvalcore_areacella_nondrs_name.nc"
CANESM2_TAS = "tas_Amon_CanESM2_historical_r1i1p1_185001-185002.nc"


def naming_attributes(path):
    from ndnsci_translators import netcdf

    return netcdf.naming_attributes(path)


def test_real_cmip5_file_under_a_non_drs_name_is_named_from_its_contents():
    # CanESM2 tas, renamed by ESMValCore's tests; its time axis holds January and February 1850
    result = CMIP5.translate(str(ESMVALCORE_TAS), naming_attributes(ESMVALCORE_TAS))
    assert result.ok, result.error
    assert result.name == (
        f"/CMIP5/output1/CCCma/CanESM2/historical/mon/atmos/Amon/r1i1p1/latest/tas/{CANESM2_TAS}"
    )
    assert result.facets["time_range"] == "185001-185002"
    assert rules(result) == [
        "filename-from-attributes", "time-range-from-axis", "product-output", "version-missing",
    ]  # fmt: skip
    message = result.corrections[0].message
    assert message.startswith(f"'esmvalcore_tas_nondrs_name.nc' -> '{CANESM2_TAS}'")
    assert message.endswith("(time range from the time axis)")
    assert "records 1850-01-16T12:00:00 and 1850-02-15T00:00:00, written yyyymm" in (
        result.corrections[1].message
    )
    assert reverse(result.name).filename == CANESM2_TAS  # a canonical, reversible name


ODD_FILE = DATA / "netcdf/cmip5/output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/cfMon/r1i1p1"
ODD_FILE = ODD_FILE / "files/odd_file.nc"
ODD_NAME = "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-145002.nc"


def test_odd_file_is_named_from_its_time_axis_with_a_recorded_rule():
    """Every CMIP5 attribute and a CF time axis with bounds, no ACDD time coverage."""
    result = CMIP5.translate(str(ODD_FILE), naming_attributes(ODD_FILE))
    assert result.ok and result.filename == ODD_NAME
    axis = next(c for c in result.corrections if c.rule == "time-range-from-axis")
    assert axis.message == (
        "time range '145001-145002' from the time axis: first and last records "
        "1450-01-16T12:00:00 and 1450-02-15T00:00:00, written yyyymm as the DRS sets for table "
        "Omon's mon data (the file states no time_coverage_start/end)"
    )


def _odd_copy(tmp_path, change):
    import shutil

    import netCDF4

    copy = tmp_path / "odd_file.nc"
    shutil.copy(ODD_FILE, copy)
    copy.chmod(0o644)
    with netCDF4.Dataset(copy, "a") as ds:
        change(ds)
    return copy


def test_records_stamped_at_their_periods_end_are_placed_by_their_bounds(tmp_path):
    """A model that stamps each monthly mean at the month's end: the coordinate says February
    and March, the cell bounds say January and February, which the file holds."""

    def stamp_at_end(ds):
        ds["time"][:] = ds["time_bnds"][:, 1]

    copy = _odd_copy(tmp_path, stamp_at_end)
    attributes = naming_attributes(copy)
    assert attributes["time_coverage_start"] == "1450-01-16T12:00:00"
    assert attributes["time_coverage_end"] == "1450-02-15T00:00:00"
    assert CMIP5.translate(str(copy), attributes).filename == ODD_NAME


def test_stated_time_coverage_is_used_and_no_axis_rule_recorded(tmp_path):
    def state_coverage(ds):
        ds.time_coverage_start = "1450-01-01"
        ds.time_coverage_end = "1450-03-31"

    copy = _odd_copy(tmp_path, state_coverage)
    result = CMIP5.translate(str(copy), naming_attributes(copy))
    assert result.filename == "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-145003.nc"
    assert "time-range-from-axis" not in rules(result)
    assert result.corrections[0].message.endswith(
        "(time range from time_coverage_start/time_coverage_end)"
    )


def test_contents_that_cannot_name_the_file_keep_a_structured_error(tmp_path):
    def undecodable_time(ds):
        ds["time"].units = "months since the flood"

    copy = _odd_copy(tmp_path, undecodable_time)
    result = CMIP5.translate(str(copy), naming_attributes(copy))
    assert result.error.code == "not-drs-filename"
    assert "table 'Omon' has a time axis, and the file has no decodable one" in (
        result.error.message
    )


def test_real_fx_file_under_a_non_drs_name_gets_no_time_range():
    result = CMIP5.translate(str(ESMVALCORE_FX), naming_attributes(ESMVALCORE_FX))
    assert result.name == (
        "/CMIP5/output1/CCCma/CanESM2/historical/fx/atmos/fx/r0i0p0/latest/areacella/"
        "areacella_fx_CanESM2_historical_r0i0p0.nc"
    )
    assert result.facets["time_range"] is None
    assert rules(result)[0] == "filename-from-attributes"


def test_auto_detection_takes_the_scheme_from_the_attributes_when_the_name_says_nothing():
    text = str(ESMVALCORE_TAS)
    assert translate(text).error.code == "unknown-scheme"
    assert translate(text, attributes=naming_attributes(ESMVALCORE_TAS)).scheme == "cmip5"


def test_drs_directories_still_give_their_components():
    path = "/data/cmip5/output2/CCCma/CanESM2/historical/mon/atmos/Amon/r1i1p1/v20120718/tas/x.nc"
    result = CMIP5.translate(path, naming_attributes(ESMVALCORE_TAS))
    assert result.name == (
        f"/CMIP5/output2/CCCma/CanESM2/historical/mon/atmos/Amon/r1i1p1/v20120718/tas/{CANESM2_TAS}"
    )
    assert rules(result) == ["filename-from-attributes", "time-range-from-axis"]


# the attributes of the ESMValCore CanESM2 tas file, and what naming_attributes adds to them
TAS_ATTRIBUTES = {
    **CANCM4_ATTRIBUTES,
    "model_id": "CanESM2",
    "table_id": "Table Amon (31 January 2011) 53b766a395ac41696af40aab76a49ae5",
    "realization": np.int32(1),
    "variable_id": "tas",
    "time_coverage_start": "1850-01-16T12:00:00",
    "time_coverage_end": "1850-02-15T00:00:00",
}


@pytest.mark.parametrize(
    ("table", "variable", "start", "end", "time_range"),
    [
        ("Oyr", "co3", "2078-06-01T00:00:00", "2079-06-01T00:00:00", "2078-2079"),
        ("Amon", "tas", "1850-01-16T12:00:00", "2005-12-16T12:00:00", "185001-200512"),
        ("day", "pr", "1850-01-01T12:00:00", "2005-12-31T12:00:00", "18500101-20051231"),
        ("6hrPlev", "psl", "1979-01-01T00:00:00", "1979-12-31T18:00:00", "1979010100-1979123118"),
        ("3hr", "tas", "2026-01-01T03:00:00", "2026-12-31T21:00:00", "202601010300-202612312100"),
        (
            "cfSites",
            "ta",
            "2008-07-15T00:15:00",
            "2008-07-20T23:45:30",
            "20080715001500-20080720234530",
        ),
        # a monthly climatology is named by its period: the end bound opens the next month
        ("Oclim", "difvso", "1986-01-01T00:00:00", "2006-01-01T00:00:00", "198601-200512-clim"),
    ],
)
def test_time_range_has_the_precision_of_the_tables_frequency(
    table, variable, start, end, time_range
):
    attributes = {
        **TAS_ATTRIBUTES,
        "table_id": f"Table {table} (26 July 2011) 0123",
        "variable_id": variable,
        "time_coverage_start": start,
        "time_coverage_end": end,
    }
    del attributes["frequency"], attributes["modeling_realm"]
    result = CMIP5.translate("renamed.nc", attributes)
    assert result.ok, result.error
    assert result.facets["time_range"] == time_range
    assert result.filename == f"{variable}_{table}_CanESM2_historical_r1i1p1_{time_range}.nc"
    assert result.facets["frequency"] == cmip5_module.TABLES[table][0]


def test_time_range_written_in_the_old_name_is_kept_without_coverage_attributes():
    attributes = {k: v for k, v in TAS_ATTRIBUTES.items() if not k.startswith("time_coverage")}
    result = CMIP5.translate("tas_CanESM2_185001-200512.nc", attributes)
    assert result.filename == "tas_Amon_CanESM2_historical_r1i1p1_185001-200512.nc"
    assert "kept from the file name" in result.corrections[0].message


def test_attribute_values_are_canonicalised_like_file_name_fields():
    attributes = {
        **TAS_ATTRIBUTES,
        "model_id": b"canesm2",
        "experiment_id": "HISTORICAL",
        "table_id": "Table amon (31 January 2011)",
    }
    result = CMIP5.translate("renamed.nc", attributes)
    assert result.filename == CANESM2_TAS


@pytest.mark.parametrize(
    ("change", "hint"),
    [
        ({"project_id": None}, "no project_id attribute"),
        ({"project_id": "CORDEX"}, "project_id 'CORDEX' is not CMIP5"),
        ({"variable_id": None}, "no variable_id attribute"),
        ({"variable_id": "t as"}, "variable_id 't as' is not letters"),
        ({"model_id": None}, "no model_id attribute"),
        ({"experiment_id": None}, "no experiment_id attribute"),
        ({"table_id": None}, "no table_id attribute"),
        ({"table_id": "Table Amonthly (2011)"}, "names no CMIP5 MIP table"),
        ({"realization": None}, "no realization/initialization_method/physics_version"),
        ({"time_coverage_start": None}, "no time_coverage_start/time_coverage_end attributes"),
        ({"time_coverage_end": "the end"}, "are not ISO 8601 dates"),
    ],
)
def test_insufficient_attributes_keep_the_error_and_say_what_is_missing(change, hint):
    attributes = {**TAS_ATTRIBUTES, **change}
    attributes = {k: v for k, v in attributes.items() if v is not None}
    result = CMIP5.translate("esmvalcore_tas_nondrs_name.nc", attributes)
    assert not result.ok
    assert result.error.code == "not-drs-filename"
    assert result.error.message.startswith("'esmvalcore_tas_nondrs_name': no ensemble field")
    assert hint in result.error.message


@pytest.mark.parametrize(
    "name",
    [
        "regridded_tos_day_CMCC-CESM_historical_r1i1p1_18680101-18731231.nc",
        "pr_day_CanESM2_rcp85_r1i1p1_na10kgrid_qm-moving-50bins-detrend_2095.nc",
    ],
)
def test_a_derived_file_is_not_renamed_after_the_file_it_came_from(name):
    # a DRS name with extra fields: its header is (mostly) that of the original file
    result = CMIP5.translate(name, TAS_ATTRIBUTES)
    assert result.error.code == "not-drs-filename"
    assert "not renamed from the global attributes" in result.error.message


def test_attributes_are_not_used_for_names_refused_for_other_reasons():
    result = CMIP5.translate("agessc_OmonOnRho_NorESM1-M_piControl_r1i1p1_070001-070312.nc", {})
    assert result.error.code == "unknown-mip-table"
    result = CMIP5.translate("tas_Amon_x.txt", TAS_ATTRIBUTES)
    assert result.error.code == "not-netcdf"


def test_esgf_id_and_extension_corrections_come_first():
    text = "cmip5.output1.CCCma.CanESM2.historical.mon.atmos.Amon.r1i1p1.v20120718.tas.nc4"
    result = CMIP5.translate(text, TAS_ATTRIBUTES)
    assert result.ok, result.error
    assert rules(result) == ["extension", "filename-from-attributes"]
    assert result.corrections[1].message.startswith(f"'tas.nc4' -> '{CANESM2_TAS}'")
    assert result.facets["version"] == "v20120718"


@pytest.mark.parametrize(
    ("attributes", "score"),
    [
        (TAS_ATTRIBUTES, 80),
        ({"PROJECT_ID": b"CMIP5"}, 80),
        ({"project_id": "CMIP6"}, 0),
        ({"mip_era": "CMIP6"}, 0),
        ({}, 0),
        ({"project_id": Hostile()}, 0),
        (BrokenMapping(), 0),
    ],
)
def test_guess_attributes(attributes, score):
    assert CMIP5.guess_attributes(attributes) == score


def test_a_name_outweighs_attributes_but_a_project_mention_does_not():
    cmip6 = {"mip_era": "CMIP6"}
    assert translate(TAS, attributes=cmip6).scheme == "cmip5"  # structure: 90 > 80
    assert translate("/data/cmip6/renamed.nc", attributes=TAS_ATTRIBUTES).scheme == "cmip5"
    assert translate("/data/cmip6/renamed.nc").scheme == "cmip6"  # 'cmip6' alone: 60
