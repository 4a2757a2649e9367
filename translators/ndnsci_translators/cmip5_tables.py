"""CMIP5 controlled vocabularies the CMIP5 translator needs.

Sources: the 18 CMIP5 MIP tables (PCMDI cmip5-cmor-tables: each table's ``frequency`` and the
``modeling_realm`` of its variables), the CMIP5 model and institute list as published on ESGF,
and the experiments of the CMIP5 design (Taylor, Stouffer and Meehl 2012, the tables'
``expt_id_ok`` lines). They serve two purposes only: filling components a name does not carry
(institute from model, frequency and realm from the MIP table) and restoring the canonical
spelling of a component written in the wrong case. A model or experiment missing from these
lists is still accepted as written.
"""

from __future__ import annotations

from collections.abc import Iterable

#: MIP table -> (frequency, realm of most of its variables)
TABLES: dict[str, tuple[str, str]] = {
    "3hr": ("3hr", "atmos"),
    "6hrLev": ("6hr", "atmos"),
    "6hrPlev": ("6hr", "atmos"),
    "Amon": ("mon", "atmos"),
    "LImon": ("mon", "landIce"),
    "Lmon": ("mon", "land"),
    "OImon": ("mon", "seaIce"),
    "Oclim": ("monClim", "ocean"),
    "Omon": ("mon", "ocean"),
    "Oyr": ("yr", "ocnBgchem"),
    "aero": ("mon", "aerosol"),
    "cf3hr": ("3hr", "atmos"),
    "cfDay": ("day", "atmos"),
    "cfMon": ("mon", "atmos"),
    "cfOff": ("mon", "atmos"),
    "cfSites": ("subhr", "atmos"),
    "day": ("day", "atmos"),
    "fx": ("fx", "atmos"),
}

# Omon mixes physical ocean (realm "ocean") and biogeochemistry (realm "ocnBgchem") variables.
_OMON_BGCHEM = """
    arag bacc bfe bsi calc chl chlcalc chldiat chldiaz chlmisc chlpico co3 co3satarag co3satcalc
    darag dcalc detoc dfe dissic dissoc dms dpco2 dpo2 epc100 epcalc100 epfe100 epsi100 fbddtalk
    fbddtdic fbddtdife fbddtdin fbddtdip fbddtdisi fddtalk fddtdic fddtdife fddtdin fddtdip
    fddtdisi fgco2 fgdms fgo2 frc frfe fric frn froc fsc fsfe fsn graz intdic intdoc intparag
    intpbfe intpbsi intpcalc intpcalcite intpdiat intpdiaz intpmisc intpn2 intpnitrate intpp
    intppico limfecalc limfediat limfediaz limfemisc limfepico limirrcalc limirrdiat limirrdiaz
    limirrmisc limirrpico limncalc limndiat limndiaz limnmisc limnpico nh4 no3 o2 o2min ph phyc
    phycalc phydiat phydiaz phyfe phymisc phyn phyp phypico physi po4 poc pon pop si spco2 talk
    zo2min zooc zoomeso zoomicro zoomisc zsatarag zsatcalc
"""

#: (MIP table, variable) -> realm, where a variable's realm is not its table's usual one
VARIABLE_REALMS: dict[tuple[str, str], str] = {
    **{("Omon", v): "ocnBgchem" for v in _OMON_BGCHEM.split()},
    **{("day", v): "land" for v in ("mrro", "mrso", "mrsos", "tslsi")},
    **{("day", v): "landIce" for v in ("snc", "snw")},
    **{("day", v): "ocean" for v in ("omldamax", "tos", "tossq")},
    ("day", "sic"): "seaIce",
    **{("3hr", v): "land" for v in ("mrro", "mrsos", "tslsi")},
    ("3hr", "tso"): "ocean",
    **{("fx", v): "land" for v in ("mrsofc", "rootd", "sftgif")},
    **{
        ("fx", v): "ocean"
        for v in ("areacello", "basin", "deptho", "hfgeou", "sftof", "thkcello", "volcello")
    },
}

