"""The built web portal served at ``/`` next to the API (catalog/main.py, ``portal_dir``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

import ndnsci_catalog
from ndnsci_catalog.config import Settings
from ndnsci_catalog.main import create_app, portal_dir


def get(app: object, path: str) -> httpx.Response:
    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await client.get(path)

    return asyncio.run(call())


@pytest.fixture
def built(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>ndnsci portal</title>")
    (dist / "assets" / "index-abc123.js").write_text("console.log(1)")
    return dist


def test_portal_is_served_at_root_with_cache_headers(built: Path) -> None:
    app = create_app(Settings(db="sqlite://", webui_dir=str(built)))
    page = get(app, "/")
    assert page.status_code == 200
    assert "ndnsci portal" in page.text
    assert page.headers["cache-control"] == "no-cache"
    asset = get(app, "/assets/index-abc123.js")
    assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_api_routes_win_and_unknown_api_paths_stay_json(built: Path) -> None:
    app = create_app(Settings(db="sqlite://", webui_dir=str(built)))
    assert get(app, "/openapi.json").json()["info"]["title"] == "ndnsci catalog"
    missing = get(app, "/api/v1/no-such-route")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "Not Found"}
    assert get(app, "/assets/gone.js").status_code == 404


def test_no_portal_when_not_built_or_turned_off(tmp_path: Path) -> None:
    missing = Settings(db="sqlite://", webui_dir=str(tmp_path / "missing"))
    assert portal_dir(missing) is None
    assert get(create_app(missing), "/").status_code == 404
    off = Settings(db="sqlite://", webui_dir="")
    assert portal_dir(off) is None
    assert get(create_app(off), "/").status_code == 404


def test_the_setting_comes_from_the_environment(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NDNSCI_WEBUI_DIR", str(built))
    assert portal_dir(Settings(db="sqlite://")) == built


def test_default_is_the_build_carried_in_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make test` builds the portal first (the Makefile's portal target), so it is there."""
    monkeypatch.delenv("NDNSCI_WEBUI_DIR", raising=False)
    packaged = Path(ndnsci_catalog.__file__).parent / "portal"
    assert portal_dir(Settings(db="sqlite://")) == packaged
    page = get(create_app(Settings(db="sqlite://")), "/")
    assert page.status_code == 200 and '<div id="root">' in page.text
