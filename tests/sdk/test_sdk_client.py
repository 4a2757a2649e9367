"""ndnsci.Catalog and AsyncCatalog against the real catalog server (tests/conftest.py: stack)."""

from __future__ import annotations

import asyncio
import time

import pytest

import ndnsci
from ndnsci.errors import (
    CatalogError,
    CatalogUnavailableError,
    NdnsciError,
    NotInCatalogError,
    QueryError,
    UnknownFacetError,
)

HADCM3_TAS = {"model": "HadCM3", "variable": "tas"}


@pytest.fixture
def cat(stack):
    with ndnsci.Catalog(stack.catalog_url) as catalog:
        yield catalog


def test_search_returns_typed_files(cat):
    found = cat.search(**HADCM3_TAS, experiment="historical")
    assert len(found) == 2
    first = found[0]
    assert isinstance(first, ndnsci.File)
    assert first.scheme == "cmip5" and first.facets["model"] == "HadCM3"
    assert first.name.startswith("/CMIP5/output1/MOHC/HadCM3/historical/")
    assert first.path == first.name.lstrip("/")
    assert len(first.sha256 or "") == 64 and (first.size or 0) > 0
    assert [f.facets["time_range"] for f in found] == ["199001-199912", "200001-200512"]


def test_results_are_read_page_by_page(stack):
    with ndnsci.Catalog(stack.catalog_url, page_size=4) as cat:
        found = cat.search(scheme="cmip5")
        names = [f.name for f in found]
        assert len(names) == len(found) == 33
        assert names == sorted(names) and len(set(names)) == 33
        assert found[-1].name == names[-1] and found[5].name == names[5]
        assert [f.name for f in found[3:9]] == names[3:9]
        assert len(found._pages) == -(-33 // 4)
        with pytest.raises(IndexError):
            found[33]


def test_facet_counts_of_a_search(cat):
    found = cat.search(model="HadCM3")
    assert found.facets["variable"] == {"pr": 3, "psl": 3, "tas": 3, "tos": 3}
    # a facet's own filter does not narrow its counts: other models stay visible
    assert set(cat.facets("model", model="HadCM3")["model"]) == {"CanESM2", "HadCM3", "MIROC5"}
    assert cat.facets("experiment", variable="tos")["experiment"] == {"historical": 4, "rcp45": 2}


def test_lists_exclusions_free_text_and_time(cat):
    assert len(cat.search(model=["HadCM3", "MIROC5"], variable="tas")) == 6
    assert len(cat.search(variable="tas", exclude={"model": "HadCM3"})) == 6
    assert {f.facets["experiment"] for f in cat.search(variable="tas", start="2007")} == {"rcp45"}
    assert len(cat.search(prefix="/CMS/store/data")) == 2
    assert all(f.scheme == "cms" for f in cat.search(scheme="cms"))


def test_get_autocomplete_browse_stats(cat):
    name = cat.search(**HADCM3_TAS)[0].name
    record = cat.get(name)
    assert isinstance(record, ndnsci.FileRecord) and record.name == name
    assert record.metadata and record.metadata["global_attributes"]["model_id"] == "HadCM3"
    assert [n.component for n in cat.autocomplete("/CMIP5/output1/MO")] == ["MOHC"]
    assert {n.component for n in cat.browse("/CMS/store")} == {"data", "mc"}
    assert cat.stats()["files"] == 38


def test_to_dataframe(cat):
    frame = cat.search(model="CanESM2", variable="pr").to_dataframe()
    assert list(frame.columns[:3]) == ["name", "filename", "scheme"]
    assert set(frame["experiment"]) == {"historical", "rcp45"} and len(frame) == 3


def test_unknown_facet_is_a_clear_error(cat):
    with pytest.raises(UnknownFacetError) as info:
        len(cat.search(modle="HadCM3"))
    assert "model" in info.value.valid_facets and "modle" in str(info.value)
    assert isinstance(info.value, QueryError) and info.value.status == 400


def test_bad_time_bound_and_missing_file(cat):
    with pytest.raises(QueryError):
        len(cat.search(start="not-a-year"))
    with pytest.raises(NotInCatalogError):
        cat.get("/CMIP5/no/such/file.nc")


def test_catalog_down_is_a_clear_error():
    from ndnsci.base.processes import free_port

    with (
        ndnsci.Catalog(f"http://127.0.0.1:{free_port()}") as cat,
        pytest.raises(CatalogUnavailableError, match="no catalog answers"),
    ):
        cat.search(model="HadCM3")[0]


def test_manifest_of_a_search_and_of_names(cat):
    entries = cat.manifest(cat.search(**HADCM3_TAS))
    assert len(entries) == 3 and all(isinstance(e, ndnsci.ManifestEntry) for e in entries)
    mixed = cat.manifest([entries[0].name, "/CMIP5/nope/x.nc"])
    assert mixed[0] == entries[0] and mixed[1] == ("/CMIP5/nope/x.nc", "not found")


def test_many_names_go_in_pieces_the_catalog_takes(stack, tmp_path):
    """The catalog states how many names one manifest request may carry; the client obeys."""
    from catalog.loadtest import Server

    db = f"sqlite:///{stack.workdir / 'catalog.db'}"
    server = Server(db, tmp_path / "catalog.log", env={"NDNSCI_MAX_MANIFEST_NAMES": "3"})
    try:
        server.wait()
        with ndnsci.Catalog(server.url) as cat:
            names = [f.name for f in cat.search(scheme="cmip5")] + ["/CMIP5/nope/x.nc"]
            assert cat.limits()["max_manifest_names"] == 3
            entries = cat.manifest(names)
            pieces = server.log.read_text().count("POST /api/v1/manifests")

            async def asynchronously():
                async with ndnsci.AsyncCatalog(server.url) as acat:
                    return await acat.manifest(names)

            assert asyncio.run(asynchronously()) == entries
    finally:
        server.terminate()
    assert len(names) == 34 and pieces == 12  # ceil(34 / 3)
    assert [e.name for e in entries[:-1]] == names[:-1]  # type: ignore[union-attr]
    assert entries[-1] == ("/CMIP5/nope/x.nc", "not found")


def _on_mock(shell, handler, method, *args, token=None, **kwargs):
    """``Catalog.method(*args, **kwargs)`` (``shell="sync"``) or ``AsyncCatalog``'s, awaited,
    against ``handler`` (an ``httpx.MockTransport``'s)."""
    import httpx

    transport = httpx.MockTransport(handler)
    if shell == "sync":
        with ndnsci.Catalog("http://catalog.test", token=token, transport=transport) as cat:
            return getattr(cat, method)(*args, **kwargs)

    async def main():
        async with ndnsci.AsyncCatalog(
            "http://catalog.test", token=token, transport=transport
        ) as cat:
            return await getattr(cat, method)(*args, **kwargs)

    return asyncio.run(main())


@pytest.mark.parametrize("shell", ["sync", "async"])
def test_a_busy_catalog_is_asked_again_after_its_retry_after(shell):
    import httpx

    asked = []

    def busy_twice(request: httpx.Request) -> httpx.Response:
        asked.append(time.monotonic())
        if len(asked) <= 2:
            return httpx.Response(503, headers={"Retry-After": "0.2"}, json={"detail": "busy"})
        return httpx.Response(200, json={"status": "ok"})

    assert _on_mock(shell, busy_twice, "health") == {"status": "ok"}
    assert len(asked) == 3 and asked[2] - asked[0] >= 0.4

    def always_busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "0"}, json={"detail": "too busy"})

    with pytest.raises(CatalogError, match="answered 503: too busy"):
        _on_mock(shell, always_busy, "health")


