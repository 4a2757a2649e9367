"""``ndnsci up``: the whole system from one command, stopped cleanly."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import httpx
from support import CLI, wait_for

from ndnsci.base.processes import free_port
from ndnsci.ndn import forwarder


def up(*args: str) -> list[str]:
    """``ndnsci up`` with a forwarder of its own (on any free WebSocket port unless given)."""
    ws = [] if "--ws-port" in args else ["--ws-port", "0"]
    return [*CLI, "up", "--private-forwarder", *ws, *args]


def closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_check_starts_searches_fetches_and_stops(fw, sample_dir, tmp_path):
    port = free_port()
    workdir = Path(f"/tmp/ndnsci-upc-{os.getpid()}")
    out = subprocess.run(
        up("--check", "--port", str(port), "--data", str(sample_dir), "--workdir", str(workdir)),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ndnsci is up" in out.stdout and "check: ok" in out.stdout
    assert "check: search model=HadCM3 variable=tas: 3 files" in out.stdout
    assert "SHA-256 verified" in out.stdout
    assert f"transfers   {workdir}/transfers " in out.stdout  # where the agent's jobs land
    assert "transfer agent " in (workdir / "transfer-agent.log").read_text()
    native = [line for line in out.stderr.splitlines() if "native plane" in line]
    assert len(native) == 1 and "ndnsci native up" in native[0], out.stderr
    assert closed(port) and not forwarder.is_running(workdir / "fw" / "nfd.sock")
    shutil.rmtree(workdir, ignore_errors=True)


def test_runs_until_sigterm_and_its_fetch_command_works(fw, sample_dir, tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        up("--port", str(port), "--data", str(sample_dir)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdout is not None
    lines = []

    def banner_or_exit() -> bool:  # each call reads one line (blocking)
        lines.append(proc.stdout.readline())
        return "Press Ctrl-C" in lines[-1] or not lines[-1]

    wait_for(banner_or_exit, 60, "the banner", every=0, detail=lambda: ": " + "".join(lines))
    banner = "".join(lines)
    assert "Press Ctrl-C" in banner, banner + proc.stderr.read()
    assert "made here; removed on stop: --workdir DIR keeps it)" in banner  # a temp workdir
    assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health").is_success
    command = next(line for line in lines if " fetch --query" in line).strip()
    fetched = subprocess.run(
        ["sh", "-c", command], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )  # the command exactly as printed
    assert fetched.returncode == 0, fetched.stderr
    assert len(list((tmp_path / "ndnsci-data").rglob("tas_*.nc"))) == 3
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert closed(port)


def test_a_busy_port_is_a_clear_error(fw, sample_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            up("--port", str(port), "--data", str(sample_dir)),
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert out.returncode == 1 and f"port {port} is in use" in out.stderr
    assert "Traceback" not in out.stderr
    # refused before anything was started or published (that takes seconds)
    assert "publishing" not in out.stderr and "forwarder:" not in out.stderr, out.stderr


def test_a_data_folder_that_does_not_exist_is_an_error(fw, tmp_path):
    missing = tmp_path / "does" / "not" / "exist"
    out = subprocess.run(
        up("--port", str(free_port()), "--data", str(missing)),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines()[-1] == f"ndnsci up: --data {missing}: no such directory"
    assert not (tmp_path / "does").exists()  # no sample written there, nothing published


def test_a_stack_on_anothers_forwarder_stops_when_it_stops(make_forwarder, sample_dir, tmp_path):
    other = make_forwarder("borrowed")  # the forwarder running (say, a first `ndnsci up`'s)
    proc = subprocess.Popen(
        [*CLI, "up", "--ws-port", "0", "--port", str(free_port()), "--data", str(sample_dir),
         "--workdir", str(tmp_path / "w")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NDN_CLIENT_TRANSPORT": other.uri},
    )  # fmt: skip
    try:
        is_up, banner = _until_up_or_exit(proc)
        assert is_up, banner
        other.stop()
        assert proc.wait(60) == 1
        err = proc.stderr.read() if proc.stderr else ""
        assert f"using the one running on {other.sock}" in err and "stops too" in err
        assert f"the forwarder on {other.sock} that this stack was using" in err, err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)


def test_a_busy_websocket_port_is_a_clear_error_not_another_port(fw, sample_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        ws_port = busy.getsockname()[1]
        out = subprocess.run(
            up("--ws-port", str(ws_port), "--port", str(free_port()), "--data", str(sample_dir)),
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert out.returncode == 1
    assert f"WebSocket port {ws_port} is in use" in out.stderr and "--ws-port 0" in out.stderr
    assert "ndnsci is up" not in out.stdout and "Traceback" not in out.stderr


def test_two_ups_on_one_port_at_once_only_one_is_up(fw, sample_dir, tmp_path):
    """Both find the port free; the second's catalog cannot bind it and must not take the
    first's /health for its own (the catalog names its instance)."""
    port = free_port()
    command = up("--port", str(port), "--data", str(sample_dir), "--workdir")
    procs = [
        subprocess.Popen(
            [*command, str(tmp_path / w)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for w in ("a", "b")
    ]
    try:
        outcomes = [_until_up_or_exit(proc) for proc in procs]
        assert sorted(up_ for up_, _ in outcomes) == [False, True], outcomes
        loser = procs[[up_ for up_, _ in outcomes].index(False)]
        assert loser.returncode == 1 and "Traceback" not in outcomes[procs.index(loser)][1]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    assert closed(port)


def _until_up_or_exit(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[bool, str]:
    """(True, banner) once it says it is up; (False, stderr) when it exits first."""
    assert proc.stdout is not None and proc.stderr is not None
    lines = []

    def said() -> tuple[bool, str] | None:  # each call reads one line (blocking)
        line = proc.stdout.readline()
        if not line:  # exited
            proc.wait(30)
            return False, proc.stderr.read()
        lines.append(line)
        if "Press Ctrl-C" in line:
            return "ndnsci is up" in "".join(lines), "".join(lines)
        return None

    return wait_for(
        said,
        timeout,
        "ndnsci up to say it is up or to exit",
        every=0,
        detail=lambda: ": " + "".join(lines),
    )


def test_a_stack_takes_only_its_own_catalog_for_ready(stack):
    """The readiness check of `ndnsci up`: another catalog on the port is not ours."""
    from ndnsci.site.stack import LocalStack

    other = LocalStack(port=0, set_environment=False)
    other.catalog_url = stack.catalog_url
    assert stack._healthy() and not other._healthy()


def test_the_native_line_says_whether_it_is_built_and_how_to_turn_it_on(monkeypatch, tmp_path):
    from ndnsci.cli import up as up_command
    from ndnsci.native import install

    monkeypatch.setattr(install, "ndn_dpdk", lambda: None)
    line = up_command.native_line()
    assert "not built" in line and "`make native`" in line and "`ndnsci native up`" in line
    monkeypatch.setattr(install, "ndn_dpdk", lambda: install.Build(tmp_path))
    line = up_command.native_line()
    assert f"built ({tmp_path})" in line and "`ndnsci native up`" in line and "\n" not in line


def test_a_stacks_transfer_agent_runs_a_job_into_its_transfer_root(stack):
    """`ndnsci up` runs a transfer agent: a job submitted to its catalog lands, verified,
    under the stack's transfer root; the agent logs it where the stack's logs go."""
    import hashlib

    made = subprocess.run(
        [*CLI, "catalog", "token", "create", "up-transfers", "--db", stack.db_url],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    token = made.stdout.split()[0]
    api = f"{stack.catalog_url}/api/v1"
    found = httpx.get(f"{api}/search", params={"model": "HadCM3", "variable": "tas"}).json()
    names = [row["name"] for row in found["results"][:2]]
    assert len(names) == 2
    submitted = httpx.post(
        f"{api}/transfers",
        json={"names": names, "destination": "up-test"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert submitted.status_code == 201, submitted.text
    job = submitted.json()["id"]

    def finished() -> dict | None:
        status = httpx.get(f"{api}/transfers/{job}").json()
        return status if status["state"] in ("done", "failed", "cancelled") else None

    status = wait_for(finished, 60, "the stack's agent to run the job")
    assert status["state"] == "done" and status["counts"]["done"] == 2, status
    for row in httpx.get(f"{api}/transfers/{job}/files").json()["files"]:
        landed = stack.transfer_root / "up-test" / row["path"]
        assert hashlib.sha256(landed.read_bytes()).hexdigest() == row["sha256"]
    log = stack.log_path("transfer-agent").read_text()
    assert f"job {job}: " in log and "now done" in log
