"""`ndnsci publish` and ``Catalog.publish`` against a real catalog server (``ndnsci catalog
serve`` on loopback, SQLite and PostgreSQL): batches cut to the limits the server states, bad
lines found at once, name collisions reported, and a catalog that goes away is a clear error."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from support import child_processes, free_port, wait_for

from ndnsci.cli import main
from ndnsci.sdk.client import AsyncCatalog, Catalog
from ndnsci.sdk.publish import PublishLimits, PublishReport
from ndnsci_catalog.database import make_engine

DATA = Path(__file__).parents[1] / "data" / "netcdf" / "cmip5" / "output1"
NDNSCI = Path(sys.executable).with_name("ndnsci")
LIMIT = 100  # records per request the test servers accept


class Server:
    """``ndnsci catalog serve`` on a free loopback port, stopped by the test.

    The port is free when chosen, not when the server binds it, an interpreter's start later
    (seconds under load, while other workers start servers and open connections): a server
    that finds it taken exits, and another server may be answering there. So the wait is for
    this server's answer (its ``/health`` instance), it ends as soon as the process exits, and
    a port taken in between is chosen again."""

    ATTEMPTS = 3  # ports tried

    def __init__(self, db_url: str, **settings: str) -> None:
        self.instance = uuid.uuid4().hex
        env = {**os.environ, **{f"NDNSCI_{k.upper()}": v for k, v in settings.items()}}
        env["NDNSCI_INSTANCE"] = self.instance
        for attempt in range(1, self.ATTEMPTS + 1):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop and kill)
            self.process = subprocess.Popen(
                [str(NDNSCI), "catalog", "serve", "--db", db_url, "--port", str(self.port)],
                stdout=subprocess.DEVNULL, stderr=self.log, env=env,
            )  # fmt: skip
            answered = wait_for(
                self._ours, 60, f"the catalog server to answer at {self.url}",
                ignoring=(httpx.TransportError, ValueError), detail=self._stderr,
            )  # fmt: skip
            if answered is True:
                return
            said = self._stderr()
            self.log.close()
            if "address already in use" not in said.lower() or attempt == self.ATTEMPTS:
                raise RuntimeError(f"the catalog server exited ({self.process.returncode}){said}")

    def _ours(self) -> bool | str:
        """True once this server answers; "exited" (true: the wait ends) once it has exited."""
        if self.process.poll() is not None:
            return "exited"
        health = httpx.get(self.url + "/api/v1/health", timeout=1)
        return health.is_success and health.json().get("instance") == self.instance

    def _stderr(self) -> str:
        self.log.seek(0)
        return "; its stderr:\n" + self.log.read().decode(errors="replace")[-3000:]

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)
        self.log.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture
def token(fresh_db_url: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["catalog", "token", "create", "tests", "--db", fresh_db_url]) == 0
    return capsys.readouterr().out.strip()


@pytest.fixture
def server(fresh_db_url: str, token: str) -> Iterator[Server]:
    running = Server(fresh_db_url, max_publish_records=str(LIMIT))
    yield running
    running.stop()


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state"


def files_in(db_url: str) -> int:
    engine = make_engine(db_url)
    with engine.connect() as conn:
        count = int(conn.exec_driver_sql("SELECT files FROM catalog_state").scalar() or 0)
    engine.dispose()
    return count


def lines(n: int, bad: dict[int, str] | None = None) -> list[bytes]:
    """``n`` JSON lines as ``ndnsci translate --json`` writes them; ``bad`` replaces some (by
    line number, from 1)."""
    out = []
    for i in range(1, n + 1):
        name = f"/CMIP5/output1/X/M/historical/mon/atmos/Amon/r1i1p1/v1/tas/tas_{i}.nc"
        record = {"input": f"/archive/tas_{i}.nc", "ok": True, "scheme": "cmip5", "name": name,
                  "filename": f"tas_{i}.nc", "facets": {"model": "M"}, "corrections": [],
                  "error": None}  # fmt: skip
        out.append((bad or {}).get(i, json.dumps(record)).encode() + b"\n")
    return out


def test_the_server_starts_its_preparing_process_with_itself_and_joins_it_at_exit(
    fresh_db_url, token
):
    """The preparing process is ready when the server answers (the first publish does not
    wait for an interpreter to start), and is gone once the server has exited."""
    running = Server(fresh_db_url)
    try:
        workers = [
            pid for pid in child_processes(running.process.pid)
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]  # fmt: skip
        assert len(workers) == 1
    finally:
        running.stop()
    assert not Path(f"/proc/{workers[0]}").exists()  # joined by the server, not left a zombie


def test_a_server_whose_port_is_taken_before_it_binds_it_starts_on_another(tmp_path, monkeypatch):
    """The race of every test server (the port chosen free, taken before the bind): this
    server is not taken for the one that holds the port, and starts on the next one."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        ports, free = iter([taken]), free_port
        monkeypatch.setattr(sys.modules[__name__], "free_port", lambda: next(ports, None) or free())
        running = Server(f"sqlite:///{tmp_path / 'catalog.db'}")  # one backend: it is the port
        try:
            assert running.port != taken
            health = httpx.get(running.url + "/api/v1/health", timeout=30).json()
            assert health["instance"] == running.instance
        finally:
            running.stop()


