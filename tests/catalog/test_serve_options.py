"""`ndnsci catalog serve` with TLS, trusted proxies, several workers and CORS, as real server
processes on loopback: what a site's configuration asks of it (docs/site.md)."""

from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import CLI, make_certificate, run_cli, wait_for

from ndnsci.base.processes import free_port
from ndnsci_translators import translate

from .corpus import CORPORA

START_BUDGET = 90.0  # a server answering its health check, on a loaded machine of 2 cores


@contextmanager
def serving(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, verify: Any = True
) -> Iterator[tuple[str, Path]]:
    """``ndnsci catalog serve ARGS`` on a free port of 127.0.0.1 until the block ends: its
    URL (https with ``--tls-cert``) and its log."""
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    scheme = "https" if "--tls-cert" in args else "http"
    url = f"{scheme}://127.0.0.1:{port}"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [*CLI, "catalog", "serve", "--db", str(tmp_path / "catalog.db"), "--port", str(port),
             "--no-gateway", *args],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
            start_new_session=True,
        )  # fmt: skip

    def up() -> bool:
        assert server.poll() is None, f"the server exited:\n{log.read_text()}"
        return httpx.get(url + "/api/v1/health", timeout=2, verify=verify).status_code == 200

    try:
        wait_for(up, START_BUDGET, "the catalog's health", ignoring=httpx.TransportError,
                 detail=lambda: "\n" + log.read_text())  # fmt: skip
        yield url, log
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait(timeout=30)


# --- TLS ---------------------------------------------------------------------------------------


def test_https_with_the_certificate_it_was_given_and_no_plain_http(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    trusted = ssl.create_default_context(cafile=str(cert))
    with serving(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key), verify=trusted) as (
        url,
        log,
    ):
        assert url.startswith("https://")
        health = httpx.get(url + "/api/v1/health", verify=trusted, timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(url + "/api/v1/health", timeout=10)  # the system's CAs do not know it
        with pytest.raises(httpx.TransportError):  # plain HTTP to the TLS port gets nothing
            httpx.get(url.replace("https://", "http://") + "/api/v1/health", timeout=10)
        assert "Uvicorn running on https://127.0.0.1:" in log.read_text()


def test_a_sites_parts_trust_its_certificate_alone_whatever_host_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A certificate for the site's public name, served at 127.0.0.1: the SDK (a site's
    producer) pins it with NDNSCI_CATALOG_CERT; without, the system's CAs refuse it."""
    from ndnsci.base import tls
    from ndnsci.errors import CatalogUnavailableError
    from ndnsci.sdk.client import Catalog

    cert, key = make_certificate(tmp_path, names="DNS:catalog.example.org")
    pinned = tls.pinned(cert)
    with serving(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key), verify=pinned) as (
        url,
        _log,
    ):
        monkeypatch.delenv("NDNSCI_CATALOG_CERT", raising=False)
        with Catalog(url) as catalog, pytest.raises(CatalogUnavailableError):
            len(catalog.search())  # asked when used
        monkeypatch.setenv("NDNSCI_CATALOG_CERT", str(cert))
        with Catalog(url) as catalog:
            assert len(catalog.search()) == 0
        other, _ = make_certificate(tmp_path, "other")  # another certificate: refused
        monkeypatch.setenv("NDNSCI_CATALOG_CERT", str(other))
        with Catalog(url) as catalog, pytest.raises(CatalogUnavailableError):
            len(catalog.search())  # asked when used


