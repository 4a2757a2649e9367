"""``ndnsci catalog site|trust`` as a user types them, bad input included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import free_port, run_cli, wait_for

from .sites import records


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


def test_a_site_without_ndn_seals_its_changes_and_another_mirrors_them_over_http(
    tmp_path: Path,
) -> None:
    """No forwarder anywhere: `catalog seal` signs kisti's changes, `catalog mirror` at csu
    applies them from kisti's HTTP API; a mirror with nothing sealed says how to seal."""
    kisti = {"NDNSCI_CONFIG_DIR": str(tmp_path / "kisti")}
    csu = {"NDNSCI_CONFIG_DIR": str(tmp_path / "csu")}
    kisti_db, csu_db = (f"sqlite:///{tmp_path / n}.db" for n in ("kisti", "csu"))

    def ok(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        done = run_cli(*args, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done

    public = keys_create({**os.environ, **kisti})
    ok("catalog", "site", "init", "kisti", "--db", kisti_db, env=kisti)
    first = records(30, "KISTI", "KISTI-ESM")
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    ok("publish", "--records", str(tmp_path / "a.jsonl"), "--db", kisti_db, env=kisti)
    # the wrong key is refused before anything is signed
    keys_create({**os.environ, **csu})
    wrong = run_cli("catalog", "seal", "--db", kisti_db, env=csu)
    assert wrong.returncode == 2
    assert "is not site kisti's key" in wrong.stderr

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "ndnsci", "catalog", "serve", "--db", kisti_db, "--port", str(port)],
        env={**os.environ, **kisti}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        def healthy() -> bool:
            try:
                return httpx.get(f"{url}/api/v1/health", timeout=1).is_success
            except httpx.HTTPError:
                return False

        wait_for(healthy, 60, "kisti's catalog")
        ok("catalog", "site", "init", "csu", "--db", csu_db, env=csu)
        ok("catalog", "trust", "add", "kisti", public, "--db", csu_db, env=csu)
        # nothing sealed yet: nothing applied, and the mirror says why
        empty = ok("catalog", "mirror", "--from", url, "--db", csu_db, env=csu)
        assert "`ndnsci catalog seal`" in empty.stderr

        sealed = ok("catalog", "seal", "--db", kisti_db, "--batch-changes", "20", env=kisti)
        assert json.loads(sealed.stdout) == {"batches": 2}  # 30 changes, 20 per batch
        ok("catalog", "mirror", "--from", url, "--db", csu_db, env=csu)
        listed = httpx.get(f"{url}/api/v1/sites", timeout=10).json()["local"]
        assert listed["applied"] == 2
        csu_names = _names(csu_db)
        assert csu_names == {r["name"]: "kisti" for r in first}

        # more later: a second seal adds one batch, a second mirror takes only it
        more = records(5, "KISTI", "KISTI-ESM", start=30)
        (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in more))
        ok("publish", "--records", str(tmp_path / "b.jsonl"), "--db", kisti_db, env=kisti)
        resealed = ok("catalog", "seal", "--db", kisti_db, env=kisti)
        assert json.loads(resealed.stdout) == {"batches": 3}
        again = ok("catalog", "mirror", "--from", url, "--db", csu_db, env=csu)
        assert "1 batches applied" in again.stderr
        assert set(_names(csu_db)) == {r["name"] for r in first + more}
    finally:
        server.terminate()
        server.wait(30)


def _names(db: str) -> dict[str, str]:
    """Every name in the catalog at ``db`` and the site it came from."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT name, site FROM files")).all()
    finally:
        engine.dispose()
    return {name: site for name, site in rows}
