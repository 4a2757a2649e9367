"""Registry of naming schemes, found through the ``ndnsci_translators`` entry-point group.

A package adds a scheme by declaring, in its own metadata::

    [project.entry-points."ndnsci.translators"]
    myscheme = "mypackage.naming:MyTranslator"

where ``MyTranslator`` subclasses :class:`ndnsci_translators.Translator`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ndnsci_translators._core import Translation, Translator, failure

ENTRY_POINT_GROUP = "ndnsci.translators"
AUTO = "auto"


class UnknownSchemeError(KeyError):
    """Raised by :func:`get_translator` for a scheme nobody registered."""

    def __init__(self, scheme: str, valid: list[str]) -> None:
        super().__init__(scheme)
        self.scheme = scheme
        self.valid = valid

    def __str__(self) -> str:
        return f"unknown naming scheme {self.scheme!r}; valid schemes: {', '.join(self.valid)}"


@functools.cache
def _classes() -> dict[str, type[Translator]]:
    # here, not at the top: importlib.metadata costs ~25 ms that `ndnsci fetch` (which only
    # splits names) does not need
    from importlib.metadata import entry_points

    found: dict[str, type[Translator]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep.load())
    if not found:
        raise RuntimeError(
            f"no naming schemes registered under {ENTRY_POINT_GROUP!r}: "
            "is ndnsci installed (make setup / pip install ndnsci)?"
        )
    return found


def list_schemes() -> list[str]:
    """Names of every registered scheme, sorted."""
    return sorted(_classes())


@functools.cache
def get_translator(scheme: str) -> Translator:
    """The (shared, stateless) translator of ``scheme``.

    Raises:
        UnknownSchemeError: nobody registered ``scheme``; the error lists the valid ones.
    """
    classes = _classes()
    try:
        cls = classes[scheme]
    except KeyError:
        raise UnknownSchemeError(scheme, sorted(classes)) from None
    return cls()


@functools.cache
def _all_translators() -> tuple[Translator, ...]:
    return tuple(get_translator(scheme) for scheme in _classes())


def detect(text: str, attributes: Mapping[str, Any] | None = None) -> Translator | None:
    """The translator most likely to understand ``text``, or None when none claims it.

    With the file's netCDF global ``attributes``, each translator's ``guess_attributes`` score
    competes with the text scores: the highest score wins, ties go to the text. So attributes
    decide when the text does not (a file under a name no scheme claims, or one that only
    mentions a project), and a name's structure still outweighs them.
    """
    best: Translator | None = None
    best_score = 0
    for translator in _all_translators():
        score = translator.guess(text)
        if score > best_score:
            best, best_score = translator, score
    if attributes is not None:
        for translator in _all_translators():
            score = translator.guess_attributes(attributes)
            if score > best_score:
                best, best_score = translator, score
    return best


def translate(
    text: str, scheme: str = AUTO, attributes: Mapping[str, Any] | None = None
) -> Translation:
    """Translate one file name, path, ESGF id or LFN into an NDN name.

    >>> t = translate("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc")
    >>> t.name
    '/CMIP5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/latest/tas/tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc'

    ``attributes`` are the file's netCDF global attributes when known (see
    ``netcdf.naming_attributes``): with ``scheme="auto"`` they also take part in choosing the
    scheme (:func:`detect`). Never raises on bad input: see ``Translation.error``. Raises
    UnknownSchemeError for an unknown ``scheme``.
    """
    text = text.strip()
    if scheme == AUTO:
        translator = detect(text, attributes)
        if translator is None:
            return failure(
                text,
                None,
                "unknown-scheme",
                "not recognised as a CMIP5, CMIP6 or CMS name; pass --scheme to force one "
                f"(valid: {', '.join(list_schemes())})",
            )
    else:
        translator = get_translator(scheme)
    return translator.translate(text, attributes)


def reverse(name: str) -> Translation:
    """NDN name -> original file name and facets; the scheme comes from the first component."""
    name = name.strip()
    root = name.removeprefix("ndn:").lstrip("/").split("/", 1)[0]
    for translator in _all_translators():
        if translator.root == root:
            return translator.reverse(name)
    roots = ", ".join(sorted("/" + t.root for t in _all_translators()))
    return failure(name, None, "unknown-root", f"names start with one of {roots}, got {name!r}")
