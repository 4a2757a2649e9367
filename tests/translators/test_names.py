import pytest

from ndnsci.translators.names import build_name, escape_component, split_name, unescape_component


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
