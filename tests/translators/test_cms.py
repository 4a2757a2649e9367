"""CMS naming scheme: logical file names <-> /CMS/store/... names, one component per segment."""

import csv
from pathlib import Path

import pytest

from ndnsci_translators import get_translator, translate
from ndnsci_translators.cms import FACET_KEYS, CMSTranslator, lfn
from ndnsci_translators.names import split_name

CORPORA = Path(__file__).parents[1] / "data" / "corpora"
CMS = CMSTranslator()

MC = (
    "/store/mc/RunIISummer20UL18NanoAODv9/TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8/NANOAODSIM/"
    "106X_upgrade2018_realistic_v16_L1v1-v1/280000/0C9E1F2B.root"
)


def rows(name):
    with open(CORPORA / name, newline="") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


LFNS = rows("cms_lfns.tsv")[1:]
MALFORMED = rows("cms_lfns_malformed.tsv")


def facets(**known):
    return {**dict.fromkeys(FACET_KEYS), **known}


def test_registered_with_the_contract_facets_in_order():
    assert isinstance(get_translator("cms"), CMSTranslator)
    assert CMS.root == "CMS"
    assert CMS.facet_keys == (
        "area", "era", "primary_dataset", "tier", "processing", "counter", "filename"
    )  # fmt: skip


def test_mc_lfn_is_the_name_under_cms():
    result = CMS.translate(MC)
    assert result.ok, result.error
    assert result.name == "/CMS" + MC
    assert result.filename == "0C9E1F2B.root"
    assert result.corrections == []
    assert result.facets == facets(
        area="mc",
        era="RunIISummer20UL18NanoAODv9",
        primary_dataset="TTTo2L2Nu_TuneCP5_13TeV-powheg-pythia8",
        tier="NANOAODSIM",
        processing="106X_upgrade2018_realistic_v16_L1v1-v1",
        counter="280000",
        filename="0C9E1F2B.root",
    )


def test_one_name_component_per_lfn_segment():
    assert split_name(CMS.translate(MC).name) == ["CMS", *MC[1:].split("/")]


