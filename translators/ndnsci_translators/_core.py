"""The contract every naming scheme shares: a translation result and the translator interface.

A translator turns an input (a file name, a path under any root, an ESGF id, an LFN) into a
hierarchical NDN name plus facets, recording each correction it applied, or returns a structured
error. It never raises on bad input: the error is part of the result.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

Facets = dict[str, str | None]

# C0 and C1 control characters (NUL, newline, ESC, DEL, ...) and the lone surrogates that
# undecodable file-name bytes become: no file name, name component or catalog text holds them
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


#: where ``netcdf.naming_attributes`` lists the attributes it derived from a file's contents
#: (the main variable, the time coverage from the time axis) rather than read from its header:
#: a translator that names a file with them says so (``time-range-from-axis``)
DERIVED_ATTRIBUTES = "ndnsci:derived"


def derived_keys(attributes: Mapping[str, Any] | None) -> frozenset[str]:
    """The attribute names ``attributes`` says were derived from the contents (lower case)."""
    try:
        value = (attributes or {}).get(DERIVED_ATTRIBUTES)
        if isinstance(value, str):
            value = value.split()
        if isinstance(value, list | tuple):
            return frozenset(str(v).lower() for v in value)
    except Exception:  # a broken mapping must not break naming
        pass
    return frozenset()


def control_character(text: str) -> re.Match[str] | None:
    """The first control character (or lone surrogate) in ``text``, else None: the one screen
    every translator, and the catalog, applies to text.

    >>> control_character("tas\x00_Amon.nc").start()
    3
    """
    return _CONTROL.search(text)


class Rejected(Exception):
    """Internal to translators: the input cannot be named. Raised deep in a translator's
    parsing and turned into a failed :class:`Translation` (``code``, ``message``) at its
    ``translate``/``reverse`` entry, so it never reaches a caller."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def screen_control(text: str, what: str) -> None:
    """Rejected (``control-character``) when ``text`` holds a control character; ``what``
    says what the text is, for the message (``"file names and paths"``, ``"CMS LFNs"``)."""
    bad = _CONTROL.search(text)
    if bad is not None:
        raise Rejected(
            "control-character",
            f"control or undecodable character {bad.group()!r} at offset {bad.start()}: "
            f"{what} cannot contain it",
        )


@dataclass(frozen=True, slots=True)
class Aggregation:
    """How intake-esm groups a scheme's files into datasets (the catalog's export): the facet
    naming each file's variable, and the facets that together name a dataset."""

    variable: str
    groupby: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Correction:
    """One correction rule applied to make a name canonical.

    ``rule`` is a stable identifier (documented in docs/naming.md); ``message`` says what changed,
    e.g. ``"'_clim' -> '-clim'"``.
    """

    rule: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}


@dataclass(frozen=True, slots=True)
class TranslationError:
    """Why an input cannot be named: a stable ``code`` and a message a person can act on."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(slots=True)
class Translation:
    """The result of translating one input (or reversing one NDN name).

    ``ok`` is true exactly when ``name`` is set and ``error`` is None.
    """

    input: str
    scheme: str | None
    name: str | None = None
    filename: str | None = None
    facets: Facets = field(default_factory=dict)
    corrections: list[Correction] = field(default_factory=list)
    error: TranslationError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.name is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``ndnsci translate --json`` (key order is part of the contract)."""
        return {
            "input": self.input,
            "ok": self.ok,
            "scheme": self.scheme,
            "name": self.name,
            "filename": self.filename,
            "facets": self.facets,
            "corrections": [c.to_dict() for c in self.corrections],
            "error": None if self.error is None else self.error.to_dict(),
        }


def failure(input: str, scheme: str | None, code: str, message: str) -> Translation:
    """A failed translation carrying a structured error."""
    return Translation(input=input, scheme=scheme, error=TranslationError(code, message))


class Translator:
    """Base class of a naming scheme, registered under the ``ndnsci_translators`` entry points.

    Subclasses set the class attributes and implement :meth:`guess`, :meth:`translate` and
    :meth:`reverse` (and may override :meth:`guess_attributes`). Neither ``translate`` nor
    ``reverse`` may raise on bad input; they return a failed :class:`Translation` instead.
    """

    #: scheme identifier used on the command line (``--scheme``) and in results
    scheme: ClassVar[str]
    #: first component of every NDN name of this scheme, e.g. ``"CMIP5"``
    root: ClassVar[str]
    #: facet keys, in order; every result carries all of them (absent ones are None)
    facet_keys: ClassVar[tuple[str, ...]]
    #: one line for listings
    description: ClassVar[str] = ""
    #: how intake-esm aggregates this scheme's files (None: the files are not aggregated)
    aggregation: ClassVar[Aggregation | None] = None

    def guess(self, text: str) -> int:
        """How likely ``text`` is of this scheme, 0 (not at all) to 100, for ``--scheme auto``.

        Must be cheap: it runs for every translator on every input.
        """
        raise NotImplementedError

    def guess_attributes(self, attributes: Mapping[str, Any]) -> int:
        """How likely a file with these netCDF global attributes is of this scheme, 0 to 100.

        Consulted by auto detection only when attributes are given, after :meth:`guess`, so
        attributes decide the scheme of a file whose name and path do not (the highest score of
        either kind wins; ties go to the text). Scores below a name's structural match (90) keep
        a name in charge. The default claims nothing; override it when the scheme's files say
        what they are (CMIP5: ``project_id``). Must not raise, whatever the values.
        """
        return 0

    def translate(self, text: str, attributes: Mapping[str, Any] | None = None) -> Translation:
        """Translate a file name or path into an NDN name.

        ``attributes`` are the file's netCDF global attributes when known; they fill components
        the name and path do not carry and are checked against them.
        """
        raise NotImplementedError

    def reverse(self, name: str) -> Translation:
        """NDN name -> original file name and facets (``Translation.input`` is the name)."""
        raise NotImplementedError

    def empty_facets(self) -> Facets:
        return dict.fromkeys(self.facet_keys)
