import pytest

from ndnsci_translators import (
    Translator,
    UnknownSchemeError,
    detect,
    get_translator,
    list_schemes,
    reverse,
    translate,
)


def test_builtin_schemes_are_registered_through_entry_points():
    assert {"cmip5", "cmip6", "cms"} <= set(list_schemes())
    for scheme in list_schemes():
        translator = get_translator(scheme)
        assert isinstance(translator, Translator)
        assert translator.scheme == scheme


def test_aggregation_keys_are_facets_of_their_scheme():
    for scheme in list_schemes():
        aggregation = get_translator(scheme).aggregation
        if aggregation is not None:
            keys = {aggregation.variable, *aggregation.groupby}
            assert keys <= set(get_translator(scheme).facet_keys), scheme


def test_unknown_scheme_lists_the_valid_ones():
    with pytest.raises(UnknownSchemeError) as info:
        get_translator("cmip7")
    assert "cmip5, cmip6, cms" in str(info.value)


@pytest.mark.parametrize(
    ("text", "scheme"),
    [
        ("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc", "cmip5"),
        (
            "/badc/cmip5/data/cmip5/output1/MOHC/HadCM3/historical/mon/atmos/Amon/r1i1p1/"
            "v20110823/tas/tas_Amon_HadCM3_historical_r1i1p1_185912-188411.nc",
            "cmip5",
        ),
        ("tas_Amon_IPSL-CM6A-LR_historical_r1i1p1f1_gr_185001-201412.nc", "cmip6"),
        (
            "/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/"
            "NANOAODSIM/106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root",
            "cms",
        ),
    ],
)
def test_auto_detection_picks_the_scheme(text, scheme):
    result = translate(text)
    assert result.ok, result.error
    assert result.scheme == scheme
    assert set(result.facets) == set(get_translator(scheme).facet_keys)


@pytest.mark.parametrize("text", ["", "hello.txt", "\x00\x01", "/" * 5000, "README"])
def test_unrecognised_input_is_a_structured_error(text):
    result = translate(text)
    assert not result.ok
    assert result.error is not None and result.error.code
    assert result.to_dict()["ok"] is False


def test_reverse_dispatches_on_the_root_component():
    name = translate("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc").name
    assert name is not None and name.startswith("/CMIP5/")
    back = reverse(name)
    assert back.ok
    assert back.filename == "tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc"


def test_reverse_of_an_unknown_root_is_a_structured_error():
    back = reverse("/NOAA/x/y.nc")
    assert not back.ok
    assert back.error is not None and back.error.code == "unknown-root"
    assert "/CMIP5" in back.error.message


def test_attributes_decide_the_scheme_only_when_the_text_does_not():
    cmip5 = {"project_id": "CMIP5"}
    assert detect("renamed.nc") is None
    assert detect("renamed.nc", cmip5) is get_translator("cmip5")
    assert detect("renamed.nc", {"mip_era": "CMIP6"}) is get_translator("cmip6")
    assert detect("renamed.nc", {"title": "no project"}) is None
    # a name's structure outweighs the attributes
    assert detect("tas_Amon_IPSL-CM6A-LR_historical_r1i1p1f1_gr_185001-201412.nc", cmip5) is (
        get_translator("cmip6")
    )
    result = translate("renamed.nc", attributes={"title": "no project"})
    assert result.error is not None and result.error.code == "unknown-scheme"


def test_guess_attributes_claims_nothing_by_default():
    assert get_translator("cms").guess_attributes({"project_id": "CMIP5"}) == 0
    assert Translator.guess_attributes(get_translator("cms"), {}) == 0


@pytest.mark.parametrize("bad", ["\x00", "\x1b", "\x7f", "\x85", "\udcff"])
@pytest.mark.parametrize(
    ("scheme", "text"),
    [
        ("cmip5", "tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc"),
        ("cmip6", "tas_Amon_IPSL-CM6A-LR_historical_r1i1p1f1_gr_185001-201412.nc"),
        ("cms", "/store/mc/Run3/TT/NANOAODSIM/130X-v1/2520000/0C9E1F2B.root"),
    ],
)
def test_every_scheme_screens_the_same_control_characters(scheme, text, bad):
    """One screen (translators._core.control_character), one error code, in every scheme."""
    assert translate(text, scheme).ok
    result = translate(text[:8] + bad + text[8:], scheme)
    assert result.error is not None and result.error.code == "control-character"
    assert "offset 8" in result.error.message
