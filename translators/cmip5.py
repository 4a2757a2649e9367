"""CMIP5 naming scheme (being written)."""

from __future__ import annotations

from ._core import Translator


class CMIP5Translator(Translator):
    scheme = "cmip5"
    root = "CMIP5"
    facet_keys = ()
