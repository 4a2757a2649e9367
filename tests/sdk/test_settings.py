"""The SDK's settings: every environment variable read in one place (ndnsci/base/environment.py)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from ndnsci.base.environment import (
    DEFAULT_CATALOG,
    client_transport,
    default_socket,
    hotloop,
    settings,
    terminal_columns,
)

PACKAGE = Path(__file__).resolve().parents[2] / "ndnsci"
# the catalog service has its own settings object; the local stack sets variables for the
# processes it starts (it writes the environment, it does not read settings from it)
OWN_SETTINGS = ("base/environment.py", "site/stack.py")
READS_ENVIRONMENT = re.compile(r"environ\.get\(|getenv\(|environ\[[^]]+\](?!\s*=)")


def test_no_module_but_the_settings_reads_the_environment():
    readers = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        if not path.relative_to(PACKAGE).as_posix().startswith(OWN_SETTINGS)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if READS_ENVIRONMENT.search(line)
    ]
    assert readers == []


def test_variables_override_the_platform_folders(monkeypatch, tmp_path):
    for key, value in {
        "NDNSCI_CATALOG": "http://catalog.example:8000",
        "NDNSCI_TOKEN": "secret",
        "NDNSCI_DATA_DIR": str(tmp_path / "data"),
        "NDNSCI_CACHE_DIR": str(tmp_path / "cache"),
        "NDNSCI_CONFIG_DIR": str(tmp_path / "config"),
        "NDN_CLIENT_TRANSPORT": "tcp://127.0.0.1:6363",
        "NDNSCI_FW_SOCK": str(tmp_path / "fw.sock"),
        "NDND": "/opt/ndnd",
    }.items():
        monkeypatch.setenv(key, value)
    found = settings()
    assert found.catalog_url == "http://catalog.example:8000" and found.token == "secret"
    assert (found.data_dir, found.cache_dir, found.config_dir) == (
        tmp_path / "data", tmp_path / "cache", tmp_path / "config",
    )  # fmt: skip
    assert found.transport == "tcp://127.0.0.1:6363" and found.ndnd == "/opt/ndnd"
    assert found.fw_sock == tmp_path / "fw.sock"


@pytest.mark.skipif(not Path("/proc").exists(), reason="the XDG layout is Linux's")
def test_defaults_are_the_xdg_folders(monkeypatch, tmp_path):
    for key in ("NDNSCI_CATALOG", "NDNSCI_TOKEN", "NDNSCI_DATA_DIR", "NDNSCI_CACHE_DIR",
                "NDNSCI_CONFIG_DIR", "NDN_CLIENT_TRANSPORT", "NDNSCI_FW_SOCK", "NDND"):  # fmt: skip
        monkeypatch.delenv(key, raising=False)
    for kind in ("CACHE", "CONFIG", "DATA", "STATE", "RUNTIME"):
        (tmp_path / kind).mkdir()
        monkeypatch.setenv(f"XDG_{kind}_HOME" if kind != "RUNTIME" else "XDG_RUNTIME_DIR",
                           str(tmp_path / kind))  # fmt: skip
    found = settings()
    assert found.catalog_url == DEFAULT_CATALOG and found.token is None
    assert found.cache_dir == tmp_path / "CACHE" / "ndnsci"
    assert found.data_dir == tmp_path / "CACHE" / "ndnsci" / "files"
    assert found.config_dir == tmp_path / "CONFIG" / "ndnsci"
    assert found.share_dir == tmp_path / "DATA" / "ndnsci"
    assert found.state_dir == tmp_path / "STATE" / "ndnsci"
    assert found.default_socket == tmp_path / "RUNTIME" / "ndnsci" / "nfd.sock"
    assert found.fw_sock is None and found.transport == ""


def test_the_values_a_fetch_reads_alone_are_the_settings_own(monkeypatch):
    monkeypatch.setenv("NDN_CLIENT_TRANSPORT", "unix:///somewhere/nfd.sock")
    monkeypatch.setenv("NDNSCI_HOTLOOP", " Python ")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    found = settings()
    alone = (client_transport(), hotloop(), Path(default_socket()))
    assert alone == (found.transport, found.hotloop, found.default_socket)
    fallback = Path(tempfile.gettempdir()) / f"ndnsci-{os.getuid()}" / "nfd.sock"
    assert alone == ("unix:///somewhere/nfd.sock", "python", fallback)


@pytest.mark.parametrize("columns", ["120", "", "wide", "-3", "0"])
def test_the_help_width_follows_shutils_rule(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
