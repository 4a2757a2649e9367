import pytest

from ndnsci_translators.names import build_name, escape_component, split_name, unescape_component


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("tas_Amon_HadCM3.nc", "tas_Amon_HadCM3.nc"),
        ("a b", "a%20b"),
        ("a/b", "a%2Fb"),
        ("v=1", "v%3D1"),
        ("100%", "100%25"),
        ("", "..."),
        (".", "...."),
        ("..", "....."),
        ("é", "%C3%A9"),
    ],
)
def test_component_escaping_round_trips(text, escaped):
    assert escape_component(text) == escaped
    assert unescape_component(escaped) == text


def test_build_and_split_are_inverse():
    components = ["CMIP5", "output1", "a/b", "..", "x y"]
    name = build_name(components)
    assert name == "/CMIP5/output1/a%2Fb/...../x%20y"
    assert split_name(name) == components
    assert split_name("ndn:" + name + "/") == components


@pytest.mark.parametrize(
    "bad", ["CMIP5/x", "/CMIP5/..", "/CMIP5/v=3", "/x/%ff", "/x/%ZZ", "/x/a%2"]
)
def test_split_rejects_what_is_not_a_name_of_generic_components(bad):
    with pytest.raises(ValueError):
        split_name(bad)


def test_the_data_plane_writes_and_reads_names_with_the_same_codec():
    """One codec: a name the translators build is the name the NDN data plane sends."""
    from ndnsci.ndn.name import from_uri, to_uri

    components = ["CMS", "store", "...", "", "a b", "é.root"]
    name = build_name(components)
    encoded = from_uri(name)
    assert to_uri(encoded) == name
    assert [c[2:].decode() for c in encoded] == components  # short generic TLVs: T, L, value


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("CMIP5/output1/tas.nc", "CMIP5/output1/tas.nc"),
        (["CMS", "store", "a b.root"], "CMS/store/a b.root"),
        ("...", "..."),  # three periods is a name like any other
    ],
)
def test_safe_relative_paths_are_returned_joined(path, expected):
    from ndnsci_translators.names import safe_relative_path

    assert safe_relative_path(path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "\\\\server\\share",
        "..",
        "a/../../b",
        "a/./b",
        "a//b",
        "a/b/",
        "a\\..\\b",
        "a\x00b",
        [],
        ["a", ".."],
        ["a/b"],
        ["a", ""],
    ],
)
def test_unsafe_relative_paths_are_refused_with_the_reason(path):
    from ndnsci_translators.names import UnsafePathError, safe_relative_path

    with pytest.raises(UnsafePathError, match=r"path|component"):
        safe_relative_path(path)


def test_percent_escapes_are_urllibs_without_importing_it():
    """value_to_uri / value_from_uri escape as urllib.parse does (which the fetch path does not
    import): every byte, and loose input with escapes of either case."""
    import random
    import urllib.parse

    from ndnsci_translators.names import value_from_uri, value_to_uri

    for byte in range(256):
        value = bytes((byte, byte)) + b"x"
        assert value_to_uri(value) == urllib.parse.quote_from_bytes(value, safe="-._~")
        assert value_from_uri(value_to_uri(value)) == value
    rng = random.Random(14)
    pieces = ["%41", "%e2%82%AC", "é", "a", "%2F", "%00", "~", "%fF", " "]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        assert value_from_uri(text) == urllib.parse.unquote_to_bytes(text), text


def test_the_character_checks_are_the_regular_expressions_they_replace():
    """The codec finds unreserved characters and bad escapes without re (with enum ~9 M
    instructions of a fetch's start-up, DEVELOPERS.md "Start-up budget"): the same answers as
    the expressions it used, on every byte and character class, and on random text."""
    import random
    import re

    from ndnsci_translators import names

    plain_text = re.compile(r"[A-Za-z0-9._~-]*")
    plain_bytes = re.compile(rb"[A-Za-z0-9._~-]*")
    bad_escape = re.compile(r"%(?![0-9A-Fa-f]{2})")
    for code in [*range(256), 0x130, 0x212A, 0xFF21, 0x1D400, 0xD800]:
        for text in (chr(code), f"a{chr(code)}b", f"%{chr(code)}0", f"%0{chr(code)}"):
            assert names._plain_text(text) == bool(plain_text.fullmatch(text)), text
            assert names._bad_escape(text) == bool(bad_escape.search(text)), text
        for value in (bytes((code % 256,)), bytes((65, code % 256, 66))):
            assert names._plain_bytes(value) == bool(plain_bytes.fullmatch(value)), value
    rng = random.Random(14)
    pieces = ["%", "%4", "%41", "%g1", "%Ab", "a", "Z", "9", ".", "-", "_", "~", "é", " ", "%%"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert names._plain_text(text) == bool(plain_text.fullmatch(text)), text
        assert names._bad_escape(text) == bool(bad_escape.search(text)), text
        value = text.encode("utf-8")
        assert names._plain_bytes(value) == bool(plain_bytes.fullmatch(value)), value
