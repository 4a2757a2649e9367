"""`ndnsci site -c FILE`: the configuration is checked whole before anything starts; each bad
file gets its one message (file, line, key, what to write instead) and exit status 2."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from ndnsci.cli import main
from ndnsci.errors import SiteConfigError
from ndnsci.site import config as site_config
from tests.support import CLI, make_certificate

GOOD_KEY = "ab" * 32


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A folder with a data root, a certificate pair and a private key beside the TOML."""
    (tmp_path / "data").mkdir()
    cert, key = make_certificate(tmp_path)
    cert.rename(tmp_path / "cert.pem")
    key.rename(tmp_path / "tls.key")
    make_certificate(tmp_path, "other")  # other.crt, other.key: not the pair of cert.pem
    key = tmp_path / "site.pem"
    key.write_text(
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----\n"
    )
    key.chmod(0o600)
    junk = tmp_path / "junk.key"
    junk.write_text("not a key\n")
    junk.chmod(0o600)
    return tmp_path


def write(folder: Path, text: str) -> Path:
    path = folder / "site.toml"
    path.write_text(text)
    return path


def test_five_lines_make_a_site(site: Path) -> None:
    path = write(site, '[site]\nname = "ucla"\n\n[[data]]\npath = "data"\n')
    config = site_config.load(path, check_ports=False)  # 8000: another engineer's demo?
    assert config.name == "ucla"
    assert config.prefix == "/ucla"
    assert config.data[0].path == site / "data"
    assert config.data[0].engine == "auto"
    assert config.catalog.db.startswith("sqlite:///")
    assert config.catalog.db.endswith("/sites/ucla/catalog.db")
    assert str(config.catalog.listen) == "127.0.0.1:8000"
    assert config.gateway.enabled is False


def test_a_full_file_reads_every_key(site: Path) -> None:
    path = write(
        site,
        f"""
[site]
name = "ucla"
prefix = "/ucla/cmip"
key = "site.pem"
state_dir = "state"

[catalog]
db = "postgresql://catalog@db.example.org/catalog"
listen = "127.0.0.1:0"
workers = 2
tls_cert = "cert.pem"
tls_key = "tls.key"
allowed_origins = ["https://portal.example.org"]
trusted_proxies = ["10.0.0.0/24"]

[[data]]
path = "data"
scheme = "cmip6"
engine = "python"

[forwarder]
ws_port = 0
faces = ["udp4://192.0.2.1:6363"]
routes = [{{ prefix = "/mit", face = "udp4://192.0.2.1:6363" }}]

[[federation.trusted]]
name = "mit"
prefix = "/mit"
key = "{GOOD_KEY}"

[gateway]
enabled = true
listen = "127.0.0.1:0"
""",
    )
    config = site_config.load(path)
    assert config.prefix == "/ucla/cmip"
    assert config.key == site / "site.pem"
    assert config.state_dir == site / "state"
    assert config.catalog.workers == 2
    assert config.catalog.tls_cert == site / "cert.pem"
    assert config.catalog.trusted_proxies == ("10.0.0.0/24",)
    assert config.data[0].scheme == "cmip6"
    assert config.forwarder.routes[0].prefix == "/mit"
    assert config.trusted[0].key == GOOD_KEY
    assert config.gateway.enabled


def _busy_port() -> tuple[socket.socket, int]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s, s.getsockname()[1]


HEAD = '[site]\nname = "ucla"\n'