@pytest.mark.parametrize(
    ("lfn_text", "expected"),
    [
        (  # run number in three groups
            "/store/data/Run2010A/Cosmics/RECO/v4/000/143/316/F65F4AFE-14AC-DF11-B3BE-00215E21F32E.root",
            facets(
                area="data", era="Run2010A", primary_dataset="Cosmics", tier="RECO",
                processing="v4", counter="143316",
            ),
        ),
        (  # run groups followed by a block counter (2015 and later)
            "/store/data/Run2024C/ParkingVBF5/RAW/v1/000/380/115/00000/"
            "b4c0513e-f732-42b1-858d-572c86ce4b97.root",
            facets(
                area="data", era="Run2024C", primary_dataset="ParkingVBF5", tier="RAW",
                processing="v1", counter="380115",
            ),
        ),
        (  # re-reconstruction: a block counter, no run
            "/store/data/Run2017F/SingleMuon/MINIAOD/17Nov2017-v1/70001/"
            "DC73F8F1-A5EA-E711-A5F3-141877410B4D.root",
            facets(
                area="data", era="Run2017F", primary_dataset="SingleMuon", tier="MINIAOD",
                processing="17Nov2017-v1", counter="70001",
            ),
        ),
        (
            "/store/unmerged/RunIIAutumn18FSPremix/PMSSM_set_1_prompt_1_TuneCP2_13TeV-pythia8/AODSIM/"
            "GridpackScan_102X_upgrade2018_realistic_v15-v1/2820000/"
            "AFA1B405-D64B-4942-B0A4-DD8765B0C8A7.root",
            facets(
                area="unmerged", era="RunIIAutumn18FSPremix",
                primary_dataset="PMSSM_set_1_prompt_1_TuneCP2_13TeV-pythia8", tier="AODSIM",
                processing="GridpackScan_102X_upgrade2018_realistic_v15-v1", counter="2820000",
            ),
        ),
        (
            "/store/relval/CMSSW_4_2_0_pre4/RelValMinBias/GEN-SIM-DIGI-RAW-HLTDEBUG/MC_42_V1-v1/0001/"
            "4C824492-2639-E011-9506-001A928116F0.root",
            facets(
                area="relval", era="CMSSW_4_2_0_pre4", primary_dataset="RelValMinBias",
                tier="GEN-SIM-DIGI-RAW-HLTDEBUG", processing="MC_42_V1-v1", counter="0001",
            ),
        ),
        (  # backfill/<n>/ in front of a data layout
            "/store/backfill/1/data/Run2010A/Cosmics/RECO/v4/000/143/316/0000/"
            "F65F4AFE-14AC-DF11-B3BE-00215E21F32E.root",
            facets(
                area="backfill", era="Run2010A", primary_dataset="Cosmics", tier="RECO",
                processing="v4", counter="143316",
            ),
        ),
        (  # CRAB output: <user>/<primary dataset>/<output tag>/<task time>/<counter>/<file>
            "/store/user/szaleski/Cosmics/MuonAnalysis_Oct_2015/151027_193243/0000/"
            "CosmicMuonAnalysis_2015_108.root",
            facets(
                area="user", primary_dataset="Cosmics", processing="MuonAnalysis_Oct_2015",
                counter="0000",
            ),
        ),
        (
            "/store/temp/user/belforte.be1f4dc5be8664cbd145bf008f5399adf42b086f/GenericTTbar/"
            "Stefano-Test-220309/220310_151125/0000/kk_1.root",
            facets(
                area="temp", primary_dataset="GenericTTbar", processing="Stefano-Test-220309",
                counter="0000",
            ),
        ),
        (  # a Rucio user container holding an official layout
            "/store/temp/user/rucio/rchauhan/mc/RunIISummer20UL17NanoAODv9/"
            "GluGluToContinToZZTo2e2tau_TuneCP5_13TeV-mcfm701-pythia8/NANOAODSIM/"
            "106X_mc2017_realistic_v9-v2/270000/701A10AD-FC1D-E145-A402-D0209482A5A6.root",
            facets(
                area="temp", era="RunIISummer20UL17NanoAODv9",
                primary_dataset="GluGluToContinToZZTo2e2tau_TuneCP5_13TeV-mcfm701-pythia8",
                tier="NANOAODSIM", processing="106X_mc2017_realistic_v9-v2", counter="270000",
            ),
        ),
        (
            "/store/results/qcd/StoreResults/QCD_Pt_40_2017_14TeV_612_SLHC6_patch1/USER/"
            "QCD_Pt_40_2017_14TeV_612_SLHC6_patch1_6be6d116203e430d91d7e1d6d9a88cd7-v1/00000/"
            "028DDC2A-63A8-E311-BB40-842B2B5546DE.root",
            facets(
                area="results", primary_dataset="QCD_Pt_40_2017_14TeV_612_SLHC6_patch1",
                tier="USER",
                processing="QCD_Pt_40_2017_14TeV_612_SLHC6_patch1_6be6d116203e430d91d7e1d6d9a88cd7-v1",
                counter="00000",
            ),
        ),
        (  # WMAgent unmerged output has no era or primary dataset: not guessed
            "/store/temp/WMAgent/unmerged/RECO/WMAgentCommissioning10-v39scf/0000/output.root",
            facets(area="temp"),
        ),
        (
            "/store/group/phys_tau/TauFW/nano/UL2018/x/NANOAODSIM/A02A0DD5.root",
            facets(area="group"),
        ),
        ("/store/abc/xyz.root", facets(area="abc")),
        ("/store/data/file1.root", facets(area="data")),
        ("/store/x.root", facets()),
    ],
)  # fmt: skip
def test_facets_of_each_store_area(lfn_text, expected):
    result = CMS.translate(lfn_text)
    assert result.ok, result.error
    assert result.name == "/CMS" + lfn_text
    expected["filename"] = lfn_text.rsplit("/", 1)[1]
    assert result.facets == expected


@pytest.mark.parametrize(
    "location",
    [
        "root://cms-xrd-global.cern.ch/",
        "root://eoscms.cern.ch//eos/cms",
        "davs://eoscms.cern.ch:443/eos/cms",
        "/eos/cms",
        "file:/pnfs/fnal.gov/usr/cms/WAX/11",
    ],
)
def test_site_prefix_is_removed_from_a_physical_file_name(location):
    result = CMS.translate(location + MC)
    assert result.name == "/CMS" + MC
    assert [c.rule for c in result.corrections] == ["site-prefix-removed"]
    assert result.input == location + MC


