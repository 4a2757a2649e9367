"""NDN name URIs and the relative paths names map to: the one codec every part of ndnsci uses.

Names are written in the NDN URI scheme (NDN packet spec, "NDN URI Scheme"): each component is
percent-encoded except the unreserved characters ``A-Z a-z 0-9 - . _ ~`` (escapes in upper-case
hex), and a component made only of periods, the empty one included, gets three more periods
(``...`` is the empty component, ``....`` is ``.``). Translators emit generic components with
:func:`build_name`; the data plane (:mod:`ndnsci.ndn.name`) encodes the typed ones (version,
segment) and writes every component value with :func:`value_to_uri`, so both agree on every name.

Peers differ on the periods rule: ndn-cxx and NDNts (the portal's NDN library) follow the spec;
python-ndn and NDNd read a periods-only component literally. The wire encoding of a name is the
same everywhere (``tests/translators/test_names.py`` checks ours against python-ndn's); only the
URI text of such a component differs, and the catalog refuses ``.``/``..`` components anyway.

:func:`safe_relative_path` is the one check that a name or a path stays below the directory it
is joined to (downloads, served trees, manifests, original paths, CMS LFNs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

_SEPARATORS = ("/", "\\", "\x00")
# each byte as urllib.parse.quote_from_bytes(safe="-._~") writes it: the fetch path does not
# import urllib.parse (with ipaddress, ~10 M instructions of a fetch's start-up), nor re (with
# enum, ~9 M): the unreserved characters are found by bytes.translate, the escapes by str.find
_UNRESERVED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
_QUOTED: list[str] = []  # built on first use (~0.3 M instructions): a fetch's names are plain
_HEX = "0123456789ABCDEFabcdef"


def _plain_bytes(value: bytes) -> bool:
    """Only unreserved bytes: ``re.fullmatch(rb"[A-Za-z0-9._~-]*", value)``."""
    return not value.translate(None, _UNRESERVED)


def _plain_text(text: str) -> bool:
    """Only unreserved characters: ``re.fullmatch(r"[A-Za-z0-9._~-]*", text)``."""
    return text.isascii() and not text.encode("ascii").translate(None, _UNRESERVED)


def _bad_escape(text: str) -> bool:
    """A ``%`` not followed by two hex digits: ``re.search(r"%(?![0-9A-Fa-f]{2})", text)``."""
    at = text.find("%")
    while at >= 0:
        pair = text[at + 1 : at + 3]
        if len(pair) < 2 or pair.strip(_HEX):
            return True
        at = text.find("%", at + 1)
    return False


class UnsafePathError(ValueError):
    """A name or path that could leave the directory it is meant to stay below."""


def value_to_uri(value: bytes) -> str:
    """One component value (bytes) in NDN URI form.

    >>> value_to_uri(b"tas_Amon.nc"), value_to_uri(b"a b"), value_to_uri(b"."), value_to_uri(b"")
    ('tas_Amon.nc', 'a%20b', '....', '...')
    """
    if _plain_bytes(value):
        text = value.decode("ascii")
    else:
        if not _QUOTED:  # a race builds it twice, the same
            _QUOTED[:] = [chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in range(256)]
        text = "".join([_QUOTED[b] for b in value])
    return text + "..." if not text.strip(".") else text


def value_from_uri(text: str) -> bytes:
    """The component value a URI component stands for (the inverse of :func:`value_to_uri`).

    Characters outside the unreserved set are accepted as their UTF-8 bytes (loose input).

    Raises:
        ValueError: a ``%`` not followed by two hex digits, or a periods-only component of
            fewer than three periods (``.`` and ``..`` name no component).
    """
    if not text.strip("."):
        if len(text) < 3:
            raise ValueError(
                f"invalid name component {text!r}: '.' and '..' name no component in an NDN "
                "URI (a component of periods is written with three more: '....' is '.')"
            )
        return text[3:].encode("ascii")
    if "%" not in text:
        return text.encode("utf-8", "surrogateescape")
    # one spelling per component: a '%' not followed by two hex digits is not an escape
    if _bad_escape(text):
        raise ValueError(f"invalid percent-escape in name component {text!r}")
    # urllib.parse.unquote_to_bytes, each '%' being followed by two hex digits
    head, *escaped = text.encode("utf-8").split(b"%")
    return head + b"".join([bytes((int(bit[:2], 16),)) + bit[2:] for bit in escaped])


def escape_component(text: str) -> str:
    """One component (text, UTF-8) in NDN URI form."""
    if _plain_text(text) and text.strip("."):
        return text  # the common case, without a round trip through bytes
    return value_to_uri(text.encode("utf-8"))


def unescape_component(text: str) -> str:
    """Inverse of :func:`escape_component`; ValueError on a malformed component (or one whose
    bytes are not UTF-8)."""
    if _plain_text(text) and text.strip("."):
        return text
    return value_from_uri(text).decode("utf-8")


def build_name(components: list[str]) -> str:
    """``["CMIP5", "output1"]`` -> ``"/CMIP5/output1"``."""
    return "/" + "/".join(escape_component(c) for c in components)


def split_name(name: str) -> list[str]:
    """``"/CMIP5/output1"`` -> ``["CMIP5", "output1"]``; accepts an ``ndn:`` prefix.

    Raises ValueError when the name is not an NDN URI of generic components.
    """
    if name.startswith("ndn:"):
        name = name[4:]
    if not name.startswith("/"):
        raise ValueError(f"an NDN name starts with '/': {name!r}")
    parts = name[1:].split("/")
    if parts and parts[-1] == "":
        parts.pop()
    out = []
    for part in parts:
        if "=" in part:
            raise ValueError(f"typed component {part!r} is not part of a file name")
        out.append(unescape_component(part))
    return out


def safe_relative_path(path: str | Sequence[str]) -> str:
    """``path`` (``/``-separated text, or its components) as a relative path that stays below
    any directory it is joined to.

    >>> safe_relative_path("CMIP5/output1/tas.nc"), safe_relative_path(["CMS", "store", "a.root"])
    ('CMIP5/output1/tas.nc', 'CMS/store/a.root')

    Raises:
        UnsafePathError: the path is empty or absolute, or a component is empty, ``.``, ``..``,
            or holds a separator (``/``, ``\\``) or NUL: joined to a directory, it could
            name the directory itself, its parent, or something outside it.
    """
    if isinstance(path, str):
        if path.startswith(("/", "\\")):
            raise UnsafePathError(f"{path!r} is an absolute path, not one below a directory")
        parts: Sequence[str] = path.split("/")
    else:
        parts = path
    if not parts or parts == [""]:
        raise UnsafePathError("an empty path names no file")
    for part in parts:
        if part in ("", ".", "..") or any(s in part for s in _SEPARATORS):
            raise UnsafePathError(
                f"{'/'.join(parts)!r} has the component {part!r}: not a plain file or "
                "directory name (empty, '.', '..', or holding '/', '\\\\' or NUL)"
            )
    return "/".join(parts)
