"""CMIP6 controlled vocabularies the CMIP6 translator needs, as plain data.

Taken from the WCRP CMIP6 controlled vocabularies (github.com/WCRP-CMIP/CMIP6_CVs:
``CMIP6_activity_id.json``, ``CMIP6_table_id.json``, ``CMIP6_institution_id.json``,
``CMIP6_experiment_id.json``, ``CMIP6_source_id.json``) and checked against the DRS paths of
``tests/data/corpora/cmip6_paths.tsv``. The closed lists (activities, MIP tables) are complete; the
two rule tables cover the experiments and models most archives hold, not the whole CV: a name
whose experiment or model is missing here still translates when its path or global attributes
carry the activity and institution.
"""

from __future__ import annotations

#: every CMIP6 activity_id (closed list)
ACTIVITIES: frozenset[str] = frozenset(
    {
        "AerChemMIP", "C4MIP", "CDRMIP", "CFMIP", "CMIP", "CORDEX", "DAMIP", "DCPP",
        "DynVarMIP", "FAFMIP", "GMMIP", "GeoMIP", "HighResMIP", "ISMIP6", "LS3MIP", "LUMIP",
        "OMIP", "PAMIP", "PMIP", "RFMIP", "SIMIP", "ScenarioMIP", "VIACSAB", "VolMIP",
    }
)  # fmt: skip

#: every CMIP6 MIP table_id (closed list)
TABLES: frozenset[str] = frozenset(
    {
        "3hr", "6hrLev", "6hrPlev", "6hrPlevPt", "AERday", "AERhr", "AERmon", "AERmonZ",
        "Amon", "CF3hr", "CFday", "CFmon", "CFsubhr", "E1hr", "E1hrClimMon", "E3hr", "E3hrPt",
        "E6hrZ", "Eday", "EdayZ", "Efx", "Emon", "EmonZ", "Esubhr", "Eyr", "IfxAnt", "IfxGre",
        "ImonAnt", "ImonGre", "IyrAnt", "IyrGre", "LImon", "Lmon", "Oclim", "Oday", "Odec",
        "Ofx", "Omon", "Oyr", "SIday", "SImon", "day", "fx",
    }
)  # fmt: skip

#: frequency -> (digits of a file name's time points, climatology), per the CMIP6 DRS and CMOR 3:
#: yyyy (yr, dec), yyyymm (mon, monC), yyyymmdd (day), yyyymmddhhmm (6hr, 3hr, 1hr, 1hrCM),
#: yyyymmddhhmmss (subhr); monC and 1hrCM files end in "-clim". fx files have no time range.
TIME_PRECISION: dict[str, tuple[int, bool]] = {
    "dec": (4, False),
    "yr": (4, False),
    "yrPt": (4, False),
    "mon": (6, False),
    "monPt": (6, False),
    "monC": (6, True),
    "day": (8, False),
    "6hr": (12, False),
    "6hrPt": (12, False),
    "3hr": (12, False),
    "3hrPt": (12, False),
    "1hr": (12, False),
    "1hrPt": (12, False),
    "1hrCM": (12, True),
    "subhr": (14, False),
    "subhrPt": (14, False),
}

#: registered CMIP6 institution_id values; used to recognise an institution directory in a
#: path that lacks the activity directory (``.../CMIP6/NCAR/CESM2/historical/...``)
INSTITUTIONS: frozenset[str] = frozenset(
    {
        "AER", "AS-RCEC", "AWI", "BCC", "BNU", "CAMS", "CAS", "CCCR-IITM", "CCCma", "CMCC",
        "CNRM-CERFACS", "CSIRO", "CSIRO-ARCCSS", "CSIRO-COSIMA", "DKRZ", "DWD", "E3SM-Project",
        "EC-Earth-Consortium", "ECMWF", "FIO-QLNM", "HAMMOZ-Consortium", "INM", "INPE", "IPSL",
        "KIOST", "LLNL", "MESSy-Consortium", "MIROC", "MOHC", "MPI-M", "MRI", "NASA-GISS",
        "NASA-GSFC", "NCAR", "NCC", "NERC", "NIMS-KMA", "NIWA", "NOAA-GFDL", "NTU", "NUIST",
        "PCCMA", "PCMDI", "PNNL-WACCEM", "RTE-RRTMGP-Consortium", "RUBISCO", "SNU", "THU",
        "UA", "UCI", "UCSB", "UHH",
    }
)  # fmt: skip