def test_a_cms_name_given_to_translate_is_its_own_name():
    result = CMS.translate("/CMS" + MC)
    assert result.name == "/CMS" + MC and result.corrections == []


def test_characters_outside_the_unreserved_set_are_escaped_and_round_trip():
    text = "/store/user/jdoe/ntuples/Zmumu run=2 (ü)/out 1.root"
    result = CMS.translate(text)
    assert result.ok, result.error
    assert "%20" in result.name and "%3D" in result.name and "%C3%BC" in result.name
    assert lfn(result.name) == text
    assert CMS.reverse(result.name).facets == result.facets


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("", "empty"),
        ("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc", "not-an-lfn"),
        ("store/mc/x.root", "not-an-lfn"),
        ("/store", "not-a-file"),
        ("/store/", "not-a-file"),
        ("/store/mc/RunIISummer20UL18NanoAODv9/", "not-a-file"),
        ("/store/.*\\.root", "placeholder"),
        ("/store/...root", "placeholder"),
        ("/store/temp/user/.../0000/output_1.root", "placeholder"),
        ("/store/data/%s/%s/file.root", "placeholder"),
        (
            "/store/user/tucker/JetHT/NtupleV27m_2017/190802_112517/0000/ntuple_%i.root",
            "placeholder",
        ),
        ("/store/user/x/out_%(job)s.root", "placeholder"),
        ("/store/user/x/out_%05d.root", "placeholder"),
        ("/store/user/x/out_{}.root", "placeholder"),
        ("/store/user/$USER/out.root", "placeholder"),
        ("/store/user/x/out_[0-9].root", "placeholder"),
        ("/store/user/x/out_?.root", "placeholder"),
        ("/store/user/x%2F..%2F..%2Fetc/passwd", "percent-escape"),
        ("/store/user/x/a%41.root", "percent-escape"),
        ("/store/user/x/a\x00.root", "control-character"),
        ("/store/user/x/a\nb.root", "control-character"),
        ("/store/user/x/a\udcff.root", "control-character"),
        ("root://host\x00.cern.ch//store/user/x/a.root", "control-character"),
        ("/eos/cms\x1b[2J/store/user/x/a.root", "control-character"),
        ("/store/mc//x.root", "empty-segment"),
        ("/store/../etc/passwd", "unsafe-path"),
        ("/store/mc/../../etc/passwd", "unsafe-path"),
        ("/store/./x.root", "unsafe-path"),
        ("/store/user/" + "x" * 256 + ".root", "too-long"),
        ("/store/user/" + "/".join(["x" * 200] * 6) + ".root", "too-long"),
        ("/CMS/data/x.root", "invalid-name"),
    ],
)
def test_what_cannot_be_named_gets_a_structured_error(text, code):
    result = CMS.translate(text)
    assert not result.ok
    assert result.name is None
    assert result.error.code == code, result.error
    assert result.error.message
    assert tuple(result.facets) == FACET_KEYS


def test_a_placeholder_error_names_the_placeholder():
    result = CMS.translate("/store/MultipleFileSplit%s.root")
    assert "'%s'" in result.error.message


@pytest.mark.parametrize(
    "text",
    ["/store/" + "a/" * 600 + "b.root", "/store/\x7f", "/store/%", "/store/100%.root", "/" * 5000],
)
def test_hostile_input_never_raises_and_never_escapes_store(text):
    result = CMS.translate(text)
    if result.ok:
        components = split_name(result.name)
        assert components[:2] == ["CMS", "store"]
        assert not {".", "..", ""} & set(components)
        assert lfn(result.name) == text
    else:
        assert result.error.code


# -- corpora ---------------------------------------------------------------------------------


def test_every_corpus_lfn_is_named_by_itself_and_round_trips():
    for lfn_text, area, *_ in LFNS:
        result = CMS.translate(lfn_text)
        assert result.ok, (lfn_text, result.error)
        assert result.name == "/CMS" + lfn_text
        assert result.corrections == []
        assert result.facets["area"] == area
        assert result.facets["filename"] == result.filename == lfn_text.rsplit("/", 1)[1]
        back = CMS.reverse(result.name)
        assert back.ok, back.error
        assert (back.name, back.filename, back.facets) == (
            result.name,
            result.filename,
            result.facets,
        )
        assert lfn(back.name) == lfn_text


