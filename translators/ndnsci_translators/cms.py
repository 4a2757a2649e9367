"""CMS naming scheme: logical file names (LFNs) <-> ``/CMS/store/...`` NDN names.

The name of an LFN is ``/CMS`` followed by one generic component per LFN path segment, so
``/store/mc/RunIISummer20UL18NanoAODv9/.../280000/0C9E1F2B.root`` is named
``/CMS/store/mc/RunIISummer20UL18NanoAODv9/.../280000/0C9E1F2B.root``: the NDN-DPDK file server
(mounted at prefix ``/CMS``) and NDNc address exactly these names. The name never changes the
LFN, so the LFN of a name is the name without ``/CMS`` (:func:`lfn`); ``Translation.filename`` is
the LFN's last segment and the facets carry what the LFN's directories say:

- ``area``: the store area (``mc``, ``data``, ``user``, ``group``, ``unmerged``, ``temp``, ...)
- ``era``, ``primary_dataset``, ``tier``, ``processing``: acquisition era, primary dataset, data
  tier and processing string with version (``106X_upgrade2018_realistic_v16_L1v1-v1``)
- ``counter``: the block counter (``280000``); for data LFNs with run directories
  (``.../v1/000/143/316/...``) the run number, leading zeros dropped (``143316``)
- ``filename``: the last segment.

Only a site prefix is ever removed (correction ``site-prefix-removed``). Error codes:
``empty``, ``not-an-lfn``, ``not-a-file``, ``placeholder``, ``percent-escape``,
``control-character``, ``empty-segment``, ``unsafe-path``, ``too-long``, ``invalid-name``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ndnsci_translators._core import (
    Correction,
    Facets,
    Rejected,
    Translation,
    Translator,
    failure,
    screen_control,
)
from ndnsci_translators.names import UnsafePathError, build_name, safe_relative_path, split_name

SCHEME = "cms"
ROOT = "CMS"
FACET_KEYS = ("area", "era", "primary_dataset", "tier", "processing", "counter", "filename")
#: DBS stores LFNs of up to 500 characters; 1 KiB leaves room and keeps the escaped name far
#: below one NDN packet (8800 bytes) together with version, segment and signature
MAX_LFN_BYTES = 1024
#: NAME_MAX of POSIX file systems: the file server maps each component to a path segment
MAX_SEGMENT_BYTES = 255

# a well-formed LFN: segments of unreserved characters, none starting with a dot
_SAFE_LFN = re.compile(r"/store(?:/[A-Za-z0-9_\-][A-Za-z0-9._\-]{0,254})+")
_PLACEHOLDER = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdiu]"  # printf: %s %i %05d %(name)s
    r"|\{[^{}/]*\}"  # str.format: {} {0} {name}
    r"|\$\{?[A-Za-z_]"  # shell: $VAR ${VAR}
    r"|[*?\[\]\\^|<>]"  # glob and regular expression
    r"|\.{3}"  # an ellipsis standing for elided segments
)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_TIER = re.compile(r"[A-Z][A-Z0-9-]*")
_OFFICIAL = re.compile(
    r"([^/]+)/([^/]+)/([A-Z][A-Z0-9-]*)/([^/]+)"  # era / primary dataset / tier / processing
    r"(?:/(\d{3})/(\d{3})/(\d{3})(?:/\d+)?|/(\d+))?"  # run in three groups [+ block] | counter
    r"/[^/]+"
)
_CRAB_TIMESTAMP = re.compile(r"\d{6}_\d{6}")
#: store areas whose layout below is era/primary dataset/tier/processing/counter
_OFFICIAL_AREAS = frozenset({"mc", "data", "hidata", "himc", "relval", "express", "generator"})
#: store areas that hold other areas' layouts below them (/store/temp/user, /store/backfill/1/data)
_WRAPPERS = frozenset({"temp", "t0temp", "unmerged", "backfill", "lustre", "test"})
_AREAS = _OFFICIAL_AREAS | _WRAPPERS | {"user", "group", "results", "lhe"}
_PREFIXES = ("/store/", "/CMS/", "ndn:/CMS/")


class CMSTranslator(Translator):
    """CMS logical file names <-> ``/CMS/store/...`` names, one component per segment."""

    scheme = SCHEME
    root = ROOT
    facet_keys = FACET_KEYS
    description = "CMS logical file names (/store/...)"

    def guess(self, text: str) -> int:
        if text.startswith(_PREFIXES):
            return 50 if text.endswith(".nc") else 95
        if text.endswith(".root"):
            return 85 if "/store/" in text else 40
        return 0

    def translate(self, text: str, attributes: Mapping[str, Any] | None = None) -> Translation:
        """Name an LFN; ``attributes`` are not used (ROOT files carry none we read)."""
        stripped = text.strip()
        if _is_plain_lfn(stripped):
            # unreserved segments not made of periods: escaping would not change them
            return _named(text, stripped, "/CMS" + stripped, [])
        corrections: list[Correction] = []
        try:
            lfn_text = _to_lfn(stripped, corrections)
            _check_lfn(lfn_text)
        except Rejected as exc:
            return _failed(text, exc.code, exc.message)
        return _named(text, lfn_text, build_name([ROOT, *lfn_text[1:].split("/")]), corrections)

    def reverse(self, name: str) -> Translation:
        stripped = name.strip()
        if stripped.startswith("/CMS/") and _is_plain_lfn(stripped[4:]):
            return _named(name, stripped[4:], stripped, [])
        try:
            lfn_text = lfn(name)
            _check_lfn(lfn_text)
        except ValueError as exc:
            return _failed(name, "invalid-name", str(exc))
        except Rejected as exc:
            return _failed(name, exc.code, exc.message)
        return _named(name, lfn_text, build_name([ROOT, *lfn_text[1:].split("/")]), [])


def lfn(name: str) -> str:
    """The LFN a CMS name stands for: the name without ``/CMS``, unescaped.

    >>> lfn("/CMS/store/data/Run2018A/EGamma/MINIAOD/17Sep2018-v2/100000/file.root")
    '/store/data/Run2018A/EGamma/MINIAOD/17Sep2018-v2/100000/file.root'

    Raises:
        ValueError: ``name`` is not a CMS name (``/CMS/store/...`` of generic components).
    """
    parts = split_name(name.strip())
    if len(parts) < 3 or parts[0] != ROOT or parts[1] != "store":
        raise ValueError(f"a CMS name is /{ROOT}/store/<LFN path>, got {name!r}")
    if any("/" in part for part in parts):
        raise ValueError(f"a CMS name component holds an escaped '/': {name!r}")
    return "/" + "/".join(parts[1:])


def _is_plain_lfn(text: str) -> bool:
    return (
        len(text) <= MAX_LFN_BYTES
        and text.startswith("/store/")
        and _SAFE_LFN.fullmatch(text) is not None
        and "..." not in text
    )


def _named(text: str, lfn_text: str, name: str, corrections: list[Correction]) -> Translation:
    segments = lfn_text[1:].split("/")
    return Translation(
        input=text,
        scheme=SCHEME,
        name=name,
        filename=segments[-1],
        facets=_facets(segments),
        corrections=corrections,
    )


def _failed(text: str, code: str, message: str) -> Translation:
    result = failure(text, SCHEME, code, message)
    result.facets = dict.fromkeys(FACET_KEYS)
    return result


# -- input forms and checks ------------------------------------------------------------------


def _to_lfn(text: str, corrections: list[Correction]) -> str:
    """The LFN in an LFN, a site path or URL (``root://host//store/...``) or a CMS name."""
    if not text:
        raise Rejected("empty", "nothing to translate: give a CMS LFN (/store/...)")
    if text.startswith(("/CMS/", "ndn:/CMS/")):
        try:
            return lfn(text)
        except ValueError as exc:
            raise Rejected("invalid-name", str(exc)) from None
    if text.startswith("/store/") or text == "/store":
        return text
    at = text.find("/store/")
    if at < 0:
        raise Rejected("not-an-lfn", f"CMS logical file names start with /store/, got {text!r}")
    prefix, lfn_text = text[:at], text[at:]
    # what is removed is reported: it must be text a person can read, as the LFN must
    screen_control(prefix, "site paths and URLs (printable text)")
    if "://" in prefix:
        lfn_text = lfn_text.split("?", 1)[0].split("#", 1)[0]
    corrections.append(
        Correction(
            "site-prefix-removed",
            f"{prefix!r} removed: a name says what the file is, not where it is stored",
        )
    )
    return lfn_text


def _check_lfn(text: str) -> None:
    """Raise unless ``text`` is an LFN that names one file safely inside /store."""
    screen_control(text, "CMS LFNs (printable text)")
    placeholder = _PLACEHOLDER.search(text)
    if placeholder is not None:
        raise Rejected(
            "placeholder",
            f"{placeholder.group()!r} is a pattern or template placeholder, not part of a file "
            f"name: {text!r} stands for many LFNs; expand it first",
        )
    escape = _PERCENT_ESCAPE.search(text)
    if escape is not None:
        raise Rejected(
            "percent-escape",
            f"the LFN holds the percent-escape {escape.group()!r}: CMS LFNs are plain text, "
            "decode it first",
        )
    _check_segments(text)


def _check_segments(text: str) -> None:
    segments = text[1:].split("/")
    if segments[-1] == "":
        raise Rejected("not-a-file", f"{text!r} ends in '/': a directory, not a file")
    if len(segments) < 2 or segments[0] != "store":
        raise Rejected("not-a-file", f"{text!r} names no file below /store")
    if "" in segments:
        raise Rejected("empty-segment", f"{text!r} has an empty segment ('//')")
    try:
        safe_relative_path(segments)
    except UnsafePathError as exc:
        raise Rejected("unsafe-path", f"{text!r} could leave /store: {exc}") from None
    if len(text.encode("utf-8")) > MAX_LFN_BYTES:
        raise Rejected("too-long", f"the LFN is longer than {MAX_LFN_BYTES} bytes")
    longest = max(segments, key=len)
    if len(longest.encode("utf-8")) > MAX_SEGMENT_BYTES:
        raise Rejected(
            "too-long",
            f"segment {longest[:40]!r}... is longer than {MAX_SEGMENT_BYTES} bytes",
        )


# -- facets ----------------------------------------------------------------------------------


def _facets(segments: list[str]) -> Facets:
    """Facets of the segments of an LFN (``["store", ..., filename]``)."""
    facets: Facets = dict.fromkeys(FACET_KEYS)
    facets["filename"] = segments[-1]
    if len(segments) < 3:
        return facets
    facets["area"] = segments[1]
    rest = segments[2:]
    area = segments[1]
    # /store/temp/user/..., /store/backfill/1/data/...: the layout is the inner area's
    while len(rest) > 1 and area in _WRAPPERS:
        if area == "backfill" and rest[0].isdigit():
            rest = rest[1:]
            continue
        if rest[0] not in _AREAS:
            break
        area, rest = rest[0], rest[1:]
    if area in ("user", "group"):
        _user_facets(rest, facets)
    elif area == "results":
        _results_facets(rest, facets)
    else:
        _official_facets(rest, facets)
    return facets


def _official_facets(rest: list[str], facets: Facets) -> bool:
    """era/primary dataset/tier/processing[/run in three groups[/block] | /counter]/file."""
    match = _OFFICIAL.fullmatch("/".join(rest))
    if match is None or match.group(1) in _AREAS or match.group(2) in _AREAS:
        return False
    era, primary, tier, processing, run1, run2, run3, counter = match.groups()
    if run1 is not None:
        counter = str(int(run1 + run2 + run3))
    facets.update(
        era=era, primary_dataset=primary, tier=tier, processing=processing, counter=counter
    )
    return True


def _user_facets(rest: list[str], facets: Facets) -> None:
    """<owner>/[.../]<primary dataset>/<output tag>/<YYMMDD_hhmmss>/<counter>/<file> (CRAB)."""
    # a Rucio user container holds an official layout: /store/user/rucio/<user>/mc/<era>/...
    for j in range(1, min(len(rest), 4)):
        if rest[j] in _OFFICIAL_AREAS and _official_facets(rest[j + 1 :], facets):
            return
    if len(rest) >= 6 and _CRAB_TIMESTAMP.fullmatch(rest[-3]) and rest[-2].isdigit():
        facets.update(primary_dataset=rest[-5], processing=rest[-4], counter=rest[-2])


def _results_facets(rest: list[str], facets: Facets) -> None:
    """<group>/.../<primary dataset>/<tier>/<processed dataset>/<counter>/<file>."""
    if len(rest) >= 6 and _TIER.fullmatch(rest[-4]) and rest[-2].isdigit():
        facets.update(
            primary_dataset=rest[-5], tier=rest[-4], processing=rest[-3], counter=rest[-2]
        )