@pytest.mark.parametrize("shell", ["sync", "async"])
def test_a_busy_catalog_is_asked_again_for_a_manifest_and_an_export(shell):
    """The streamed answer (a manifest's lines) and the text one (the intake-esm CSV) are
    sent again alike; a refusal is the catalog's error, not a line."""
    import httpx

    asked: list[str] = []
    lines = b'{"name": "/CMIP5/a/x.nc", "size": 3}\n\n{"name": "/CMIP5/a/y.nc", "error": "gone"}\n'

    def busy_once(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        if request.url.path.endswith("/limits"):
            return httpx.Response(200, json={"max_manifest_names": 10})
        if asked.count(request.url.path) == 1:
            return httpx.Response(503, headers={"Retry-After": "0"}, json={"detail": "busy"})
        if request.url.path.endswith(".csv"):
            return httpx.Response(200, text="name,path\n")
        return httpx.Response(200, content=lines)

    entries = _on_mock(shell, busy_once, "manifest", ["/CMIP5/a/x.nc", "/CMIP5/a/y.nc"])
    assert [getattr(e, "name", e) for e in entries] == ["/CMIP5/a/x.nc", ("/CMIP5/a/y.nc", "gone")]
    assert asked == ["/api/v1/limits", "/api/v1/manifests", "/api/v1/manifests"]

    def refused(request: httpx.Request) -> httpx.Response:
        return httpx.Response(422, json={"detail": "bad search"})

    with pytest.raises(QueryError, match="bad search"):
        _on_mock(shell, refused, "manifest", "model=HadCM3")


@pytest.mark.parametrize("shell", ["sync", "async"])
def test_a_publish_refused_as_too_busy_is_sent_again_after_retry_after(shell):
    """The write lane is full (503): the same batch again after the wait, then published;
    a catalog busy for good is an error naming the 503, with nothing counted as published."""
    import json

    import httpx

    posted: list[tuple[float, bytes]] = []
    answer = {"inserted": 2, "replaced": 0, "unchanged": 0, "last_seq": 2}

    def busy_once(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/limits"):
            return httpx.Response(200, json={"max_publish_records": 10, "max_publish_bytes": 1000})
        posted.append((time.monotonic(), request.read()))
        if len(posted) == 1:
            return httpx.Response(503, headers={"Retry-After": "0.3"}, json={"detail": "busy"})
        return httpx.Response(200, json=answer)

    lines = [json.dumps({"name": f"/CMIP5/a/{i}.nc", "scheme": "cmip5"}) for i in range(2)]
    report = _on_mock(shell, busy_once, "publish", lines, token="t")
    assert (report.inserted, report.requests, report.refused) == (2, 1, [])
    assert len(posted) == 2 and posted[0][1] == posted[1][1]
    assert posted[1][0] - posted[0][0] >= 0.3

    def always_busy(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/limits"):
            return httpx.Response(404, json={"detail": "no such route"})
        return httpx.Response(503, headers={"Retry-After": "0"}, json={"detail": "too busy"})

    with pytest.raises(CatalogError, match="answered 503: too busy"):
        _on_mock(shell, always_busy, "publish", lines, token="t")


def test_the_core_builds_requests_and_reads_answers_without_io():
    """Both clients carry out the same plans (ndnsci.sdk.client._Api): a request as values,
    a wait the catalog asks for, the answer read; here with no client and no network."""
    import httpx

    from ndnsci.sdk.client import _Api, _Reply, _Sleep

    plan = _Api("http://catalog.test").get("/CMIP5/a b.nc")
    call = next(plan)
    assert (call.method, call.path, call.params) == ("GET", "files/CMIP5/a%20b.nc", None)
    busy = httpx.Response(503, headers={"Retry-After": "2"}, json={"detail": "busy"})
    assert plan.send(_Reply(busy)) == _Sleep(2.0)
    assert plan.send(None) == call
    found = httpx.Response(200, json={"name": "/CMIP5/a b.nc", "scheme": "cmip5"})
    with pytest.raises(StopIteration) as done:
        plan.send(_Reply(found))
    assert done.value.value == ndnsci.FileRecord(name="/CMIP5/a b.nc", scheme="cmip5")

    plan = _Api("http://catalog.test").get("/CMIP5/nope.nc")
    next(plan)
    with pytest.raises(NotInCatalogError, match="no such file"):
        plan.send(_Reply(httpx.Response(404, json={"detail": "no such file"})))


def test_url_default_from_the_environment(stack, monkeypatch):
    monkeypatch.setenv("NDNSCI_CATALOG", stack.catalog_url + "/api/v1/")
    assert ndnsci.Catalog().url == stack.catalog_url


def test_async_catalog(stack):
    async def main():
        async with ndnsci.AsyncCatalog(stack.catalog_url, page_size=2) as cat:
            found = await cat.search(**HADCM3_TAS)
            names = [f.name async for f in found]
            facets = await cat.facets("model", variable="tas")
            record = await cat.get(names[0])
            with pytest.raises(UnknownFacetError):
                await cat.search(modle="x")
            return len(found), names, facets, record

    count, names, facets, record = asyncio.run(main())
    assert count == 3 and len(names) == 3 and record.name == names[0]
    assert facets["model"]["HadCM3"] == 3


def test_async_catalog_offers_every_method_of_catalog():
    """Catalog and AsyncCatalog cannot drift apart: the same public methods and attributes;
    the same parameters (names, kinds, defaults, types: where Catalog's take or give a
    ``SearchResults``, a transport or an iterable, AsyncCatalog's may have the async one);
    every async method a coroutine whose docstring points at Catalog's (``close`` is
    ``aclose``)."""
    import inspect
    import re

    def public(cls):
        return {name for name in dir(cls) if not name.startswith("_")} | {"__init__"}

    def types(annotation):  # 'AsyncSearchResults | Query | None' -> {'SearchResults', ...}
        return frozenset(re.sub(r"\bAsync", "", str(annotation)).split(" | "))

    def shape(method):
        signature = inspect.signature(method)
        parameters = [
            (p.name, p.kind, p.default, types(p.annotation)) for p in signature.parameters.values()
        ]
        return parameters, types(signature.return_annotation)

    sync, other = ndnsci.Catalog, ndnsci.AsyncCatalog
    assert public(other) - {"aclose"} == public(sync) - {"close"}
    for name in public(sync) - {"close"}:
        assert shape(getattr(sync, name)) == shape(getattr(other, name)), name
        if name != "__init__":
            assert inspect.getdoc(getattr(sync, name)), name
            assert inspect.iscoroutinefunction(getattr(other, name)), name
            assert f":meth:`Catalog.{name}`" in inspect.getdoc(getattr(other, name)), name
    with sync("http://catalog.test") as one:
        attributes = {k for k in vars(one) if not k.startswith("_")}
    assert attributes == {"url", "page_size", "token"}
    assert attributes == {k for k in vars(other("http://catalog.test")) if not k.startswith("_")}


def test_async_browse_health_and_intake_esm(stack):
    async def main():
        async with ndnsci.AsyncCatalog(stack.catalog_url) as cat:
            return (
                await cat.browse("/CMS/store"),
                (await cat.health(), await cat.limits()),
                await cat.to_intake_esm("cmip5"),
                await cat.changes(since=0, limit=3),
            )

    nodes, health, esm, changes = asyncio.run(main())
    with ndnsci.Catalog(stack.catalog_url) as cat:
        assert nodes == cat.browse("/CMS/store")
        (health, limits), now = health, cat.health()
        assert (health["status"], health["instance"]) == (now["status"], now["instance"])
        assert limits == cat.limits() and limits["max_publish_records"] > 0
        assert len(esm.df) == len(cat.to_intake_esm("cmip5").df) == 33
        assert changes == cat.changes(since=0, limit=3)
    assert [c.seq for c in changes.changes] == [1, 2, 3] and changes.next == 3


def test_one_exception_tree():
    for error in (UnknownFacetError, CatalogUnavailableError, ndnsci.errors.IntegrityError):
        assert issubclass(error, NdnsciError)


def test_the_sdk_loads_on_first_use():
    import subprocess
    import sys

    code = (
        "import sys, ndnsci; before = set(sys.modules); ndnsci.Catalog; "
        "print(' '.join(sorted(before)), '|', 'ndnsci.sdk.client' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, loaded = out.stdout.split("|")
    assert not {"httpx", "asyncio", "ndnsci.sdk.fetch", "ndnsci.sdk.client"} & set(before.split())
    assert loaded.strip() == "True"