def _experiments(activity: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), activity)


#: experiment_id -> the activity_id its data are published under. Experiments the CV lists
#: under several activities map to the first one (``piClim-control``: RFMIP, AerChemMIP).
EXPERIMENT_ACTIVITY: dict[str, str] = {
    **_experiments(
        "CMIP",
        "1pctCO2 abrupt-4xCO2 amip esm-hist esm-piControl esm-piControl-spinup historical "
        "piControl piControl-spinup",
    ),
    **_experiments(
        "ScenarioMIP",
        "ssp119 ssp126 ssp245 ssp370 ssp434 ssp460 ssp534-over ssp585",
    ),
    **_experiments(
        "DAMIP",
        "hist-CO2 hist-GHG hist-aer hist-all-aer2 hist-all-nat2 hist-nat hist-sol "
        "hist-stratO3 hist-volc ssp245-CO2 ssp245-GHG ssp245-aer ssp245-covid ssp245-nat "
        "ssp245-stratO3",
    ),
    **_experiments(
        "DCPP",
        "dcppA-assim dcppA-hindcast dcppA-hindcast-niff dcppA-historical-niff dcppB-forecast "
        "dcppC-amv-neg dcppC-amv-pos dcppC-atl-control dcppC-hindcast-noAgung "
        "dcppC-hindcast-noElChichon dcppC-hindcast-noPinatubo dcppC-ipv-neg dcppC-ipv-pos "
        "dcppC-pac-control",
    ),
    **_experiments(
        "HighResMIP",
        "control-1950 hist-1950 highres-future highresSST-4xCO2 highresSST-LAI "
        "highresSST-future highresSST-p4K highresSST-present highresSST-smoothed spinup-1950",
    ),
    **_experiments(
        "AerChemMIP",
        "hist-1950HC hist-piAer hist-piNTCF histSST histSST-1950HC histSST-noLu histSST-piAer "
        "histSST-piCH4 histSST-piNTCF histSST-piO3 piClim-2xDMS piClim-2xNOx piClim-2xVOC "
        "piClim-2xdust piClim-2xfire piClim-2xss piClim-BC piClim-CH4 piClim-HC piClim-N2O "
        "piClim-NOx piClim-NTCF piClim-O3 piClim-OC piClim-SO2 piClim-VOC ssp370-lowNTCF "
        "ssp370SST ssp370SST-lowAer ssp370SST-lowBC ssp370SST-lowCH4 ssp370SST-lowNTCF "
        "ssp370SST-lowO3 ssp370pdSST",
    ),
    **_experiments(
        "RFMIP",
        "hist-spAer-aer hist-spAer-all piClim-4xCO2 piClim-aer piClim-anthro piClim-control "
        "piClim-ghg piClim-histaer piClim-histall piClim-histghg piClim-histnat piClim-lu "
        "piClim-spAer-aer piClim-spAer-anthro piClim-spAer-histaer piClim-spAer-histall rad-irf",
    ),
    **_experiments(
        "C4MIP",
        "1pctCO2-bgc 1pctCO2-rad 1pctCO2Ndep 1pctCO2Ndep-bgc esm-ssp585 hist-bgc "
        "ssp534-over-bgc ssp585-bgc",
    ),
    **_experiments(
        "CDRMIP",
        "esm-1pct-brch-1000PgC esm-1pct-brch-2000PgC esm-1pct-brch-750PgC esm-1pctCO2 "
        "esm-pi-CO2pulse esm-pi-cdr-pulse esm-ssp534-over",
    ),
    **_experiments(
        "CFMIP",
        "a4SST a4SSTice a4SSTice-4xCO2 abrupt-0p5xCO2 abrupt-2xCO2 abrupt-solm4p "
        "abrupt-solp4p amip-4xCO2 amip-a4SST-4xCO2 amip-future4K amip-lwoff amip-m4K "
        "amip-p4K amip-p4K-lwoff amip-piForcing aqua-4xCO2 aqua-control aqua-control-lwoff "
        "aqua-p4K aqua-p4K-lwoff piSST piSST-4xCO2 piSST-4xCO2-rad piSST-pxK",
    ),
    **_experiments(
        "GMMIP",
        "amip-TIP amip-TIP-nosh amip-hist amip-hld hist-resAMO hist-resIPO",
    ),
    **_experiments(
        "LUMIP",
        "esm-ssp585-ssp126Lu hist-noLu land-cCO2 land-cClim land-crop-grass land-hist "
        "land-hist-altStartYear land-noFire land-noLu land-noShiftCultivate land-noWoodHarv "
        "ssp126-ssp370Lu ssp370-ssp126Lu",
    ),
    **_experiments(
        "LS3MIP",
        "land-hist-cruNcep land-hist-princeton land-hist-wfdei land-ssp126 land-ssp434 "
        "land-ssp585 lfmip-initLC lfmip-pdLC lfmip-rmLC",
    ),
    **_experiments("OMIP", "omip1 omip1-spunup omip2 omip2-spunup"),
    **_experiments(
        "PMIP",
        "lgm lig127k midHolocene midPliocene-eoi400 past1000 past1000-solaronly past1000-volc "
        "past2k",
    ),
    **_experiments(
        "PAMIP",
        "futSST-pdSIC modelSST-futArcSIC modelSST-pdSIC pdSST-futAntSIC pdSST-futArcSIC "
        "pdSST-futArcSICSIT pdSST-pdSIC pdSST-pdSICSIT pdSST-piAntSIC pdSST-piArcSIC "
        "piSST-pdSIC piSST-piSIC",
    ),
    **_experiments(
        "GeoMIP",
        "G1 G6SST1 G6SST2-solar G6SST2-sulfur G6solar G6sulfur G7SST1-cirrus G7SST2-cirrus "
        "G7cirrus",
    ),
    **_experiments(
        "VolMIP",
        "volc-cluster-21C volc-cluster-ctrl volc-cluster-mill volc-long-eq volc-long-hlN "
        "volc-long-hlS volc-pinatubo-full volc-pinatubo-slab volc-pinatubo-strat "
        "volc-pinatubo-surf",
    ),
    **_experiments(
        "FAFMIP",
        "faf-all faf-antwater-stress faf-heat faf-heat-NA0pct faf-heat-NA50pct "
        "faf-passiveheat faf-stress faf-water",
    ),
    **_experiments(
        "ISMIP6",
        "1pctCO2to4x-withism historical-withism piControl-withism ssp585-withism",
    ),
}