def test_a_killed_server_leaves_no_preparing_process_behind(fresh_db_url, token):
    """SIGKILL gives the server no chance to stop its pool: its preparing process and
    multiprocessing's resource tracker notice their parent is gone and exit on their own."""
    running = Server(fresh_db_url)
    children = child_processes(running.process.pid)
    assert children  # the preparing process and the resource tracker
    running.kill()

    def gone() -> bool:
        return not any(Path(f"/proc/{pid}").exists() and _not_zombie(pid) for pid in children)

    wait_for(gone, 15, "the killed server's children to exit")


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_stream_larger_than_the_limit_goes_in_the_batches_the_server_states(
    server, token, fresh_db_url
):
    """The server takes LIMIT records per request (its /health says so); 1050 lines are 11
    requests, none refused, none taken for a bad record."""
    limits = httpx.get(server.url + "/api/v1/limits").json()
    assert limits["max_publish_records"] == LIMIT
    with Catalog(server.url, token=token) as catalog:
        report = catalog.publish(iter(lines(1050)))
    assert (report.inserted, report.requests, report.refused) == (1050, 11, [])
    assert files_in(fresh_db_url) == 1050


def test_the_command_line_streams_records_over_http(server, token, fresh_db_url, tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    records.write_bytes(b"".join(lines(250)))
    code = main(["publish", "--records", str(records), "--catalog", server.url, "--token", token])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "250 published" in err and "0 quarantined" in err
    assert files_in(fresh_db_url) == 250


def test_a_bad_line_in_the_middle_is_quarantined_and_the_rest_sent_once(
    server, token, fresh_db_url, tmp_path, monkeypatch, capsys
):
    bad = {57: '{"input": "/archive/broken.nc", "name": "/CMIP5/../etc", "scheme": "cmip5"}',
           131: "not json"}  # fmt: skip
    body = b"".join(lines(250, bad))
    with Catalog(server.url, token=token) as catalog:
        report = catalog.publish(io.BytesIO(body))
    assert [(r.line, r.source) for r in report.refused] == [
        (57, "/archive/broken.nc"), (131, "line 131"),
    ]  # fmt: skip
    assert "not a valid NDN name" in report.refused[0].reason
    # 3 batches of 100, 100 and 50 lines: each batch with a bad line was sent twice (the
    # first answer lists its bad lines), the requests that published are 3
    assert (report.inserted, report.requests) == (248, 3)
    assert files_in(fresh_db_url) == 248
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(body)))
    code = main(["publish", "--records", "-", "--catalog", server.url, "--token", token])
    err = capsys.readouterr().err
    assert code == 1
    assert "QUARANTINE /archive/broken.nc" in err and "QUARANTINE line 131" in err
    assert "248 published" in err and "2 quarantined" in err


def test_the_async_client_publishes_alike(server, token, fresh_db_url):
    async def stream() -> AsyncIterator[bytes]:
        for line in lines(250, {57: "not json"}):
            yield line

    async def publish() -> PublishReport:
        async with AsyncCatalog(server.url, token=token) as catalog:
            report = await catalog.publish(stream())
            changes = await catalog.changes(since=0, limit=1000)
        assert len({c.name for c in changes.changes}) == changes.last_seq == 249
        return report

    report = asyncio.run(publish())
    assert (report.inserted, report.requests) == (249, 3)
    assert [(r.line, r.source) for r in report.refused] == [(57, "line 57")]
    assert files_in(fresh_db_url) == 249


def test_a_limit_refusal_is_never_a_bad_record(server, token, fresh_db_url, monkeypatch):
    """A client that believes the limit is higher (a server restarted with a lower one) is
    told 413 batch-too-large with the limits, cuts its batch and sends it again."""
    stale = PublishLimits(max_records=1000, max_bytes=64 << 20)
    monkeypatch.setattr(PublishLimits, "from_limits", classmethod(lambda cls, _: stale))
    with Catalog(server.url, token=token) as catalog:
        report = catalog.publish(lines(450))
    assert (report.inserted, report.refused) == (450, [])
    assert report.requests == 5  # the 413 answers are not counted: 100+100+100+100+50
    assert files_in(fresh_db_url) == 450