# (the file after HEAD or whole, the line, the key, what the message must say)
BAD = {
    "not-toml": ('[site\nname = "x"\n', 1, "", "not TOML"),
    "no-site": ("[catalog]\nworkers = 1\n", 1, "site", "needs [site] with name"),
    "no-name": ('[site]\nprefix = "/x"\n', 1, "site", "'name' is missing"),
    "unknown-table": (HEAD + "[catalgo]\nworkers = 1\n", 3, "catalgo", "did you mean [catalog]?"),
    "unknown-key": (
        HEAD + "[catalog]\nworker = 2\n",
        4,
        "catalog.worker",
        "did you mean 'workers'?",
    ),
    "unknown-site-key": (HEAD + 'prefx = "/u"\n', 3, "site.prefx", "did you mean 'prefix'?"),
    "name-type": (
        "[site]\nname = 7\n",
        2,
        "site.name",
        "must be a string in quotes, not the number 7",
    ),
    "bad-name": ('[site]\nname = "UCLA site"\n', 2, "site.name", "write a lower-case letter"),
    "bad-prefix": (HEAD + 'prefix = "ucla"\n', 3, "site.prefix", 'write e.g. "/ucla"'),
    "workers-type": (
        HEAD + '[catalog]\nworkers = "2"\n',
        4,
        "catalog.workers",
        "must be a whole number, not the string '2'",
    ),
    "workers-bool": (
        HEAD + "[catalog]\nworkers = true\n",
        4,
        "catalog.workers",
        "must be a whole number, not the boolean true",
    ),
    "workers-range": (HEAD + "[catalog]\nworkers = 0\n", 4, "catalog.workers", "1-64"),
    "listen": (HEAD + '[catalog]\nlisten = "8000"\n', 4, "catalog.listen", "is not HOST:PORT"),
    "listen-host": (
        HEAD + '[catalog]\nlisten = "example.org:80"\n',
        4,
        "catalog.listen",
        "is not an IP address",
    ),
    "db-url": (HEAD + '[catalog]\ndb = "mysql://x/y"\n', 4, "catalog.db", "postgresql://"),
    "db-folder": (HEAD + '[catalog]\ndb = "data"\n', 4, "catalog.db", "is a folder"),
    "missing-cert": (
        HEAD + '[catalog]\ntls_cert = "nope.pem"\ntls_key = "tls.key"\n',
        4,
        "catalog.tls_cert",
        "no certificate at",
    ),
    "cert-without-key": (
        HEAD + '[catalog]\ntls_cert = "cert.pem"\n',
        3,
        "catalog.tls_key",
        "TLS needs both",
    ),
    "mismatched-tls-key": (
        HEAD + '[catalog]\ntls_cert = "cert.pem"\ntls_key = "other.key"\n',
        5,
        "catalog.tls_key",
        "is not the key of the certificate",
    ),
    "tls-cert-not-pem": (
        HEAD + '[catalog]\ntls_cert = "junk.key"\ntls_key = "tls.key"\n',
        4,
        "catalog.tls_cert",
        "is not a PEM certificate",
    ),
    "origin": (
        HEAD + '[catalog]\nallowed_origins = ["portal.example.org/x"]\n',
        4,
        "catalog.allowed_origins[0]",
        "write an origin",
    ),
    "proxy": (
        HEAD + '[catalog]\ntrusted_proxies = ["10.0.0.300"]\n',
        4,
        "catalog.trusted_proxies[0]",
        "is not an address",
    ),
    "no-data-root": (HEAD + '[[data]]\npath = "missing"\n', 4, "data[0].path", "no folder"),
    "data-no-path": (HEAD + '[[data]]\nscheme = "cmip6"\n', 3, "data[0]", "'path' is missing"),
    "engine": (
        HEAD + '[[data]]\npath = "data"\nengine = "rust"\n',
        5,
        "data[0].engine",
        "write one of auto, python, ndn-dpdk",
    ),
    "scheme": (
        HEAD + '[[data]]\npath = "data"\nscheme = "cmip7"\n',
        5,
        "data[0].scheme",
        "write one of auto",
    ),
    "second-root": (
        HEAD + '[[data]]\npath = "data"\n[[data]]\npath = "gone"\n',
        6,
        "data[1].path",
        "no folder",
    ),
    "missing-key": (HEAD + 'key = "none.pem"\n', 3, "site.key", "no publisher key at"),
    "open-key": (HEAD + 'key = "cert.pem"\n', 3, "site.key", "readable by others"),
    "bad-key": (HEAD + 'key = "junk.key"\n', 3, "site.key", "is not a PEM private key"),
    "face": (
        HEAD + '[forwarder]\nfaces = ["192.0.2.1"]\n',
        4,
        "forwarder.faces[0]",
        "is not a face URI",
    ),
    "ws-port": (HEAD + "[forwarder]\nws_port = 70000\n", 4, "forwarder.ws_port", "is not a port"),
    "route-key": (
        HEAD + '[forwarder]\nroutes = [{ prefix = "/mit", fac = "udp4://a:1" }]\n',
        4,
        "forwarder.routes[0].fac",
        "did you mean 'face'?",
    ),
    "trust-no-key": (
        HEAD + '[[federation.trusted]]\nname = "mit"\nprefix = "/mit"\n',
        3,
        "federation.trusted[0]",
        "'key' is missing: a trusted site needs key",
    ),
    "trust-bad-key": (
        HEAD + '[[federation.trusted]]\nname = "mit"\nprefix = "/mit"\nkey = "xyz"\n',
        6,
        "federation.trusted[0].key",
        "64 hex digits",
    ),
    "trust-self": (
        HEAD + f'[[federation.trusted]]\nname = "ucla"\nprefix = "/u"\nkey = "{GOOD_KEY}"\n',
        4,
        "federation.trusted[0].name",
        "another site's name",
    ),
    "gateway-enabled": (
        HEAD + '[gateway]\nenabled = "yes"\n',
        4,
        "gateway.enabled",
        "must be true or false",
    ),
    "transfers-parallel": (
        HEAD + "[transfers]\nparallel = 0\n",
        4,
        "transfers.parallel",
        "write a number of workers, 1-256",
    ),
    "transfers-root-in-data": (
        HEAD + '[[data]]\npath = "data"\n\n[transfers]\nroot = "data/copies"\n',
        7,
        "transfers.root",
        "write a folder of its own",
    ),
    "transfers-root-file": (
        HEAD + '[transfers]\nroot = "cert.pem"\n',
        4,
        "transfers.root",
        "is not a folder",
    ),
    "transfers-unknown-key": (
        HEAD + "[transfers]\nparalel = 2\n",
        4,
        "transfers.paralel",
        "did you mean 'parallel'?",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_configuration_gets_its_one_message(
    case: str, site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, line, key, says = BAD[case]
    if case == "open-key":
        (site / "cert.pem").chmod(0o644)
    path = write(site, text)
    before = sorted(p.name for p in site.iterdir())
    code = main(["site", "up", "-c", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith(f"ndnsci site up: {path}:{line}: ")
    if key:
        assert f":{line}: {key}: " in err
    assert says in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in site.iterdir()) == before  # nothing made, nothing started


def test_a_port_in_use_is_named(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    busy, port = _busy_port()
    with busy:
        path = write(site, HEAD + f'[catalog]\nlisten = "127.0.0.1:{port}"\n')
        assert main(["site", "check", "-c", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4: catalog.listen: port {port} is in use" in err
    assert "write another port" in err


def test_an_unreadable_data_root_is_named(site: Path) -> None:
    (site / "data").chmod(0)
    path = write(site, HEAD + '[[data]]\npath = "data"\n')
    try:
        done = check_without_override(path)
    finally:
        (site / "data").chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"ndnsci site check: {path}:4: data[0].path: ")
    assert "is not readable by this user" in done.stderr


def check_without_override(path: Path) -> subprocess.CompletedProcess[str]:
    """`ndnsci site check -c path` in a subprocess that cannot read past a folder's mode: root
    reads every folder, so as root the check runs without the capabilities that let it
    (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set)."""
    argv = [*CLI, "site", "check", "-c", str(path)]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.fail("setpriv (util-linux) is missing")
        argv = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SiteConfigError, match="cannot read the site's configuration"):
        site_config.load(tmp_path / "none.toml")


def test_check_prints_the_configuration(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = write(site, HEAD + '[catalog]\nlisten = "127.0.0.1:0"\n[[data]]\npath = "data"\n')
    assert main(["site", "check", "-c", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["name"] == "ucla"
    assert shown["data"][0]["path"] == str(site / "data")
