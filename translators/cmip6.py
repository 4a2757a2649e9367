"""CMIP6 naming scheme (being written)."""

from __future__ import annotations

from ._core import Translator


class CMIP6Translator(Translator):
    scheme = "cmip6"
    root = "CMIP6"
    facet_keys = ()