def _collision_pair(root: Path) -> tuple[Path, Path]:
    """The real case: one file name under .../6hrLev/... and .../6hrPlev/..., two different
    files (here a tests/data file and a copy with another tracking_id)."""
    import netCDF4

    source = next(DATA.rglob("hfls_Amon_CanCM4_*.nc"))
    name = "hfls_6hrPlev_CanCM4_historical_r4i1p1_1961010100-2005123118.nc"
    pair = []
    for table in ("6hrLev", "6hrPlev"):
        directory = root / "output1/CCCma/CanCM4/historical/6hr/atmos" / table / "r4i1p1/v1/hfls"
        directory.mkdir(parents=True)
        shutil.copy(source, directory / name)
        pair.append(directory / name)
    with netCDF4.Dataset(pair[1], "a") as ds:
        ds.tracking_id = "another-file"
    assert pair[0].read_bytes() != pair[1].read_bytes()
    return pair[0], pair[1]


@pytest.mark.parametrize("over", ["http", "db"])
def test_a_name_collision_keeps_the_first_file_and_reports_both(
    over, server, token, fresh_db_url, tmp_path, state_home, capsys
):
    first, second = _collision_pair(tmp_path / "archive")
    target = (
        ["--catalog", server.url, "--token", token] if over == "http" else ["--db", fresh_db_url]
    )
    root = str(tmp_path / "archive")
    report_file = tmp_path / "report.jsonl"
    code = main(["publish", root, *target, "--jobs", "1", "--quarantine", str(report_file)])
    err = capsys.readouterr().err
    assert code == 1, err
    relative = str(first.relative_to(root))
    assert f"published from: {relative}\n    not published: {second}" in err
    assert "1 published, 0 unchanged (skipped), 0 quarantined, 1 name collisions" in err
    (entry,) = [json.loads(line) for line in report_file.read_text().splitlines()]
    assert (entry["code"], entry["source"], entry["published"]) == (
        "name-collision", str(second), relative,
    )  # fmt: skip
    with Catalog(server.url) as catalog:
        (found,) = catalog.search(model="CanCM4", table="6hrPlev")
        assert catalog.get(found.name).metadata["global_attributes"]["tracking_id"] != (
            "another-file"
        )
    # the collided file is not remembered as published: it is reported again next time
    assert main(["publish", root, *target, "--jobs", "1"]) == 1
    assert "1 name collisions" in capsys.readouterr().err
    # --replace publishes it instead, and says so
    assert main(["publish", root, *target, "--jobs", "1", "--replace"]) == 0
    err = capsys.readouterr().err
    assert f"published from: {relative}\n    replaced it: {second}" in err
    with Catalog(server.url) as catalog:
        record = catalog.get(found.name)
    assert record.metadata["global_attributes"]["tracking_id"] == "another-file"
    assert len(record.history) == 1
    assert files_in(fresh_db_url) == 1


def held_by_another_site(db_url: str, names: list[str]) -> None:
    """The catalog is site 'here' of a federation; site 'there' published ``names``."""
    from ndnsci_catalog import sites
    from ndnsci_catalog.database import make_sessionmaker

    engine = make_engine(db_url)
    with make_sessionmaker(engine)() as session:
        sites.init_local(session, "here", "/here", "1" * 64)
        sites.trust(session, "there", "/there", "2" * 64)
        record = {"scheme": "cmip5", "size": 1, "facets": {"model": "M"}}
        changes = [{"op": "publish", "name": n, "record": {**record, "name": n}} for n in names]
        assert sites.apply_batch(session, "there", 5, 1, changes).published == len(names)
        session.commit()
    engine.dispose()


def test_names_another_site_holds_are_reported_by_line_never_published(
    server, token, fresh_db_url, tmp_path, capsys
):
    """Site 'there' holds the names of lines 3 and 7: the SDK lists them with their lines and
    sources; the command line quarantines them, over HTTP and into the database alike."""
    records = lines(10)
    held = [json.loads(records[i - 1])["name"] for i in (3, 7)]
    held_by_another_site(fresh_db_url, held)
    with Catalog(server.url, token=token) as catalog:
        report = catalog.publish(iter(records))
    assert [(c.line, c.source, c.name, c.held_by) for c in report.conflicts] == [
        (3, "/archive/tas_3.nc", held[0], "there"),
        (7, "/archive/tas_7.nc", held[1], "there"),
    ]
    assert (report.inserted, report.refused, report.ok) == (8, [], False)
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"".join(records))
    for target in (["--catalog", server.url, "--token", token], ["--db", fresh_db_url]):
        assert main(["publish", "--records", str(path), *target]) == 1
        err = capsys.readouterr().err
        assert err.count("held by site 'there'") == 2, err
        assert "8 published, 0 unchanged (skipped), 2 quarantined" in err
    for name in held:  # still 'there's record
        assert httpx.get(f"{server.url}/api/v1/files{name}").json()["site"] == "there"


