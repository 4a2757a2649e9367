"""NDN name URIs for translators: build and split names of generic components.

Names are written in the NDN URI scheme (NDN packet spec, "NDN URI Scheme"): each component is
percent-encoded except the unreserved characters ``A-Z a-z 0-9 - . _ ~``, and a component made only
of periods gets three more periods. Translators only emit generic components; typed components
(version, segment) are added by the data plane.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

_SAFE = "-._~"
_NEEDS_ESCAPE = re.compile(r"[^A-Za-z0-9\-._~]")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def escape_component(text: str) -> str:
    """One component in NDN URI form."""
    if _NEEDS_ESCAPE.search(text) is not None:
        text = quote(text, safe=_SAFE)
    if text.strip(".") == "":
        return text + "..."
    return text


def unescape_component(text: str) -> str:
    """Inverse of :func:`escape_component`; raises ValueError on a malformed component."""
    if text.strip(".") == "":
        if len(text) < 3:
            raise ValueError(f"invalid name component {text!r}: periods-only needs 3 or more")
        return text[3:]
    if "%" in text:
        # one spelling per component: a '%' not followed by two hex digits is not an escape
        if _BAD_ESCAPE.search(text) is not None:
            raise ValueError(f"invalid percent-escape in name component {text!r}")
        return unquote(text, errors="strict")
    return text


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