#: model -> institutes that published it (the first is the one a rule picks)
MODEL_INSTITUTES: dict[str, tuple[str, ...]] = {
    "ACCESS1-0": ("CSIRO-BOM",),
    "ACCESS1-3": ("CSIRO-BOM",),
    "bcc-csm1-1": ("BCC",),
    "bcc-csm1-1-m": ("BCC",),
    "BESM-OA2-3": ("INPE",),
    "BNU-ESM": ("BNU",),
    "CanAM4": ("CCCma",),
    "CanCM4": ("CCCma",),
    "CanESM2": ("CCCma",),
    "CCSM4": ("NCAR",),
    "CESM1-BGC": ("NSF-DOE-NCAR",),
    "CESM1-CAM5": ("NSF-DOE-NCAR",),
    "CESM1-CAM5-1-FV2": ("NSF-DOE-NCAR",),
    "CESM1-FASTCHEM": ("NSF-DOE-NCAR",),
    "CESM1-WACCM": ("NSF-DOE-NCAR",),
    "CFSv2-2011": ("NOAA-NCEP", "COLA-CFS"),
    "CMCC-CESM": ("CMCC",),
    "CMCC-CM": ("CMCC",),
    "CMCC-CMS": ("CMCC",),
    "CNRM-CM5": ("CNRM-CERFACS",),
    "CNRM-CM5-2": ("CNRM-CERFACS",),
    "CSIRO-Mk3-6-0": ("CSIRO-QCCCE",),
    "CSIRO-Mk3L-1-2": ("UNSW",),
    "EC-EARTH": ("ICHEC",),
    "FGOALS-g2": ("LASG-CESS",),
    "FGOALS-gl": ("LASG-IAP",),
    "FGOALS-s2": ("LASG-IAP",),
    "FIO-ESM": ("FIO",),
    "GEOS-5": ("NASA-GMAO",),
    "GFDL-CM2p1": ("NOAA-GFDL",),
    "GFDL-CM3": ("NOAA-GFDL",),
    "GFDL-ESM2G": ("NOAA-GFDL",),
    "GFDL-ESM2M": ("NOAA-GFDL",),
    "GFDL-HIRAM-C180": ("NOAA-GFDL",),
    "GFDL-HIRAM-C360": ("NOAA-GFDL",),
    "GISS-E2-H": ("NASA-GISS",),
    "GISS-E2-H-CC": ("NASA-GISS",),
    "GISS-E2-R": ("NASA-GISS",),
    "GISS-E2-R-CC": ("NASA-GISS",),
    "HadCM3": ("MOHC",),
    "HadGEM2-A": ("MOHC",),
    "HadGEM2-AO": ("NIMR-KMA",),
    "HadGEM2-CC": ("MOHC",),
    "HadGEM2-ES": ("MOHC", "INPE"),
    "inmcm4": ("INM",),
    "IPSL-CM5A-LR": ("IPSL",),
    "IPSL-CM5A-MR": ("IPSL",),
    "IPSL-CM5B-LR": ("IPSL",),
    "MIROC-ESM": ("MIROC",),
    "MIROC-ESM-CHEM": ("MIROC",),
    "MIROC4h": ("MIROC",),
    "MIROC5": ("MIROC",),
    "MPI-ESM-LR": ("MPI-M",),
    "MPI-ESM-MR": ("MPI-M",),
    "MPI-ESM-P": ("MPI-M",),
    "MRI-AGCM3-2H": ("MRI",),
    "MRI-AGCM3-2S": ("MRI",),
    "MRI-CGCM3": ("MRI",),
    "MRI-ESM1": ("MRI",),
    "NICAM-09": ("NICAM",),
    "NorESM1-M": ("NCC",),
    "NorESM1-ME": ("NCC",),
    # Not CMIP5 models but written with the CMIP5 DRS by MPI-M (MPI Grand Ensemble, drslib
    # tests); they appear in real archives.
    "MPI-ESM": ("MPI-M",),
    "ECHAM6-MPIOM-HR": ("MPI-M",),
    "ECHAM6-MPIOM-LR": ("MPI-M",),
}

INSTITUTES: frozenset[str] = frozenset(i for inst in MODEL_INSTITUTES.values() for i in inst)

_EXPERIMENTS = """
    1pctCO2 abrupt4xCO2 amip amip4K amip4xCO2 amipFuture aqua4K aqua4xCO2 aquaControl
    esmControl esmFdbk1 esmFdbk2 esmFixClim1 esmFixClim2 esmHistorical esmrcp85
    G1 G2 G3 G3S G4 historical historicalExt historicalGHG historicalMisc historicalNat
    lgm midHolocene past1000 piControl rcp26 rcp45 rcp60 rcp85 sst2030 sst2090 sst2090rcp45
    sstClim sstClim4xCO2 sstClimAerosol sstClimSulfate volcIn2010
    tamip200810 tamip200901 tamip200904 tamip200907
"""

#: experiment ids of the CMIP5 design; decadal and noVolc runs carry their start year
EXPERIMENTS: frozenset[str] = frozenset(
    _EXPERIMENTS.split()
    + [f"decadal{year}" for year in range(1950, 2036)]
    + [f"noVolc{year}" for year in range(1950, 2036)]
)

FREQUENCIES: frozenset[str] = frozenset(
    ("3hr", "6hr", "day", "fx", "mon", "monClim", "subhr", "yr")
)

#: frequency -> (digits of a file name's time points, climatology), per the CMIP5 DRS: yyyy,
#: yyyymm, yyyymmdd, yyyymmddhh, yyyymmddhhmm, yyyymmddhhmmss; monClim files end in "-clim".
#: fx files have no time range.
TIME_PRECISION: dict[str, tuple[int, bool]] = {
    "yr": (4, False),
    "mon": (6, False),
    "monClim": (6, True),
    "day": (8, False),
    "6hr": (10, False),
    "3hr": (12, False),
    "subhr": (14, False),
}

REALMS: frozenset[str] = frozenset(
    ("aerosol", "atmos", "atmosChem", "land", "landIce", "ocean", "ocnBgchem", "seaIce")
)

#: "output" is CMOR's value before ESGF publication split the data into output1 (replicated)
#: and output2; archives such as NCAR GLADE still publish under "output".
PRODUCTS: frozenset[str] = frozenset(("output", "output1", "output2"))

_CMIP6_ONLY_TABLES = """
    1hr 6hrPlevPt AERday AERfx AERhr AERmon AERmonZ CF1hrClimMon CF3hr CFday CFmon CFsubhr
    CFsubhrOff E1hr E1hrClimMon E3hr E3hrPt E6hrZ Eday EdayZ Efx Emon EmonZ Esubhr Eyr
    IfxAnt IfxGre ImonAnt ImonGre IyrAnt IyrGre Oday Odec Ofx SIday SImon
"""

#: MIP tables that exist only in CMIP6: a name using one is a CMIP6 name
CMIP6_ONLY_TABLES: frozenset[str] = frozenset(_CMIP6_ONLY_TABLES.split())


def by_lower(values: Iterable[str]) -> dict[str, str]:
    """Lower-case spelling -> canonical spelling, to repair case in one dictionary lookup."""
    return {v.lower(): v for v in values}
