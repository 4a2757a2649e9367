"""Progress never pollutes stdout: bars go to stderr, and only when it is a terminal or when
asked for; results (a script's own output, ``--json``) stay clean. Real processes, real pipes,
a real pseudo-terminal, the real stack (tests/conftest.py: ``stack``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import CLI, with_tty_stderr

SCRIPT = """
import json, sys, ndnsci
cat = ndnsci.Catalog(sys.argv[1])
kwargs = {"progress": True} if sys.argv[3] == "asked" else {}
paths = ndnsci.fetch(cat.search(model="HadCM3", variable="tas"), sys.argv[2], **kwargs)
print(json.dumps({"n": len(paths)}))
"""
TERMINAL = {"TERM": "xterm-256color", "COLUMNS": "120"}
BAR = "━"  # rich's bar


def script(stack, dest, mode: str) -> list[str]:
    return [sys.executable, "-c", SCRIPT, stack.catalog_url, str(dest), mode]


def piped(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_a_script_piped_gets_its_own_output_only(stack, tmp_path):
    out = piped(script(stack, tmp_path, "default"))
    assert out.returncode == 0, out.stderr
    assert out.stdout == '{"n": 3}\n'
    assert out.stderr == ""  # stderr is not a terminal: no bars


def test_bars_go_to_a_terminal_stderr_never_to_stdout(stack, tmp_path):
    code, stdout, terminal = with_tty_stderr(script(stack, tmp_path, "default"), TERMINAL)
    assert code == 0, terminal
    assert stdout == '{"n": 3}\n'
    assert BAR in terminal and "files" in terminal


def test_bars_asked_for_go_to_stderr_even_when_piped(stack, tmp_path):
    out = piped(script(stack, tmp_path, "asked"))
    assert out.returncode == 0, out.stderr
    assert out.stdout == '{"n": 3}\n'
    assert BAR in out.stderr


def test_cli_json_is_pure_json_with_bars_on_the_terminal(stack, tmp_path):
    command = [*CLI, "fetch", "--query", "model=HadCM3 variable=tas", "-o", str(tmp_path), "--json"]
    code, stdout, terminal = with_tty_stderr(
        command, {**TERMINAL, "NDNSCI_CATALOG": stack.catalog_url}
    )
    assert code == 0, terminal
    outcomes = [json.loads(line) for line in stdout.splitlines()]
    assert [o["status"] for o in outcomes] == ["done", "done", "done"]
    assert BAR in terminal and "3 fetched" in terminal


def test_cli_fetch_by_name_piped_prints_results_only(stack, tmp_path):
    from ndnsci import Catalog

    name = Catalog(stack.catalog_url).search(model="HadCM3", variable="tas")[0].name
    out = piped([*CLI, "fetch", name, "-o", str(tmp_path), "--json"])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["checksum"] == "verified"
    assert out.stderr == ""


def test_publish_bar_goes_to_the_terminal_not_stdout(tmp_path):
    archive = Path(__file__).parents[1] / "data" / "netcdf" / "cmip5"
    command = [*CLI, "publish", str(archive), "--db", f"sqlite:///{tmp_path / 'catalog.db'}"]
    env = {**TERMINAL, "XDG_STATE_HOME": str(tmp_path / "state")}
    _, stdout, terminal = with_tty_stderr(command, env)
    assert stdout == ""  # publish reports on stderr; nothing of the bar leaks to stdout
    assert BAR in terminal and "published" in terminal