def test_official_layouts_in_the_corpus_get_every_facet():
    full = [
        CMS.translate(row[0])
        for row in LFNS
        if row[1] in ("mc", "unmerged", "relval") and row[3] != "2 comps after /store/mc"
    ]
    incomplete = [r.input for r in full if None in r.facets.values()]
    assert len(incomplete) <= 4, incomplete  # /store/mc/prod/file.root and the like


MALFORMED_EXPECTED = {
    "/store/.*\\.root": "placeholder",
    "/store/.....root": "placeholder",
    "/store/...root": "placeholder",
    "/store/MultipleFileSplit%s.root": "placeholder",
    "/store/data/%s/%s/file.root": "placeholder",
    "/store/temp/user/.../0000/output_1.root": "placeholder",
    "/store/test/%s/test/file.root": "placeholder",
    "/store/abc/xyz.root": facets(area="abc", filename="xyz.root"),
    "/store/data/file1.root": facets(area="data", filename="file1.root"),
    "/store/file1.root": facets(filename="file1.root"),
    "/store/temp/file.root": facets(area="temp", filename="file.root"),
    "/store/unmerged/fileA.root": facets(area="unmerged", filename="fileA.root"),
    "/store/x.root": facets(filename="x.root"),
}


@pytest.mark.parametrize("text", sorted(MALFORMED_EXPECTED))
def test_short_or_placeholder_lfns_from_real_code(text):
    expected = MALFORMED_EXPECTED[text]
    result = CMS.translate(text)
    if isinstance(expected, str):
        assert result.error is not None and result.error.code == expected
    else:
        assert result.ok and result.facets == expected


def test_every_malformed_corpus_line_is_named_or_refused_with_a_reason():
    codes = {}
    for text, _source in MALFORMED:
        result = CMS.translate(text)
        assert result.ok or (result.error.code and result.error.message), text
        key = result.error.code if result.error else "named"
        codes[key] = codes.get(key, 0) + 1
    assert set(codes) == {"named", "placeholder"}
    assert codes["named"] == 9  # /store/x.root, /store/abc/xyz.root, /store/data/file1.root, ...


# -- reverse ---------------------------------------------------------------------------------


def test_reverse_gives_the_file_name_and_the_lfn_is_the_name_without_cms():
    back = CMS.reverse("ndn:/CMS" + MC)
    assert back.ok
    assert back.name == "/CMS" + MC
    assert back.filename == "0C9E1F2B.root"
    assert back.facets == CMS.translate(MC).facets
    assert lfn(back.name) == MC


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("/CMIP6/CMIP/x", "invalid-name"),
        ("/CMS", "invalid-name"),
        ("/CMS/store", "invalid-name"),
        ("/CMS/mc/x.root", "invalid-name"),
        ("/CMS/store/a%2Fb/x.root", "invalid-name"),
        ("/CMS/store/mc/x.root/v=1/seg=0", "invalid-name"),
        ("/CMS/store/...../etc/passwd", "unsafe-path"),
        ("/CMS/store/mc/.../x.root", "empty-segment"),
        ("/CMS/store/x%2500.root", "percent-escape"),
        ("/CMS/store/x%00.root", "control-character"),
    ],
)
def test_reverse_refuses_names_that_are_not_lfns(name, code):
    back = CMS.reverse(name)
    assert not back.ok
    assert back.error.code == code, back.error
    assert back.input == name


# -- auto detection --------------------------------------------------------------------------


def test_guess_claims_lfns_pfns_and_cms_names():
    assert CMS.guess(MC) >= 90
    assert CMS.guess("/CMS" + MC) >= 90
    assert CMS.guess("root://cms-xrd-global.cern.ch/" + MC) >= 80
    assert translate(MC).scheme == "cms"
    assert translate("root://cms-xrd-global.cern.ch/" + MC).scheme == "cms"


def test_guess_leaves_climate_names_alone():
    climate = [row[0] for row in rows("cmip5_paths.tsv")[1:] + rows("cmip6_paths.tsv")[1:]]
    assert max(CMS.guess(text) for text in climate) == 0
