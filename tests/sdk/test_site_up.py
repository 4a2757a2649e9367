"""`ndnsci site up|status|down -c FILE` with real processes: forwarder, catalog, producer and
gateway started in order and supervised; a part killed with SIGKILL is restarted; `down` from
another process leaves nothing running."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ndnsci.base import processes
from ndnsci.site import supervisor
from tests.support import make_certificate, run_cli, wait_for

RESTART_BUDGET = 10.0  # the figure: a killed part is running again within 10 s
UP_BUDGET = 120.0  # a restarted catalog answering its health check, on a loaded machine


def status(config: Path) -> dict[str, Any]:
    done = run_cli("site", "status", "-c", str(config), "--json")
    assert done.returncode in (0, 3), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def poll(config: Path, ready: Any, budget: float) -> dict[str, Any]:
    deadline = time.monotonic() + budget
    while True:
        now = status(config)
        if ready(now):
            return now
        assert time.monotonic() < deadline, f"not so within {budget:.0f} s: {now}"
        time.sleep(0.5)


@pytest.fixture
def site_file(tmp_path: Path, sample_dir: Path, ndnd_binary: Path) -> Iterator[Path]:
    config = tmp_path / "site.toml"
    config.write_text(
        f'[site]\nname = "testsite"\nstate_dir = "{tmp_path / "state"}"\n\n'
        f'[catalog]\nlisten = "127.0.0.1:0"\n\n'
        f'[[data]]\npath = "{sample_dir}"\n\n'
        f'[gateway]\nenabled = true\nlisten = "127.0.0.1:0"\n\n'
        f'[[federation.trusted]]\nname = "mit"\nprefix = "/mit"\nkey = "{"ab" * 32}"\n'
    )
    os.environ["NDND"] = str(ndnd_binary)
    yield config
    run_cli("site", "down", "-c", str(config))


def test_a_site_comes_up_is_supervised_and_goes_down(site_file: Path, tmp_path: Path) -> None:
    up = run_cli("site", "up", "--detach", "-c", str(site_file), timeout=600)
    assert up.returncode == 0, up.stderr + (tmp_path / "state" / "supervisor.log").read_text()
    now = status(site_file)
    assert now["running"]
    parts = now["parts"]
    assert list(parts) == ["forwarder", "catalog", "producer", "transfers", "replicas", "gateway"]
    assert all(p["state"] == "up" for p in parts.values()), parts
    assert parts["catalog"]["health"]["status"] == "ok"
    assert parts["producer"]["health"]["files"] > 0
    assert "nFaces" in parts["forwarder"]["health"] or parts["forwarder"]["health"]

    # the catalog names its site and trusts the configured one
    db = f"sqlite:///{tmp_path / 'state' / 'catalog.db'}"
    shown = run_cli("catalog", "site", "show", "--db", db)
    assert shown.returncode == 0, shown.stderr
    sites = {s["name"]: s for s in map(json.loads, shown.stdout.splitlines())}
    assert sites["testsite"]["local"] is True
    assert sites["mit"]["public_key"] == "ab" * 32

    # a fetch through the site's forwarder, by the site's catalog
    fetched = run_cli(
        "fetch", "--query", "model=HadCM3 variable=tas", "-o", str(tmp_path / "got"),
        "--catalog", now["catalog_url"], env={"NDN_CLIENT_TRANSPORT": now["transport"]},
        timeout=300,
    )  # fmt: skip
    assert fetched.returncode == 0, fetched.stderr
    assert any(p.is_file() for p in (tmp_path / "got").rglob("*.nc"))

    # a transfer job to this site, run by its agent into its transfer root, and the copies
    # served under their names by the site's replica producer
    db_token = run_cli("catalog", "token", "create", "jobs", "--db", db)
    assert db_token.returncode == 0, db_token.stderr
    jobs_env = {"NDNSCI_CATALOG": now["catalog_url"], "NDNSCI_TOKEN": db_token.stdout.strip()}
    job = run_cli(
        "transfer", "submit", "copies", "--query", "model=HadCM3&variable=tas", "--wait",
        "--json", env=jobs_env, timeout=300,
    )  # fmt: skip
    assert job.returncode == 0, job.stderr + (tmp_path / "state" / "transfers.log").read_text()
    finished = json.loads(job.stdout)
    assert finished["state"] == "done" and finished["files"] > 0
    copies = list((tmp_path / "state" / "transfers" / "copies").rglob("*.nc"))
    assert len(copies) == finished["files"]

    # a second `up` of the same site refuses, naming the running one
    again = run_cli("site", "up", "-c", str(site_file))
    assert again.returncode == 1
    assert f"site testsite is running already: supervisor pid {now['supervisor']}" in again.stderr

    groups = {p["pid"] for p in parts.values() if p["pid"]}
    for part in ("catalog", "producer"):
        old = parts[part]["pid"]
        os.kill(old, signal.SIGKILL)
        poll(site_file, lambda s, p=part, o=old: s["parts"][p]["pid"] != o
             and processes.alive(s["parts"][p]["pid"]), RESTART_BUDGET)  # fmt: skip
        back = poll(site_file, lambda s, p=part: s["parts"][p]["state"] == "up"
                    and "health" in s["parts"][p], UP_BUDGET)  # fmt: skip
        assert back["parts"][part]["restarts"] == 1
        assert "died; restarting" in (tmp_path / "state" / "supervisor.log").read_text()
        parts = back["parts"]

    # the forwarder killed: it comes back, and the producer and gateway start again on it
    old_fw, old_producer = parts["forwarder"]["pid"], parts["producer"]["pid"]
    os.kill(old_fw, signal.SIGKILL)
    back = poll(site_file, lambda s: s["parts"]["forwarder"]["pid"] != old_fw
                and all(p["state"] == "up" for p in s["parts"].values())
                and s["parts"]["producer"]["pid"] != old_producer, UP_BUDGET)  # fmt: skip
    assert back["parts"]["forwarder"]["restarts"] == 1
    parts = back["parts"]
    again_fetched = run_cli(
        "fetch", "--query", "model=HadCM3 variable=tas", "-o", str(tmp_path / "again"),
        "--catalog", now["catalog_url"], env={"NDN_CLIENT_TRANSPORT": now["transport"]},
        timeout=300,
    )  # fmt: skip
    assert again_fetched.returncode == 0, again_fetched.stderr

    pids = [p["pid"] for p in parts.values()] + [now["supervisor"]]
    groups |= set(pids)
    down = run_cli("site", "down", "-c", str(site_file), timeout=120)
    assert down.returncode == 0, down.stderr
    assert down.stdout.strip() == "site testsite: stopped"
    assert [pid for pid in pids if processes.alive(pid)] == []
    # nor anything a part started (each part's process group; the catalog's preparing
    # process outlived a catalog killed with SIGKILL before the supervisor cleaned up)
    assert [pid for group in groups for pid in supervisor.group_members(group)] == []
    assert status(site_file)["running"] is False
    assert not (tmp_path / "state" / "site.json").exists()


def test_a_site_serves_its_catalog_over_tls_with_workers_proxies_and_origins(
    tmp_path: Path, sample_dir: Path, ndnd_binary: Path
) -> None:
    """[catalog] tls_cert/tls_key, workers, trusted_proxies and allowed_origins, applied: the
    catalog speaks https only, with the certificate the test made; its producer and the
    gateway read it over https; two server processes answer; a trusted proxy's
    X-Forwarded-For is believed; a preflight from the allowed origin is answered."""
    import ssl

    import httpx

    cert, key = make_certificate(tmp_path)
    config = tmp_path / "site.toml"
    config.write_text(
        f'[site]\nname = "tlssite"\nstate_dir = "{tmp_path / "state"}"\n\n'
        f'[catalog]\nlisten = "127.0.0.1:0"\nworkers = 2\ntls_cert = "{cert}"\n'
        f'tls_key = "{key}"\nallowed_origins = ["https://portal.example.org"]\n'
        f'trusted_proxies = ["127.0.0.1"]\n\n'
        f'[[data]]\npath = "{sample_dir}"\n\n'
        f'[gateway]\nenabled = true\nlisten = "127.0.0.1:0"\n'
    )
    os.environ["NDND"] = str(ndnd_binary)
    try:
        up = run_cli("site", "up", "--detach", "-c", str(config), timeout=600)
        log = tmp_path / "state" / "supervisor.log"
        assert up.returncode == 0, up.stderr + (log.read_text() if log.exists() else "")
        now = status(config)
        url = now["catalog_url"]
        assert url.startswith("https://127.0.0.1:")
        catalog = now["parts"]["catalog"]
        assert catalog["state"] == "up"
        assert catalog["health"]["status"] == "ok"
        assert catalog["health"]["tls"] == {"cert": str(cert), "verified": True}
        assert now["parts"]["producer"]["health"]["files"] > 0  # read the catalog over https
        shown = run_cli("site", "status", "-c", str(config))
        assert f"catalog at {url}: ok, https with the certificate {cert} (verified)" in shown.stdout

        trusted = ssl.create_default_context(cafile=str(cert))
        health = httpx.get(url + "/api/v1/health", verify=trusted, timeout=10)
        assert health.status_code == 200
        with pytest.raises(httpx.TransportError):
            httpx.get(url.replace("https://", "http://") + "/api/v1/health", timeout=10)

        preflight = httpx.options(
            url + "/api/v1/search", verify=trusted, timeout=10,
            headers={"Origin": "https://portal.example.org",
                     "Access-Control-Request-Method": "GET"},
        )  # fmt: skip
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://portal.example.org"

        forwarded = httpx.get(
            url + "/api/v1/export/intake-esm", verify=trusted, timeout=10,
            headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "http"},
        )  # fmt: skip
        assert forwarded.json()["catalog_file"].startswith("http://127.0.0.1:")  # believed
        catalog_log = Path(catalog["log"])
        wait_for(lambda: "203.0.113.9:0 - " in catalog_log.read_text(), 10,
                 "the forwarded client in the catalog's log")  # fmt: skip
        text = catalog_log.read_text()
        assert text.count("Started server process [") == 2, text
        assert "(2 workers)" in text

        # the gateway looks names up in the catalog over https (NDNSCI_CATALOG_CERT), then
        # fetches the bytes over NDN
        found = httpx.get(url + "/api/v1/search", params={"limit": 1}, verify=trusted, timeout=30)
        name = found.json()["results"][0]["name"]
        gateway = f"http://127.0.0.1:{now['parts']['gateway']['port']}"
        head = httpx.get(gateway + "/data" + name, headers={"Range": "bytes=0-99"}, timeout=120)
        assert head.status_code == 206, head.text
        assert len(head.content) == 100
        workers = supervisor.group_members(catalog["pid"])
        assert len(workers) >= 3, workers  # uvicorn's parent and its two workers, at least
    finally:
        down = run_cli("site", "down", "-c", str(config), timeout=120)
    assert down.returncode == 0, down.stderr
    assert status(config)["running"] is False
    assert supervisor.group_members(catalog["pid"]) == []  # no worker left behind