def _sources(institutions: tuple[str, ...], names: str) -> dict[str, tuple[str, ...]]:
    return dict.fromkeys(names.split(), institutions)


#: source_id -> the institutions that publish it, the developing centre first. Several centres
#: publish some models (MPI-ESM1-2-HR: MPI-M, DWD, DKRZ); the rule picks the first and says so.
SOURCE_INSTITUTIONS: dict[str, tuple[str, ...]] = {
    **_sources(("CSIRO-ARCCSS",), "ACCESS-CM2"),
    **_sources(("CSIRO",), "ACCESS-ESM1-5"),
    **_sources(("AWI",), "AWI-CM-1-1-HR AWI-CM-1-1-LR AWI-CM-1-1-MR AWI-ESM-1-1-LR"),
    **_sources(("BCC",), "BCC-CSM2-HR BCC-CSM2-MR BCC-ESM1"),
    **_sources(("CAMS",), "CAMS-CSM1-0"),
    **_sources(("CAS",), "CAS-ESM2-0 FGOALS-f3-H FGOALS-f3-L FGOALS-g3"),
    **_sources(
        ("NCAR",),
        "CESM1-1-CAM5-CMIP5 CESM1-CAM5-SE-HR CESM1-CAM5-SE-LR CESM2 CESM2-FV2 CESM2-WACCM "
        "CESM2-WACCM-FV2",
    ),
    **_sources(("UCI",), "CESM1-WACCM-SC"),
    **_sources(("THU",), "CIESM"),
    **_sources(("CMCC",), "CMCC-CM2-HR4 CMCC-CM2-SR5 CMCC-CM2-VHR4 CMCC-ESM2"),
    **_sources(("CNRM-CERFACS",), "CNRM-CM6-1 CNRM-CM6-1-HR CNRM-ESM2-1"),
    **_sources(("CCCma",), "CanESM5 CanESM5-1 CanESM5-CanOE"),
    **_sources(("E3SM-Project",), "E3SM-1-0 E3SM-1-1 E3SM-1-1-ECA E3SM-2-0"),
    **_sources(
        ("EC-Earth-Consortium",),
        "EC-Earth3 EC-Earth3-AerChem EC-Earth3-CC EC-Earth3-HR EC-Earth3-LR EC-Earth3-Veg "
        "EC-Earth3-Veg-LR EC-Earth3P EC-Earth3P-HR EC-Earth3P-VHR",
    ),
    **_sources(("ECMWF",), "ECMWF-IFS-HR ECMWF-IFS-LR ECMWF-IFS-MR"),
    **_sources(("FIO-QLNM",), "FIO-ESM-2-0"),
    **_sources(
        ("NOAA-GFDL",),
        "GFDL-AM4 GFDL-CM4 GFDL-CM4C192 GFDL-ESM2M GFDL-ESM4 GFDL-OM4p5B",
    ),
    **_sources(
        ("NASA-GISS",),
        "GISS-E2-1-G GISS-E2-1-G-CC GISS-E2-1-H GISS-E2-2-G GISS-E2-2-H GISS-E3-G",
    ),
    **_sources(
        ("MOHC", "NERC"),
        "HadGEM3-GC31-HH HadGEM3-GC31-HM HadGEM3-GC31-LL HadGEM3-GC31-LM HadGEM3-GC31-MH "
        "HadGEM3-GC31-MM",
    ),
    **_sources(("AS-RCEC",), "HiRAM-SIT-HR HiRAM-SIT-LR TaiESM1"),
    **_sources(("MPI-M",), "ICON-ESM-LR MPI-ESM1-2-XR"),
    **_sources(("CCCR-IITM",), "IITM-ESM"),
    **_sources(("INM",), "INM-CM4-8 INM-CM5-0 INM-CM5-H"),
    **_sources(
        ("IPSL",),
        "IPSL-CM5A2-INCA IPSL-CM6A-ATM-HR IPSL-CM6A-LR IPSL-CM6A-LR-INCA",
    ),
    **_sources(("NIMS-KMA",), "KACE-1-0-G"),
    **_sources(("KIOST",), "KIOST-ESM"),
    **_sources(("UA",), "MCM-UA-1-0"),
    **_sources(
        ("MIROC",),
        "MIROC-ES2H MIROC-ES2L MIROC6 NICAM16-7S NICAM16-8S NICAM16-9S",
    ),
    **_sources(("HAMMOZ-Consortium",), "MPI-ESM-1-2-HAM"),
    **_sources(("MPI-M", "DWD", "DKRZ"), "MPI-ESM1-2-HR"),
    **_sources(("MPI-M", "AWI", "DKRZ", "DWD"), "MPI-ESM1-2-LR"),
    **_sources(("MRI",), "MRI-AGCM3-2-H MRI-AGCM3-2-S MRI-ESM2-0"),
    **_sources(("NUIST",), "NESM3"),
    **_sources(("NCC",), "NorCPM1 NorESM1-F NorESM2-LM NorESM2-MM"),
    **_sources(("SNU",), "SAM0-UNICON"),
    **_sources(("MOHC", "NERC", "NIMS-KMA", "NIWA"), "UKESM1-0-LL"),
    **_sources(("MOHC",), "UKESM1-1-LL"),
}
