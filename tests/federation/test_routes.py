"""The prefixes that route another site's names to it."""

from __future__ import annotations

from ndnsci.ndn import keys
from ndnsci_catalog.federation.routes import covering_prefixes, key_names

from .test_envelope import KEY


def names(site: str, *paths: str) -> list[tuple[str, str]]:
    return [(p, site) for p in paths]


def test_sites_holding_different_institutes_get_one_prefix_each() -> None:
    records = names("a", "/CMIP5/output1/MOHC/HadCM3/x.nc", "/CMIP5/output1/MOHC/HadGEM/y.nc")
    records += names("b", "/CMIP5/output1/MIROC/MIROC5/z.nc", "/CMS/store/data/f.root")
    records += names("me", "/CMIP5/output1/CCCma/CanESM2/w.nc")
    assert covering_prefixes(records, "me") == {
        "a": {"/CMIP5/output1/MOHC"},
        "b": {"/CMIP5/output1/MIROC", "/CMS"},
    }


def test_a_root_held_by_one_site_is_routed_whole() -> None:
    assert covering_prefixes(names("a", "/CMS/store/a.root", "/CMS/store/b.root"), "me") == {
        "a": {"/CMS"}
    }


def test_prefixes_are_whole_components() -> None:
    """/x/MOHC-X sorts between /x/MOHC and /x/MOHC/...: the route stops at the component."""
    records = names("a", "/x/MOHC/1.nc", "/x/MOHC/2.nc") + names("me", "/x/MOHC-X/3.nc")
    assert covering_prefixes(records, "me") == {"a": {"/x/MOHC"}}


def test_files_of_two_sites_in_one_directory_get_a_route_each() -> None:
    records = names("a", "/d/1.nc", "/d/3.nc") + names("me", "/d/2.nc", "/d/4.nc")
    assert covering_prefixes(records, "me") == {"a": {"/d/1.nc", "/d/3.nc"}}


def test_no_routes_for_the_local_site() -> None:
    assert covering_prefixes(names("me", "/a/b", "/a/c"), "me") == {}


def test_key_names_sit_under_each_root() -> None:
    key_id = keys.key_id(KEY.public)
    assert key_names({"/CMIP5/output1/MOHC", "/CMS", "/CMIP5/output1/X"}, KEY.public.hex()) == {
        f"/CMIP5/32=key/{key_id}",
        f"/CMS/32=key/{key_id}",
    }