def test_a_file_whose_name_another_site_holds_is_quarantined_every_run(
    fresh_db_url, tmp_path, state_home, capsys
):
    """Files into a database: the held one is reported, and not remembered as published."""
    from ndnsci.sdk.describe import DescribedFile, describe_all, found

    named = [
        d for d in describe_all(found([str(DATA)]), checksum=False) if isinstance(d, DescribedFile)
    ]
    held_by_another_site(fresh_db_url, [named[0].name])
    for _ in range(2):
        assert main(["publish", str(DATA), "--db", fresh_db_url, "--jobs", "1"]) == 1
        err = capsys.readouterr().err
        assert f"QUARANTINE {named[0].path}" in err and "held by site 'there'" in err
    assert f"{len(named) - 1} unchanged (skipped), 1 quarantined" in err


def test_scan_reports_the_collision_with_both_paths(tmp_path, capsys):
    first, second = _collision_pair(tmp_path / "archive")
    code = main(["scan", "--metadata", "--json", str(tmp_path / "archive")])
    summary = json.loads(capsys.readouterr().out)
    assert code == 1
    assert summary["collisions"] == [
        {"name": summary["collisions"][0]["name"], "sources": [str(first), str(second)]}
    ]
    assert "/6hrPlev/" in summary["collisions"][0]["name"]


def test_no_catalog_at_the_url_is_a_clear_error(tmp_path, capsys):
    records = tmp_path / "records.jsonl"
    records.write_bytes(b"".join(lines(3)))
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    code = main(["publish", "--records", str(records), "--catalog", url, "--token", "t"])
    err = capsys.readouterr().err
    assert code == 3
    assert f"ndnsci publish: no catalog answers at {url}" in err and "Traceback" not in err


def test_a_peer_that_drops_every_connection_is_a_clear_error(tmp_path, capsys):
    """Something on the port accepts and closes without answering (a catalog restarting, a
    proxy in front of none): httpx.RemoteProtocolError, said plainly, no traceback."""
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    def drop_connections() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                connection.recv(65536)
                connection.close()

    threading.Thread(target=drop_connections, daemon=True).start()
    records = tmp_path / "records.jsonl"
    records.write_bytes(b"".join(lines(3)))
    try:
        code = main(["publish", "--records", str(records), "--catalog", url, "--token", "t"])
    finally:
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() so the thread ends
        listener.close()
    err = capsys.readouterr().err
    assert code == 3
    assert f"ndnsci publish: the catalog at {url} dropped the connection during a request" in err
    assert "RemoteProtocolError" in err and "Traceback" not in err


def test_a_catalog_killed_during_a_publish_is_a_clear_error_and_keeps_what_was_published(
    fresh_db_url, token, tmp_path
):
    """The server is killed (SIGKILL) while requests are in flight: the publisher says the
    catalog stopped answering during the publish (one message, whether the kill dropped a
    request or refused the next connection), exits 3, and the batches it had committed stay
    published, at least as many as it says."""
    server = Server(fresh_db_url, max_publish_records=str(LIMIT))
    records = tmp_path / "records.jsonl"
    records.write_bytes(b"".join(lines(200_000)))
    publisher = subprocess.Popen(
        [str(NDNSCI), "publish", "--records", str(records), "--catalog", server.url,
         "--token", token],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(
            lambda: files_in(fresh_db_url) >= 10 * LIMIT, 120, "10 batches published", every=0.05
        )
        server.kill()
        _, err = publisher.communicate(timeout=120)
    finally:
        server.stop()
        if publisher.poll() is None:
            publisher.kill()
    assert publisher.returncode == 3, err
    assert "Traceback" not in err
    said = re.search(
        rf"ndnsci publish: the catalog at {re.escape(server.url)} stopped answering during the "
        r"publish \(\w+: .*\); the (\d+) records it confirmed stay published: run the same "
        r"command again for the rest",
        err,
    )
    assert said is not None, err
    published = files_in(fresh_db_url)
    assert 10 * LIMIT <= published < 200_000 and published % LIMIT == 0
    assert int(said.group(1)) <= published  # a batch in flight may have been committed too
