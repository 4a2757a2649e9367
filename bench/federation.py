"""Federation benchmark: convergence time and catalog traffic for N records between two sites.

Two sites on this machine, each as a real site runs it: an NDNd forwarder, a SQLite catalog
named by ``ndnsci catalog site init`` and ``ndnsci catalog federate``; the forwarders are linked
by UDP faces on loopback, so latency and bandwidth are the loopback's. The same measurement
across the testbed's emulated WAN (200 Mbit/s, 40 ms round trip) is ``sudo .venv/bin/ndnsci
testbed run federation`` (ndnsci/testbed/experiments.py, docs/testbed.md section 6). Records
are bench/catalog.py's realistic ones (GLADE CMIP5 rows, 10% CMS LFNs). Site A publishes them
with ``ndnsci publish --records`` while both daemons run; the clock stops when B's catalog holds
every one of them.

Traffic is read from the forwarders: the bytes of every packet received on their UDP faces
(the link between A and B, both directions) between the start and the convergence, sync
Interests, metadata, keys and segments included.
In the same run, a third catalog mirrors A over HTTP (``ndnsci catalog mirror``) from the same
signed batches: the peer figure the NDN convergence is compared with.

    .venv/bin/python bench/federation.py [--records 100000] [--batch-changes 2000]

Prints one figure per line: ``n=<N> <figure>: <value> <unit>``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from catalog import records  # noqa: E402
from ndnsci.ndn import control, forwarder, keys  # noqa: E402
from ndnsci.ndn.transport import Face  # noqa: E402
from ndnsci_catalog import sites  # noqa: E402
from ndnsci_catalog.database import make_engine, make_sessionmaker  # noqa: E402
from ndnsci_catalog.migrate import upgrade  # noqa: E402
from ndnsci_catalog.models import File  # noqa: E402


def free_port(kind: int = socket.SOCK_STREAM) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Site:
    def __init__(self, root: Path, name: str, with_forwarder: bool = True) -> None:
        self.name = name
        self.dir = root / name
        self.dir.mkdir(parents=True)
        self.db = f"sqlite:///{self.dir / 'catalog.db'}"
        self.sock = self.dir / "fw" / "nfd.sock"
        self.udp = free_port(socket.SOCK_DGRAM)
        self.env = {**os.environ, "NDN_CLIENT_TRANSPORT": f"unix://{self.sock}",
                    "NDNSCI_CONFIG_DIR": str(self.dir / "config")}  # fmt: skip
        self.procs: list[subprocess.Popen[bytes]] = []
        if with_forwarder:
            ports = {"NDNSCI_FW_UDP_PORT": str(self.udp), "NDNSCI_FW_WS_PORT": str(free_port())}
            forwarder.start(self.sock, extra_env=ports)
        os.environ["NDNSCI_CONFIG_DIR"] = self.env["NDNSCI_CONFIG_DIR"]
        self.key = keys.create()
        upgrade(self.db)
        self.sessions = make_sessionmaker(make_engine(self.db))
        with self.sessions() as session:
            sites.init_local(session, name, f"/{name}", self.key.public.hex())
            session.commit()

    def trust(self, other: Site) -> None:
        with self.sessions() as session:
            sites.trust(session, other.name, f"/{other.name}", other.key.public.hex())
            session.commit()

    def spawn(self, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.dir / f"{args[1]}.log", "wb")  # noqa: SIM115 - the child's
        proc = subprocess.Popen([sys.executable, "-m", "ndnsci", *args], env=self.env,
                                stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        self.procs.append(proc)
        if args[1] == "federate":
            self.daemon = proc
        return proc

    def daemon_cpu(self) -> float:
        """CPU seconds the federation daemon used so far (user + system)."""
        fields = Path(f"/proc/{self.daemon.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def count(self, origin: str) -> int:
        from sqlalchemy import func, select

        with self.sessions() as session:
            query = select(func.count()).select_from(File).where(File.site == origin)
            return int(session.scalar(query) or 0)

    def received(self) -> tuple[int, int]:
        """Bytes and packets received on this forwarder's UDP faces (the links to other
        sites). Received only: NDNd 1.5.3 reports a face's received bytes as its sent bytes
        too (fw/mgmt/face.go), so each direction is read where it arrives."""
        with Face(f"unix://{self.sock}") as face:
            table = control.faces(face)
        udp = [f for f in table if str(f.get("uri", "")).startswith("udp")]
        total = sum(int(f.get("in_bytes", 0)) for f in udp)
        packets = sum(int(f.get(k, 0)) for f in udp for k in ("in_interests", "in_data"))
        return total, packets

    def close(self) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(10)
        if self.sock.parent.exists():
            forwarder.stop(self.sock)


def wait(check: Any, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return time.monotonic()
        time.sleep(0.2)
    raise SystemExit(f"no convergence within {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--batch-changes", type=int, default=2000)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    n = args.records
    root = Path(tempfile.mkdtemp(prefix="ndnsci-bf-", dir="/tmp"))
    group: list[Site] = []
    try:
        a, b = Site(root, "a"), Site(root, "b")
        group += [a, b]
        a.trust(b)
        b.trust(a)
        port = free_port()
        a.spawn("catalog", "serve", "--db", a.db, "--port", str(port), "--no-migrate")
        for site, other in ((a, b), (b, a)):
            link = f"--link={other.name}=udp4://127.0.0.1:{other.udp}"
            site.spawn("catalog", "federate", "--db", site.db, "--batch-changes",
                       str(args.batch_changes), link)  # fmt: skip
        time.sleep(5)  # the daemons join their group
        recs = records(n, random.Random(1))
        lines = root / "records.jsonl"
        lines.write_text("".join(json.dumps(r) + "\n" for r in recs))
        before = _link(a, b)
        cpu_before = a.daemon_cpu(), b.daemon_cpu()
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "ndnsci", "publish", "--records", str(lines),
                        "--db", a.db], env=a.env, check=True, capture_output=True)  # fmt: skip
        published = time.monotonic()
        converged = wait(lambda: b.count("a") == n, args.timeout)
        after = _link(a, b)
        cpu_a, cpu_b = a.daemon_cpu() - cpu_before[0], b.daemon_cpu() - cpu_before[1]
        with a.sessions() as session:
            envelopes = sites.batch_bytes(session)
            batches = sites.local_site(session).applied  # type: ignore[union-attr]
        # the HTTP fallback, from the same signed batches
        c = Site(root, "c", with_forwarder=False)
        group.append(c)
        c.trust(a)
        url = f"http://127.0.0.1:{port}"
        wait(lambda: _up(url), 60)
        http_start = time.monotonic()
        subprocess.run([sys.executable, "-m", "ndnsci", "catalog", "mirror", "--from", url,
                        "--db", c.db], env=c.env, check=True, capture_output=True)  # fmt: skip
        http = time.monotonic() - http_start
        assert c.count("a") == n
        traffic = after[0] - before[0]
        print(
            f"n={n} records published at a (ndnsci publish --records): "
            f"{published - start:.1f} s ({n / (published - start):,.0f} records/s)"
        )
        print(
            f"n={n} convergence over NDN, publish start to b holding all: {converged - start:.1f} s"
        )
        print(f"n={n} convergence over NDN after the publish ended: {converged - published:.1f} s")
        print(
            f"n={n} signed batches: {batches} x {args.batch_changes} changes, "
            f"{envelopes:,} bytes ({envelopes / n:.0f} bytes per record; JSON lines "
            f"{lines.stat().st_size:,} bytes)"
        )
        print(
            f"n={n} catalog traffic a<->b over NDN: {traffic:,} bytes, "
            f"{after[1] - before[1]:,} packets ({traffic / n:.0f} bytes per record, "
            f"x{traffic / envelopes:.2f} the batches)"
        )
        print(
            f"n={n} CPU of a's daemon (reading, sealing, serving the batches): {cpu_a:.1f} s "
            f"({cpu_a / n * 1e6:.0f} µs per record)"
        )
        print(
            f"n={n} CPU of b's daemon (fetching, verifying, applying): {cpu_b:.1f} s "
            f"({cpu_b / n * 1e6:.0f} µs per record)"
        )
        print(f"n={n} HTTP mirror of the same batches (from zero): {http:.1f} s")
        print(
            f"n={n} ratio NDN convergence after publish / HTTP mirror: "
            f"{(converged - published) / http:.2f}"
        )
        print(f"n={n} load average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        for site in group:
            site.close()
        shutil.rmtree(root, ignore_errors=True)


def _link(a: Site, b: Site) -> tuple[int, int]:
    """Bytes and packets on the link between a and b, both directions."""
    (ab, ap), (bb, bp) = a.received(), b.received()
    return ab + bb, ap + bp


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/health", timeout=1).is_success
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()
