"""``ndnsci catalog site|trust`` as a user types them, bad input included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_name_a_site_trust_another_and_refuse_bad_input(tmp_path: Path) -> None:
    env = {**os.environ, "NDNSCI_CONFIG_DIR": str(tmp_path / "config")}
    db = f"sqlite:///{tmp_path / 'catalog.db'}"

    def ndnsci(*args: str, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "ndnsci", *args, "--db", db], env=env,
                              capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert done.returncode == code, done.stderr
        return done

    no_key = ndnsci("catalog", "site", "init", "kisti", code=2)
    assert "ndnsci keys create" in no_key.stderr
    public = keys_create(env)
    init = json.loads(ndnsci("catalog", "site", "init", "kisti").stdout)
    assert (init["name"], init["prefix"], init["public_key"]) == ("kisti", "/kisti", public)
    again = ndnsci("catalog", "site", "init", "other", code=2)
    assert "a site keeps its name" in again.stderr
    bad_key = ndnsci("catalog", "trust", "add", "csu", "not-a-key", code=2)
    assert "64 digits" in bad_key.stderr
    ndnsci("catalog", "trust", "add", "csu", "ab" * 32, "--prefix", "/csu/ndn")
    listed = [json.loads(line) for line in ndnsci("catalog", "site", "show").stdout.splitlines()]
    assert [(s["name"], s["local"], s["prefix"]) for s in listed] == [
        ("kisti", True, "/kisti"), ("csu", False, "/csu/ndn"),
    ]  # fmt: skip


def keys_create(env: dict[str, str]) -> str:
    """``ndnsci keys create``; the public key it prints."""
    done = subprocess.run([sys.executable, "-m", "ndnsci", "keys", "create"], env=env,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    return next(line.split()[-1] for line in done.stdout.splitlines() if line.startswith("public"))
