"""Name translators: flat science file names <-> hierarchical NDN names.

Pure functions of their input (and, optionally, a file's netCDF global attributes); no network.
Schemes are plugins registered under the ``ndnsci.translators`` entry-point group.

>>> from ndnsci.translators import translate, reverse
>>> translate("/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/"
...           "NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root").name
'/CMS/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root'
"""

from ndnsci.translators._core import (
    Aggregation,
    Correction,
    Facets,
    Translation,
    TranslationError,
    Translator,
)
from ndnsci.translators.registry import (
    UnknownSchemeError,
    detect,
    get_translator,
    list_schemes,
    reverse,
    translate,
)

__all__ = [
    "Aggregation",
    "Correction",
    "Facets",
    "Translation",
    "TranslationError",
    "Translator",
    "UnknownSchemeError",
    "detect",
    "get_translator",
    "list_schemes",
    "reverse",
    "translate",
]
