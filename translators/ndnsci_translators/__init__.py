"""Name translators: flat science file names <-> hierarchical NDN names.

Pure functions of their input (and, optionally, a file's netCDF global attributes); no network.
Schemes are plugins registered under the ``ndnsci_translators`` entry-point group.

>>> from ndnsci_translators import translate, reverse
>>> translate("/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/"
...           "NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root").name
'/CMS/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root'

The names below load on first use: the data plane imports ``ndnsci_translators.names`` (the
name codec) on every ``ndnsci fetch``, which does not need the translators' types nor their
registry (importlib.metadata's entry points; DEVELOPERS.md "Start-up budget").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ndnsci_translators._core import (
        Aggregation,
        Correction,
        Facets,
        Translation,
        TranslationError,
        Translator,
    )
    from ndnsci_translators.registry import (
        UnknownSchemeError,
        detect,
        get_translator,
        list_schemes,
        reverse,
        translate,
    )

_LAZY = {
    "._core": "Aggregation Correction Facets Translation TranslationError Translator",
    ".registry": "UnknownSchemeError detect get_translator list_schemes reverse translate",
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names.split()}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'ndnsci_translators' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


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
