"""`ndnsci site render systemd -c FILE`: one unit for the supervisor, accepted by
`systemd-analyze verify`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ndnsci.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def systemd_analyze() -> str:
    """systemd-analyze, installed by deploy/tools/install.sh (make setup) when missing."""
    found = shutil.which("systemd-analyze")
    if found is None:
        subprocess.run([str(REPO / "deploy" / "tools" / "install.sh")], check=True)
        found = shutil.which("systemd-analyze")
    assert found is not None, "systemd-analyze missing: run deploy/tools/install.sh"
    return found


def test_the_rendered_unit_verifies(
    tmp_path: Path, systemd_analyze: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    config = tmp_path / "site.toml"
    config.write_text('[site]\nname = "ucla"\n\n[[data]]\npath = "data"\n')
    out = tmp_path / "units"
    assert main(["site", "render", "systemd", "-c", str(config), "-o", str(out)]) == 0
    written = capsys.readouterr().out.split()
    unit = out / "ndnsci-site-ucla.service"
    assert written == [str(unit)]
    text = unit.read_text()
    assert f"ExecStart={sys.executable} -m ndnsci site up -c {config.resolve()}" in text
    assert "KillMode=mixed" in text
    assert f"RequiresMountsFor={tmp_path / 'data'}" in text
    verify = subprocess.run(
        [systemd_analyze, "verify", str(unit)], capture_output=True, text=True, check=False
    )
    assert verify.returncode == 0, verify.stderr
    assert "ndnsci-site-ucla.service" not in verify.stderr  # no complaint about our unit
