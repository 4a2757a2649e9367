"""Transfer jobs end to end: a real stack (NDNd, the catalog, ``ndnsci serve --catalog``), the
agent as the command a site runs (``ndnsci transfer agent``), and what a job must survive:
the agent SIGKILLed mid-job and started again, the producer killed and restarted, one file
changed at the producer (refused, retried, reported with its reason), a cancel and a retry.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import CLI, changed_in_place, run_cli, wait_for

import ndnsci
from ndnsci.errors import CatalogError

FILES = 50
#: a few files large enough that a kill lands mid-file (the fetch resumes from its .part)
BIG = {7: 24 << 20, 23: 24 << 20, 31: 24 << 20, 41: 24 << 20}
#: changed in place at the producer after publishing; the job's last file, so that its
#: attempts come after the producer's restart (each says why it was refused)
CHANGED = FILES - 1
PARALLEL = 3
#: the first back-off (then 2 and 4 s): a file tried while the producer is away keeps
#: attempts for after its restart
RETRY_DELAY = 1.0


def lfn(number: int) -> str:
    guid = f"{number:08X}-0000-4000-8000-{number:012X}"
    return f"store/data/Run2018A/EGamma/MINIAOD/17Sep2018-v2/{number % 4}0000/{guid}.root"


def name_of(number: int) -> str:
    return "/CMS/" + lfn(number)


@pytest.fixture(scope="module")
def site(fw: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("origin")
    for number in range(FILES):
        path = root / lfn(number)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(BIG.get(number, 256 << 10)))
    workdir = Path(f"/tmp/ndnsci-xfer-{os.getpid()}")
    # the agent is the test's own (it is killed, restarted, given a short back-off)
    stack = ndnsci.LocalStack(root, port=0, workdir=workdir, agent=False, set_environment=False)
    with stack:
        made = run_cli("catalog", "token", "create", "transfers", "--db", stack._db_url)
        assert made.returncode == 0, made.stderr
        stack.token = made.stdout.strip()
        yield stack
    shutil.rmtree(workdir, ignore_errors=True)


class AgentProcess:
    """``ndnsci transfer agent`` as a site runs it, its log kept for the assertions."""

    def __init__(self, site: Any, root: Path, log: Path) -> None:
        self.args = [
            *CLI, "transfer", "agent", "--db", site._db_url, "--root", str(root),
            "--parallel", str(PARALLEL), "--name", "agent-1", "--retry-delay", str(RETRY_DELAY),
        ]  # fmt: skip
        self.env = {**os.environ, "NDN_CLIENT_TRANSPORT": site.transport}
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> AgentProcess:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(self.args, stderr=out, stdout=out, env=self.env)
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.terminate()
            return self.proc.wait(20)
        return self.proc.returncode


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_job_of_50_files_survives_kills_and_reports_the_file_it_cannot_verify(
    site: Any, tmp_path: Path
) -> None:
    catalog = ndnsci.Catalog(site.catalog_url, token=site.token)
    origin = site.data / lfn(CHANGED)
    kept = origin.read_bytes()
    changed_in_place(origin, 20_000)
    job = catalog.transfer([name_of(n) for n in range(FILES)], "replica/cms", engine="python")
    first = job.status()
    assert (first.state, first.files, first.counts["pending"]) == ("queued", FILES, FILES)
    assert first.bytes == sum(BIG.get(n, 256 << 10) for n in range(FILES))

    root = tmp_path / "transfers"
    agent = AgentProcess(site, root, tmp_path / "agent.log").start()
    try:
        # SIGKILL once some files are in place and others are running
        wait_for(lambda: job.status().counts["done"] >= 10 or None, 120, "10 files done")
        agent.kill()
        killed = job.status()
        assert killed.counts["done"] < FILES
        # the producer goes away too, and comes back while the agent runs again
        site._procs["producer"].kill()
        site._procs["producer"].wait(10)
        agent.start()
        time.sleep(1.5)
        site._start_producer()
        ended = job.wait(timeout=240, poll=0.5)
    finally:
        assert agent.stop() == 0
    log = (tmp_path / "agent.log").read_text()
    assert "continuing" in log, log[-3000:]  # the restarted agent took its files back at once

    assert ended.state == "failed", ended
    assert (ended.counts["done"], ended.counts["failed"]) == (FILES - 1, 1)
    failed = job.files("failed")
    assert [f.name for f in failed] == [name_of(CHANGED)]
    assert failed[0].attempts == 4 and failed[0].error
    assert "changed since it was published" in failed[0].error, failed[0].error
    for number in range(FILES):
        copy = root / "replica/cms" / name_of(number).lstrip("/")
        if number == CHANGED:
            assert not copy.exists()
        else:
            assert digest(copy) == digest(site.data / lfn(number)), number
    # files in place but not yet reported when the agent was killed (at most one per worker)
    # are found complete, and verified, by the next agent
    assert sum(ended.engines.values()) == FILES - 1
    assert set(ended.engines) <= {"python", "already-complete"}
    assert ended.engines.get("already-complete", 0) <= PARALLEL
    assert ended.bytes_done == ended.bytes - len(kept)
    assert not list(root.rglob("*.part"))

    # the producer's file put back as published: a retry finishes the job
    origin.write_bytes(kept)  # a new mtime: the producer reads it again
    retried = job.retry()
    assert retried.state == "queued" and retried.counts["pending"] == 1
    agent = AgentProcess(site, root, tmp_path / "agent.log").start()
    try:
        done = job.wait(timeout=120, poll=0.5)
    finally:
        agent.stop()
    assert done.state == "done" and done.counts["done"] == FILES
    copy = root / "replica/cms" / name_of(CHANGED).lstrip("/")
    assert copy.read_bytes() == kept


def test_a_cancelled_job_stops_and_a_retry_finishes_it(site: Any, tmp_path: Path) -> None:
    catalog = ndnsci.Catalog(site.catalog_url, token=site.token)
    names = [name_of(n) for n in range(FILES) if n != CHANGED]
    job = catalog.transfer(names, "cancelled", engine="python")
    root = tmp_path / "transfers"
    agent = AgentProcess(site, root, tmp_path / "agent.log").start()
    try:
        wait_for(lambda: job.status().counts["done"] >= 3 or None, 120, "3 files done")
        cancelled = job.cancel()
        assert cancelled.state == "cancelled"
        settled = wait_for(
            lambda: ((s := job.status()).counts["running"] == 0 and s) or None, 30, "files to stop"
        )
        assert settled.state == "cancelled"
        assert settled.counts["cancelled"] > 0 and settled.counts["pending"] == 0
        stopped_at = settled.counts["done"]
        time.sleep(2)  # nothing more starts
        assert job.status().counts["done"] == stopped_at
        assert job.retry().state in ("queued", "running")
        done = job.wait(timeout=120, poll=0.5)
    finally:
        assert agent.stop() == 0
    assert done.state == "done" and done.counts["done"] == len(names)
    for name in names:
        copy = root / "cancelled" / name.lstrip("/")
        assert digest(copy) == digest(site.data / name.removeprefix("/CMS/")), name


def test_the_command_line_submits_follows_and_lists_a_job(site: Any, tmp_path: Path) -> None:
    env = {"NDNSCI_CATALOG": site.catalog_url, "NDNSCI_TOKEN": site.token}
    agent = AgentProcess(site, tmp_path / "t", tmp_path / "agent.log").start()
    try:
        out = run_cli("transfer", "submit", "cli", name_of(1), name_of(2), "--wait", env=env)
    finally:
        agent.stop()
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("job ") and " done: 2/2 files" in out.stdout
    listed = run_cli("transfer", "list", "--json", env=env)
    assert listed.returncode == 0 and '"destination": "cli"' in listed.stdout
    missing = run_cli("transfer", "submit", "cli", "/CMS/store/none.root", env=env)
    assert missing.returncode == 2
    assert "cannot be transferred" in missing.stderr and "Traceback" not in missing.stderr
    unknown = run_cli("transfer", "status", "999999", env=env)
    assert unknown.returncode == 2 and "no transfer job 999999" in unknown.stderr
    with pytest.raises(CatalogError, match="needs a token"):
        ndnsci.Catalog(site.catalog_url, token="").transfer([name_of(1)], "x")

    async def through_asyncio() -> tuple[Any, Any, Any]:
        async with ndnsci.AsyncCatalog(site.catalog_url) as cat:
            newest = (await cat.transfers(limit=1))[0]
            handle = ndnsci.AsyncTransfer(cat, newest.id)
            return newest, await handle.wait(timeout=5), await handle.files()

    newest, waited, files = asyncio.run(through_asyncio())
    assert newest.destination == "cli" and waited == newest
    assert [f.name for f in files] == [name_of(1), name_of(2)]
    assert {f.state for f in files} == {"done"}


def test_a_copy_is_a_replica_the_catalog_knows_and_serves_when_the_origin_is_stopped(
    site: Any, tmp_path: Path
) -> None:
    from ndnsci.sdk.fetch import fetch_file

    catalog = ndnsci.Catalog(site.catalog_url, token=site.token)
    names = [name_of(n) for n in (2, 3, 7)]
    job = catalog.transfer(names, "mirror", engine="python")
    root = tmp_path / "transfers"
    agent = AgentProcess(site, root, tmp_path / "agent.log").start()
    try:
        assert job.wait(timeout=120, poll=0.5).state == "done"
    finally:
        agent.stop()
    record = catalog.get(names[2])
    # one replica per job that copied it (the other tests' jobs may have, to other folders)
    held = {r["path"]: r for r in record.replicas}
    assert held["mirror/" + names[2].lstrip("/")]["size"] == BIG[7]
    assert all(p.endswith(names[2]) for p in held)
    assert {r["sha256"] for r in record.replicas} == {record.sha256}
    # the origin goes away; the copy's folder is served by a producer of its own, which names
    # the files as publishing does and serves those the catalog holds, verified
    site._procs["producer"].kill()
    site._procs["producer"].wait(10)
    log = tmp_path / "replica.log"
    with log.open("wb") as out:
        replica = subprocess.Popen(
            [*CLI, "serve", str(root / "mirror"), "--catalog", site.catalog_url, "-v"],
            stderr=out, env=site._env(NDN_CLIENT_TRANSPORT=site.transport),
        )  # fmt: skip
    try:
        wait_for(lambda: " on unix://" in log.read_text(), 30, "the replica's producer")
        env = {"NDN_CLIENT_TRANSPORT": site.transport}
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            got = fetch_file(names[2], tmp_path / "again", catalog=site.catalog_url)
        finally:
            for key, value in old.items():
                os.environ.pop(key) if value is None else os.environ.__setitem__(key, value)
        assert got.checksum == "verified"
        assert digest(Path(got.path)) == digest(site.data / lfn(7))
    finally:
        replica.terminate()
        replica.wait(10)
        site._start_producer()
