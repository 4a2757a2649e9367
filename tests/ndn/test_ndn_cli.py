"""``ndnsci forwarder`` and ``ndnsci keys`` from the command line."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from support import run_cli as ndnsci

from ndnsci.base.processes import free_port
from ndnsci.errors import PublisherKeyError
from ndnsci.ndn import forwarder, keys


def test_forwarder_start_status_stop(ndnd_binary, session_dir):
    sock = session_dir / "cli" / "nfd.sock"
    env = {"NDNSCI_FW_UDP_PORT": str(free_port()), "NDNSCI_FW_WS_PORT": str(free_port())}
    started = ndnsci(
        "forwarder", "start", "--socket", str(sock), "--cs-capacity", "200000", env=env
    )
    try:
        assert started.returncode == 0, started.stderr
        assert f"NDN_CLIENT_TRANSPORT=unix://{sock}" in started.stdout
        again = ndnsci("forwarder", "start", "--socket", str(sock), env=env)
        assert again.returncode == 1 and "already running" in again.stderr
        status = ndnsci("forwarder", "status", "--socket", str(sock))
        assert status.returncode == 0 and "v1.5.3" in status.stdout
        # 200,000 packets do not fit 2 threads x 65535: spread over 4
        assert "threads: 4  # env" in (sock.parent / "ndnd.yml").read_text()
    finally:
        stopped = ndnsci("forwarder", "stop", "--socket", str(sock))
    assert stopped.returncode == 0
    assert ndnsci("forwarder", "status", "--socket", str(sock)).returncode == 1
    assert ndnsci("forwarder", "stop", "--socket", str(sock)).returncode == 1


def test_a_busy_websocket_port_is_a_clear_error(ndnd_binary, session_dir):
    sock = session_dir / "busy-ws" / "nfd.sock"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {"NDNSCI_FW_UDP_PORT": str(free_port()), "NDNSCI_FW_WS_PORT": str(port)}
        started = ndnsci("forwarder", "start", "--socket", str(sock), env=env)
    assert started.returncode == 1
    assert f"the WebSocket port 127.0.0.1:{port} is not free" in started.stderr
    assert "NDNSCI_FW_WS_PORT" in started.stderr and "Traceback" not in started.stderr
    assert not forwarder.is_running(sock)


def test_forwarder_path_prints_the_binary(ndnd_binary):
    out = ndnsci("forwarder", "path", env={"NDND": str(ndnd_binary)})
    assert out.returncode == 0 and out.stdout.strip() == str(ndnd_binary)


def test_socket_defaults_follow_ndn_client_transport(monkeypatch, tmp_path):
    monkeypatch.setenv("NDN_CLIENT_TRANSPORT", f"unix://{tmp_path}/x.sock")
    assert forwarder.socket_path() == tmp_path / "x.sock"
    monkeypatch.delenv("NDN_CLIENT_TRANSPORT")
    monkeypatch.setenv("NDNSCI_FW_SOCK", str(tmp_path / "fw.sock"))
    assert forwarder.socket_path() == tmp_path / "fw.sock"
    monkeypatch.delenv("NDNSCI_FW_SOCK")
    (tmp_path / "run").mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    assert forwarder.socket_path() == tmp_path / "run" / "ndnsci" / "nfd.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")  # no runtime directory: a private one in /tmp
    expected = Path(tempfile.gettempdir()) / f"ndnsci-{os.getuid()}" / "nfd.sock"
    assert forwarder.socket_path() == expected


def test_config_rendering_matches_run_sh(tmp_path):
    template = (forwarder.repo_dir() / "deploy" / "forwarder" / "ndnd.yml").read_text()
    env = {"NDNSCI_FW_SOCK": "/x/nfd.sock", "NDNSCI_FW_UDP_PORT": "1234"}
    script = forwarder.repo_dir() / "deploy" / "forwarder" / "run.sh"
    rendered = subprocess.run(
        [str(script), "--config"],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **env, "NDNSCI_FW_SOCK": str(tmp_path / "s" / "nfd.sock")},
    )
    shell = (tmp_path / "s" / "ndnd.yml").read_text()
    ours = forwarder.render_config(
        template, {**env, "NDNSCI_FW_SOCK": str(tmp_path / "s" / "nfd.sock")}
    )
    assert rendered.returncode == 0 and ours == shell


def test_keys_create_is_private_and_refuses_overwrite(tmp_path):
    env = {"NDNSCI_CONFIG_DIR": str(tmp_path / "cfg")}
    first = ndnsci("keys", "create", env=env)
    assert first.returncode == 0, first.stderr
    path = tmp_path / "cfg" / "keys" / "default.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = ndnsci("keys", "create", env=env)
    assert again.returncode == 1 and "already exists" in again.stderr
    shown = ndnsci("keys", "show", env=env)
    assert shown.stdout.splitlines()[0] == first.stdout.splitlines()[0]


def test_a_key_readable_by_others_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("NDNSCI_CONFIG_DIR", str(tmp_path))
    keys.create()
    os.chmod(keys.key_path(), 0o644)
    with pytest.raises(PublisherKeyError, match="readable by others"):
        keys.load()
