"""``ndnsci fetch --query / --manifest``: bulk downloads through the real stack."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess

from support import CLI, run_cli, wait_for

import ndnsci
from ndnsci.base.processes import free_port


def test_query_then_rerun_skips(stack, tmp_path):
    out = run_cli("fetch", "--query", "model=HadCM3 variable=tas", "-o", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "3 fetched" in out.stderr and "0 failed" in out.stderr
    found = ndnsci.Catalog(stack.catalog_url).search(model="HadCM3", variable="tas")
    for f in found:
        assert hashlib.sha256((tmp_path / f.path).read_bytes()).hexdigest() == f.sha256
    again = run_cli("fetch", "--query", "model=HadCM3 variable=tas", "-o", str(tmp_path))
    assert again.returncode == 0 and "3 already complete" in again.stderr


def test_manifest_with_a_bad_line_reports_it_and_fetches_the_rest(stack, tmp_path):
    search = run_cli("search", "model=CanESM2", "variable=tos", "--json")
    lines = search.stdout.splitlines()
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join([lines[0], "garbage", *lines[1:], '{"nom": 1}']) + "\n")
    report = tmp_path / "report.jsonl"
    out = run_cli(
        "fetch", "--manifest", str(manifest), "-o", str(tmp_path / "o"), "--layout", "flat",
        "--report", str(report),
    )  # fmt: skip
    assert out.returncode == 1
    assert "FAILED line 2" in out.stderr and "FAILED line 5" in out.stderr
    assert "3 fetched" in out.stderr and "2 failed" in out.stderr
    outcomes = [json.loads(line) for line in report.open()]
    assert sorted(o["status"] for o in outcomes) == ["done", "done", "done", "failed", "failed"]
    assert len(list((tmp_path / "o").glob("tos_*.nc"))) == 3


def test_usage_and_catalog_errors_are_clear(stack, tmp_path):
    both = run_cli("fetch", "/a/b", "--query", "model=x")
    assert both.returncode == 2 and "one of them" in both.stderr
    down = run_cli(
        "fetch", "--query", "model=HadCM3", "--catalog", f"http://127.0.0.1:{free_port()}"
    )
    assert down.returncode == 2 and "no catalog answers" in down.stderr
    unknown = run_cli("fetch", "--query", "modle=HadCM3", "-o", str(tmp_path))
    assert unknown.returncode == 2 and "valid facets" in unknown.stderr
    nothing = run_cli("fetch", "--query", "model=Nope", "-o", str(tmp_path))
    assert nothing.returncode == 1 and "nothing to fetch" in nothing.stderr
    missing = run_cli("fetch", "--manifest", str(tmp_path / "none.jsonl"))
    assert missing.returncode == 2 and "cannot read the manifest" in missing.stderr
    no_forwarder = run_cli(
        "fetch", "--query", "model=HadCM3", "-o", str(tmp_path),
        env={"NDN_CLIENT_TRANSPORT": f"unix://{tmp_path}/no.sock"},
    )  # fmt: skip
    assert no_forwarder.returncode == 2 and "ndnsci forwarder start" in no_forwarder.stderr
    for out in (both, down, unknown, nothing, missing, no_forwarder):
        assert "Traceback" not in out.stderr


def test_ctrl_c_stops_cleanly_and_a_rerun_continues(stack, tmp_path):
    args = [*CLI, "fetch", "--query", "scheme=cms", "-o", str(tmp_path)]
    slow = ["--window", "1", "--cc", "fixed", "--parallel", "1"]
    proc = subprocess.Popen([*args, *slow], stderr=subprocess.PIPE, text=True)
    wait_for(lambda: list(tmp_path.rglob("*.part")), 30, "a file under way", every=0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted; run the same command again" in err and "Traceback" not in err
    again = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 0, again.stderr
    assert "0 failed" in again.stderr and not list(tmp_path.rglob("*.part"))
    assert len(list(tmp_path.rglob("*.root"))) == 5
