"""CMS naming scheme (being written)."""

from __future__ import annotations

from ._core import Translator


class CMSTranslator(Translator):
    scheme = "cms"
    root = "CMS"
    facet_keys = ()