def _bad_tls(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Each bad TLS argument: the arguments, and what the one line of the error says."""
    cert, key = make_certificate(tmp_path)
    other_cert, other_key = make_certificate(tmp_path, "other")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    encrypted = tmp_path / "encrypted.key"
    subprocess.run(
        ["openssl", "pkey", "-in", str(key), "-aes256", "-passout", "pass:secret", "-out",
         str(encrypted)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    missing = tmp_path / "missing.key"
    return {
        "cert without key": (["--tls-cert", str(cert)], "--tls-cert needs --tls-key too"),
        "key without cert": (["--tls-key", str(key)], "--tls-key needs --tls-cert too"),
        "mismatched key": (
            ["--tls-cert", str(cert), "--tls-key", str(other_key)],
            f"the TLS key {other_key} is not the key of the certificate {cert}",
        ),
        "missing key": (
            ["--tls-cert", str(other_cert), "--tls-key", str(missing)],
            f"cannot read the TLS key {missing}: No such file or directory",
        ),
        "unreadable certificate": (  # a folder: unreadable as a file, even to root
            ["--tls-cert", str(tmp_path), "--tls-key", str(key)],
            f"cannot read the TLS certificate {tmp_path}: Is a directory",
        ),
        "not a certificate": (
            ["--tls-cert", str(junk), "--tls-key", str(key)],
            f"{junk} is not a PEM certificate",
        ),
        "not a key": (
            ["--tls-cert", str(cert), "--tls-key", str(junk)],
            f"{junk} is not a PEM private key",
        ),
        "key with a passphrase": (
            ["--tls-cert", str(cert), "--tls-key", str(encrypted)],
            f"the TLS key {encrypted} is encrypted: write one without a passphrase",
        ),
    }


def test_a_bad_certificate_or_key_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "db" / "catalog.db"
    db.parent.mkdir()
    for case, (args, says) in _bad_tls(tmp_path).items():
        done = run_cli("catalog", "serve", "--db", str(db), "--port", str(free_port()), *args,
                       timeout=60)  # fmt: skip
        assert done.returncode == 2, (case, done.stderr)
        assert done.stdout == "", case
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("ndnsci catalog serve: "), (case, lines)
        assert says in lines[0], (case, lines)
        assert not db.exists(), case  # refused before the database is touched


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workers", "0"], "not a number of processes (1-64): '0'"),
        (["--workers", "65"], "not a number of processes (1-64): '65'"),
        (["--workers", "two"], "not a number of processes (1-64): 'two'"),
        (["--trusted-proxies", "10.0.0.300"], "not an IP address or network: '10.0.0.300'"),
        (["--trusted-proxies", "10.0.0.1,proxy.example"], "'proxy.example'"),
    ],
)
def test_bad_workers_or_proxies_are_usage_errors(
    tmp_path: Path, args: list[str], says: str
) -> None:
    done = run_cli("catalog", "serve", "--db", str(tmp_path / "c.db"), *args, timeout=60)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "c.db").exists()


# --- proxies -----------------------------------------------------------------------------------

FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}


def _catalog_file(url: str) -> str:
    """The URL the catalog generates for the intake-esm CSV: it carries the scheme and the
    host the request came by."""
    answer = httpx.get(url + "/api/v1/export/intake-esm", headers=FORWARDED, timeout=10)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["catalog_file"])


def _one_file(folder: Path) -> dict[str, Any]:
    """A catalog in ``folder`` with one published file (what ``serving`` serves): its record."""
    folder.mkdir()
    db = f"sqlite:///{folder / 'catalog.db'}"
    line = (CORPORA / "cmip5_paths.tsv").read_text().splitlines()[1]
    record = translate(line.split("\t")[0]).to_dict()
    records = folder / "records.jsonl"
    records.write_text(json.dumps(record) + "\n")
    done = run_cli("publish", "--records", str(records), "--db", db)
    assert done.returncode == 0, done.stderr
    return record


def _esgf_urls(url: str) -> list[str]:
    """The HTTPServer URL of the ESGF record and the URL the wget script downloads, asked as
    through a proxy that says the client came by https."""
    found = httpx.get(url + "/esg-search/search", headers=FORWARDED, timeout=30,
                      params={"type": "File", "format": "application/solr+json"})  # fmt: skip
    assert found.status_code == 200, found.text
    (doc,) = found.json()["response"]["docs"]
    http = [u.split("|")[0] for u in doc["url"] if u.endswith("|HTTPServer")]
    script = httpx.get(url + "/esg-search/wget", headers=FORWARDED, timeout=30).text
    in_script = [w for w in script.split() if w.strip("'\"").startswith(("http://", "https://"))
                 and "/data/" in w]  # fmt: skip
    return http + [w.strip("'\"") for w in in_script[:1]]


def test_forwarded_headers_count_from_a_trusted_proxy_only(tmp_path: Path) -> None:
    for folder in "abc":
        _one_file(tmp_path / folder)
    with (
        serving(tmp_path / "a", "--trusted-proxies", "127.0.0.1,10.0.0.0/24") as (trusting, log),
        serving(tmp_path / "b", "--trusted-proxies", "10.0.0.0/24") as (other, other_log),
        serving(tmp_path / "c") as (default, default_log),
    ):
        # a request from 127.0.0.1 through a trusted proxy: the client's scheme and address
        assert _catalog_file(trusting).startswith("https://127.0.0.1:")
        # from an address that is not a trusted proxy, or with none trusted: the headers are lies
        assert _catalog_file(other).startswith(other + "/")
        assert _catalog_file(default).startswith(default + "/")
        # the ESGF record's HTTPServer URL and the wget script's: the public scheme
        public = [u.startswith("https://127.0.0.1:") for u in _esgf_urls(trusting)]
        assert public == [True, True], _esgf_urls(trusting)
        plain = _esgf_urls(other)
        assert len(plain) == 2 and all(u.startswith(other + "/data/") for u in plain), plain
        wait_for(lambda: "203.0.113.7:0 - \"GET /api/v1/export/intake-esm" in log.read_text(),
                 10, "the client's address in the access log")  # fmt: skip
        for ignoring in (other_log, default_log):
            text = ignoring.read_text()
            assert "203.0.113.7" not in text
            assert "127.0.0.1:" in text and "GET /api/v1/export/intake-esm" in text


# --- CORS ----------------------------------------------------------------------------------------


def _preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(
        url + "/api/v1/search",
        headers={"Origin": origin, "Access-Control-Request-Method": "GET"},
        timeout=10,
    )


def test_a_preflight_from_an_allowed_origin_only(tmp_path: Path) -> None:
    origins = json.dumps(["https://portal.example.org"])
    with serving(tmp_path, env={"NDNSCI_CORS_ORIGINS": origins}) as (url, _log):
        allowed = _preflight(url, "https://portal.example.org")
        assert allowed.status_code == 200
        assert allowed.headers["access-control-allow-origin"] == "https://portal.example.org"
        refused = _preflight(url, "https://evil.example.net")
        assert refused.status_code == 400
        assert "access-control-allow-origin" not in refused.headers


# --- workers -------------------------------------------------------------------------------------


def _worker_of(connection: http.client.HTTPConnection, port: int) -> int:
    """The server process holding the other end of ``connection`` (by its socket's inode)."""
    assert connection.sock is not None
    client_port = connection.sock.getsockname()[1]
    inode = ""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = fields[1], fields[2]
        if local.endswith(f":{port:04X}") and remote.endswith(f":{client_port:04X}"):
            inode = fields[9]
    assert inode, "the server's end of the connection is not in /proc/net/tcp"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue
        if f"socket:[{inode}]" in links:
            return int(proc.name)
    raise AssertionError(f"no process holds socket {inode}")


def _ask(connection: http.client.HTTPConnection, method: str, path: str, **kw: Any) -> Any:
    connection.request(method, path, **kw)
    answer = connection.getresponse()
    body = answer.read()
    assert answer.status == 200, (path, answer.status, body[:500])
    return json.loads(body)


def test_two_workers_answer_and_a_publish_in_one_is_found_through_the_other(
    tmp_path: Path,
) -> None:
    db = f"sqlite:///{tmp_path / 'catalog.db'}"
    assert run_cli("catalog", "migrate", "--db", db).returncode == 0
    made = run_cli("catalog", "token", "create", "tests", "--db", db)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    line = (CORPORA / "cmip5_paths.tsv").read_text().splitlines()[1]
    record = translate(line.split("\t")[0]).to_dict()
    with serving(tmp_path, "--workers", "2") as (url, log):
        port = int(url.rsplit(":", 1)[1])
        assert "(2 workers)" in log.read_text()
        # connections until two of them are held by different workers (the kernel hands each
        # accepted connection to whichever worker accepts first)
        by_worker: dict[int, http.client.HTTPConnection] = {}
        opened = []
        for _ in range(40):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            opened.append(connection)
            health = _ask(connection, "GET", "/api/v1/health")
            by_worker.setdefault(_worker_of(connection, port), connection)
            if len(by_worker) == 2:
                break
        assert len(by_worker) == 2, "one worker answered 40 connections"
        (first, one), (second, other) = by_worker.items()
        assert first != second
        # the one instance: a supervisor knows its server whichever worker answers
        assert _ask(other, "GET", "/api/v1/health")["instance"] == health["instance"]
        assert _ask(other, "GET", "/api/v1/search")["total"] == 0  # its index, loaded
        published = _ask(
            one, "POST", "/api/v1/publish", body=json.dumps(record) + "\n",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
        )  # fmt: skip
        assert published["inserted"] == 1, published
        # the other worker's facet index follows the database at its next search: no delay
        found = _ask(other, "GET", "/api/v1/search")
        assert found["total"] == 1 and [r["name"] for r in found["results"]] == [record["name"]]
        assert _worker_of(other, port) == second
        for connection in opened:
            connection.close()
