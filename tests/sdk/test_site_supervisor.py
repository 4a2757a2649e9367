"""The supervisor's watch: a part that dies is restarted and counted; one that keeps dying is
marked failed and left down while the others stay up. Real child processes, no forwarder."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from ndnsci.site import config as site_config
from ndnsci.site import supervisor
from ndnsci.site.supervisor import Supervisor, _Part


def test_a_part_that_keeps_dying_is_left_down_and_the_rest_stay_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor, "BACKOFF_FIRST", 0.0)
    monkeypatch.setattr(supervisor, "BACKOFF_MAX", 0.0)
    path = tmp_path / "site.toml"
    path.write_text(f'[site]\nname = "t"\nstate_dir = "{tmp_path / "state"}"\n')
    config = site_config.load(path, check_ports=False)
    log = io.StringIO()
    sup = Supervisor(config, log=log)
    sup.dir.mkdir(parents=True)
    # `ndnsci --version` ends at once: a part that dies every time it is started
    dying = _Part("dying", ["--version"], lambda: True)
    # a part that stays up: a sleeping child, watched by its pid
    steady = _Part("steady", None, lambda: True)
    sup.parts = [dying, steady]
    sup._launch(dying)
    dying.state.state = "up"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        steady.pid = steady.state.pid = sleeper.pid
        steady.state.started = supervisor.processes.start_time(sleeper.pid)
        steady.state.state = "up"
        assert dying.proc is not None
        while dying.state.state != "failed":
            dying.proc.wait()
            sup.watch()  # counts the death
            sup.watch()  # back-off over: restarts it
        assert dying.state.restarts == supervisor.GIVE_UP - 1
        assert steady.state.state == "up"
        assert steady.state.restarts == 0
        assert sleeper.poll() is None
        said = log.getvalue()
        assert said.count("dying: pid") == supervisor.GIVE_UP - 1
        assert f"dying: died {supervisor.GIVE_UP} times" in said
        assert "left down, the rest stay up" in said
        shown = supervisor.processes.load_state(
            supervisor.state_path(config), supervisor.SiteState, RuntimeError, "state"
        )
        assert shown is not None
        assert shown.parts["dying"]["state"] == "failed"
        assert shown.parts["steady"]["state"] == "up"
    finally:
        sleeper.kill()
        sleeper.wait()
        if dying.proc is not None:
            dying.proc.wait()


def test_logs_and_status_of_a_site_that_is_not_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ndnsci.cli import main

    state = tmp_path / "state"
    state.mkdir()
    (state / "catalog.log").write_text("one\ntwo\nthree\n")
    path = tmp_path / "site.toml"
    path.write_text(f'[site]\nname = "t"\nstate_dir = "{state}"\n')
    assert main(["site", "logs", "-c", str(path), "catalog", "-n", "2"]) == 0
    assert capsys.readouterr().out == "== catalog ==\ntwo\nthree\n"
    assert main(["site", "logs", "-c", str(path), "gateway"]) == 1
    assert "no part 'gateway' in site t: one of catalog" in capsys.readouterr().err
    assert main(["site", "status", "-c", str(path), "--json"]) == 3
    assert '"running": false' in capsys.readouterr().out
    assert main(["site", "down", "-c", str(path)]) == 0
    assert capsys.readouterr().out == "site t: not running\n"


def test_the_catalogs_health_check_trusts_the_configured_certificate_alone(
    tmp_path: Path,
) -> None:
    """Over https the supervisor's readiness check takes the answer of a server presenting the
    configured certificate (whatever host it names), refuses one presenting another, and says
    why: the message of a catalog that never gets ready carries it."""
    import json
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.support import make_certificate

    served, served_key = make_certificate(tmp_path, "served", names="DNS:catalog.example.org")
    other, other_key = make_certificate(tmp_path, "other")
    instance = {"id": ""}

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"status": "ok", "instance": instance["id"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(served, served_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        for cert, key, ready in ((served, served_key, True), (other, other_key, False)):
            path = tmp_path / "site.toml"
            path.write_text(
                f'[site]\nname = "t"\nstate_dir = "{tmp_path / "state"}"\n'
                f'[catalog]\ntls_cert = "{cert}"\ntls_key = "{key}"\n'
            )
            sup = Supervisor(site_config.load(path, check_ports=False))
            instance["id"] = sup.instance
            sup.catalog_url = f"https://127.0.0.1:{server.server_address[1]}"
            assert sup._healthy() is ready
            if not ready:
                assert "CERTIFICATE_VERIFY_FAILED" in sup.health_said, sup.health_said
    finally:
        server.shutdown()
        server.server_close()
