"""Transfer benchmark: ndnsci fetch/serve against ndnd cat/put, warm and cold, at several sizes.

One private NDNd forwarder (unix socket in a temp folder, private UDP/WebSocket ports) per file
size, one random file, and these transfers, interleaved round after round:

    cold: ndnsci fetch <- ndnsci serve (a version the forwarder has never seen)
    warm: ndnsci fetch <- forwarder cache (the same version again)
    warm: ndnd cat <- forwarder cache (the same version: ndnd cat's own discovery, then the CS)
    cold: ndnd cat <- ndnd put (a fresh name)

Printed per size: medians, the ratios ``ndnsci fetch / ndnd cat`` (throughput; >= 1.0: ndnsci
is at least as fast) warm and cold, and CPU shares during the transfer: the consumer's
(user + system time over its wall time) and the forwarder's, to show which one is the limit.
Producers are made ready before the clock starts (``ndnd put`` has read and signed the file;
``ndnsci serve`` has its SHA-256). Times are the consumer process's wall time, start to exit,
writing the file to disk (ndnsci also hashes it on disk; ndnd cat does not).

Time to first byte: ``ndnsci fetch`` of a small netCDF file (the catalog's typical 30 KB),
from the process's start to its first byte in the output (polled every 0.5 ms), and to exit.

Python's bytecode is cached for the consumers (PYTHONPYCACHEPREFIX in the temp folder, even
when PYTHONDONTWRITEBYTECODE is set): an installed package has its .pyc files.
``--engines c,python`` times the pure-Python per-packet loop too (NDNSCI_HOTLOOP=python);
``--peers`` adds the older comparisons (fetch <- put, cat <- serve, python-ndn, curl).

    .venv/bin/python bench/transfer.py --sizes 64,192,1024 --rounds 3
    # 4 GiB: cold and warm apart (NDNd's cache beside ndnd put's copy outgrows 24 GB)
    .venv/bin/python bench/transfer.py --sizes 4096 --rounds 3 --ttfb-runs 0 \
        --only "cold ndnd cat <- ndnd put,cold ndnsci fetch"
    .venv/bin/python bench/transfer.py --sizes 4096 --rounds 3 --ttfb-runs 0 --only warm

With ``--native`` (NDN-DPDK and NDNc built by ``make native``, root, hugepages) the native plane
comes up on each size's NDNd (``ndnsci native up``, in a private run folder, down again before
the next size) with its file server serving the bench's files, and each round adds, after the
rows above (docs/native.md):

    NDN-DPDK fetcher <- NDN-DPDK file server (memif, through the NDN-DPDK forwarder)
    NDNc ndncft-client <- NDN-DPDK file server (no row when NDNc is not built)
    ndnd cat <- NDN-DPDK file server (through the NDNd <-> NDN-DPDK link)
    xrdcp <- XRootD NDN plugin <- NDN-DPDK file server (``ndnsci xrootd up``: NDNc's storage
        plugin over memif; no row when the plugin is not built)
    xrdcp <- XRootD local disk (the same server configuration on XRootD's own storage, reading
        the file from the disk: the baseline a CMS site has)

The two native consumers are timed from the metadata request to the last byte on disk (the
``ndn-dpdk`` and ``ndnc`` transports of ``ndnsci.native``, run in this process). They read the
version of the round (no new version of their own: a new mtime makes ``ndnsci serve`` hash the
file again; NDN-DPDK's content store holds 1024 Data, 8 MB, nothing next to the file); the
``ndnd cat`` row reads a version NDNd's cache has not seen. With ``--native`` every row also
shows the CPU seconds per GB of every process that took part (from /proc): the consumer (for the
native consumers: this process), NDNd, the producer (``ndnsci serve``, ``ndnd put``; for the
native rows all of the plane's processes: forwarder, fetcher, file server), and the medians
their range. Ratios: NDN-DPDK fetcher and NDNc against ``cold ndnd cat <- ndnd put`` and
``cold ndnsci fetch``.

The ``xrdcp`` rows count the CPU of ``xrdcp``, the XRootD server and (NDN row) the whole plane;
the first NDN copy of each size is checked against the file's SHA-256 (the plugin verifies
nothing itself), outside the timing. Ratios: the NDN row against the NDN-DPDK fetcher and against
the local-disk row.

``--only`` keeps the rows whose label starts with one of its comma-separated prefixes, to shorten
a big run (a warm row brings the cold ndnsci fetch that fills the cache along):

    .venv/bin/python bench/transfer.py --native --sizes 1024 --rounds 3
    .venv/bin/python bench/transfer.py --native --sizes 4096 --rounds 3 --ttfb-runs 0 \
        --only "cold ndnd cat <- ndnd put,cold ndnsci fetch,NDN,ndnd cat <- NDN"
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ndnsci.ndn import forwarder, keys, rdr
from ndnsci.ndn.consumer import fetch_one
from ndnsci.ndn.name import from_uri
from ndnsci.ndn.transport import Face
from ndnsci.sdk.transports import Transport

if TYPE_CHECKING:
    from ndnsci.native.xrootd import XrootdServer

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
NDNSCI = [PY, "-m", "ndnsci"]
SMALL_NETCDF = next((REPO / "tests/data/netcdf/cmip5").rglob("tasmax_Amon_CMCC-CMS_*.nc"), None)
ENGINE_LABEL = {"c": "ndnsci fetch", "python": "ndnsci fetch [python loop]"}
WARM_CAT = "warm ndnd cat <- forwarder cache"
COLD_PUT = "cold ndnd cat <- ndnd put"
DPDK_CAT = "ndnd cat <- NDN-DPDK file server"
XRD_NDN = "xrdcp <- XRootD NDN plugin <- NDN-DPDK file server"
XRD_LOCAL = "xrdcp <- XRootD local disk"

PYNDN_FETCH = r"""
import asyncio, sys
from ndn.app import NDNApp
from ndn.security import KeychainDigest
from ndn.encoding import Name, parse_data
from ndn.app_support.segment_fetcher import segment_fetcher
name, out = sys.argv[1], sys.argv[2]
app = NDNApp(keychain=KeychainDigest())
async def accept(*_args, **_kwargs):
    return True  # the metadata is Ed25519-signed; python-ndn has no key for it here
async def main():
    try:
        _, _, content = await app.express_interest(
            name + "/32=metadata", can_be_prefix=True, must_be_fresh=True, lifetime=2000,
            validator=accept)
        versioned = Name.from_bytes(bytes(content[: 2 + content[1]]))
        with open(out, "wb") as f:
            async for seg in segment_fetcher(app, versioned):
                f.write(seg)
    finally:
        app.shutdown()
app.run_forever(after_start=main())
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Bench:
    def __init__(self, tmp: Path, size: int, small: int) -> None:
        self.tmp = tmp
        self.root = tmp / "root"
        self.out = tmp / "out"
        self.root.mkdir()
        self.out.mkdir()
        self.size = size
        self.sock = tmp / "fw" / "nfd.sock"
        self.env = {
            **os.environ,
            "NDN_CLIENT_TRANSPORT": f"unix://{self.sock}",
            "NDNSCI_CONFIG_DIR": str(tmp / "config"),
            "NDNSCI_CACHE_DIR": str(tmp / "cache"),
            "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
        }
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.update(self.env)
        keys.create()  # metadata signed with Ed25519, as a real publisher's
        write_random(self.root / "file.bin", size)
        write_random(self.root / "small.bin", small)
        self.small = small
        self.procs: list[subprocess.Popen[bytes]] = []
        self.put_count = 0
        self.forwarder_pid = 0
        self.native: Native | None = None  # up during size_rounds with --native
        self.only: list[str] = []  # --only: label prefixes of the rows to run

    # --- processes -----------------------------------------------------------------------------

    def start_forwarder(self, segments: int) -> None:
        """A forwarder whose content store holds the file once (and a bit): warm runs read it."""
        ports = {"NDNSCI_FW_UDP_PORT": str(free_port()), "NDNSCI_FW_WS_PORT": str(free_port())}
        capacity = max(131070, segments + segments // 8)
        self.forwarder_pid = forwarder.start(self.sock, cs_capacity=capacity, extra_env=ports)

    def stop_forwarder(self) -> None:
        forwarder.stop(self.sock)

    def spawn(self, args: list[str], **kw: object) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(args, env=self.env, **kw)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc  # type: ignore[no-any-return]

    def start_serve(self, prefix: str, segment_size: int = 8000) -> subprocess.Popen[bytes]:
        proc = self.spawn(
            [
                *NDNSCI,
                "serve",
                str(self.root),
                "--prefix",
                prefix,
                "--segment-size",
                str(segment_size),
            ],
            stderr=subprocess.DEVNULL,
        )
        self.await_metadata(f"{prefix}/small.bin", want_hash=False)
        return proc

    def start_put(self, path: Path) -> tuple[str, subprocess.Popen[bytes]]:
        self.put_count += 1
        prefix = f"/bench/put/{self.put_count}"
        with open(path, "rb") as stdin:
            proc = self.spawn(
                [str(forwarder.binary()), "put", prefix],
                stdin=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        self.await_metadata(prefix, want_hash=False)
        return prefix, proc

    def stop(self, proc: subprocess.Popen[bytes]) -> int:
        """Terminate a producer; returns its peak RSS in bytes."""
        rss = peak_rss(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return rss

    def await_metadata(self, uri: str, want_hash: bool, timeout: float = 120) -> None:
        """Poll the metadata until the producer answers (and has the file's SHA-256)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with Face() as face:
                    data = fetch_one(face, b"".join(from_uri(uri)) + rdr.METADATA, True, True)
                meta = rdr.Metadata.decode(data.content)
                if not want_hash or not meta.sha256_pending:
                    return
            except Exception:  # not up yet
                pass
            time.sleep(0.1)
        raise RuntimeError(f"no producer answers {uri}")

    def new_version(self, name: str, prefix: str) -> None:
        """Bump the mtime (the ctime, its version, moves too); ndnsci serve hashes it, untimed."""
        path = self.root / name
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, max(time.time_ns(), st.st_mtime_ns + 1000)))
        self.await_metadata(f"{prefix}/{name}", want_hash=True)

    def consume(
        self,
        args: list[str],
        out: Path,
        size: int,
        stdout_file: bool = False,
        env: dict[str, str] | None = None,
    ) -> tuple[float, int]:
        """Run a consumer; returns (seconds, its peak RSS in bytes). Raises on failure.

        Also sets ``self.cpu``: the consumer's and the forwarder's CPU time over the wall time.
        """
        out.unlink(missing_ok=True)
        (out.parent / (out.name + ".part")).unlink(missing_ok=True)
        # /usr/bin/time measures the consumer's own peak RSS: a child forked from this large
        # process would inherit the parent's ru_maxrss (it survives exec)
        rss_file = self.tmp / "rss.txt"
        sink = open(out, "wb") if stdout_file else subprocess.DEVNULL  # noqa: SIM115
        fw_before = cpu_seconds(self.forwarder_pid)
        started = time.monotonic()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", str(rss_file), *args],
            env={**self.env, **(env or {})},
            stdout=sink,
            stderr=subprocess.PIPE,
            cwd=self.out,
            check=False,
        )
        seconds = time.monotonic() - started
        fw_share = (cpu_seconds(self.forwarder_pid) - fw_before) / seconds
        if stdout_file:
            sink.close()  # type: ignore[union-attr]
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err[-500:]}")
        if out.stat().st_size != size:
            raise RuntimeError(f"{' '.join(args)}: {out.stat().st_size} bytes, not {size}")
        user, system, rss_kb = rss_file.read_text().split()[-3:]
        self.cpu = ((float(user) + float(system)) / seconds, fw_share)
        return seconds, int(rss_kb) * 1024

    def wanted(self, *labels: str) -> bool:
        """Whether ``--only`` keeps any of these rows (all rows without it)."""
        return not self.only or any(
            label.startswith(prefix) for label in labels for prefix in self.only
        )

    def cleanup(self) -> None:
        if self.native is not None:
            self.native.down()
            self.native = None
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        forwarder.stop(self.sock)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def write_random(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = min(left, 16 << 20)
            f.write(os.urandom(chunk))
            left -= chunk


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def total_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of several running processes so far (0 for those gone)."""
    return sum(cpu_seconds(pid) for pid in pids)


def peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def fetch_args(name: str, cc: str = "aimd", window: int = 64) -> list[str]:
    return [*NDNSCI, "fetch", name, "-o", ".", "-q", "--cc", cc, "--window", str(window)]


class Native:
    """The NDN-DPDK plane on the bench's NDNd, its file server serving the bench's root."""

    PREFIX = "/bench/dpdk"

    def __init__(self, b: Bench) -> None:
        from ndnsci.base.processes import die_with_parent
        from ndnsci.native import install
        from ndnsci.native.fetcher import NdnDpdkTransport
        from ndnsci.native.layout import Layout
        from ndnsci.native.ndnc import NdncTransport
        from ndnsci.native.plane import Plane
        from ndnsci.native.serve import tree_mounts

        self.b = b
        self.plane = Plane(b.tmp / "native")
        self.layout = Layout.for_machine(base_port=free_port())
        self.plane.up(b.sock, self.layout, preexec=die_with_parent)
        try:
            mounts = tree_mounts(str(b.root), self.PREFIX)
            self.plane.start_fileserver(mounts, preexec=die_with_parent)
            b.await_metadata(f"{self.PREFIX}/small.bin", want_hash=False)
        except BaseException:  # nobody else would take the plane down (hugepages, the link)
            self.down()
            raise
        self.transports: dict[str, Transport] = {"NDN-DPDK fetcher": NdnDpdkTransport(self.plane)}
        if install.ndnc() is not None:
            self.transports["NDNc ndncft-client"] = NdncTransport(self.plane)
        else:
            print("NDNc is not built (make native): no NDNc row", file=sys.stderr)
        self.xrootd: dict[str, tuple[str, XrootdServer]] = {}  # row -> (URL of the file, server)
        try:
            self._start_xrootd()
        except BaseException:
            self.down()
            raise

    def _start_xrootd(self) -> None:
        """The two XRootD servers of the xrdcp rows: NDNc's plugin on this plane, reading the
        file server's names (prefix PREFIX), and the local-disk one reading the bench's root."""
        from ndnsci.native import install
        from ndnsci.native.xrootd import Settings, XrootdServer

        if not self.b.wanted(XRD_NDN, XRD_LOCAL):
            return
        if install.xrootd_ndn() is None or shutil.which("xrootd") is None:
            print(
                "XRootD or its NDN plugin is missing (make native): no xrdcp rows", file=sys.stderr
            )
            return
        # the servers run as user xrootd: the bench's folder must be reachable, its file readable
        os.chmod(self.b.tmp, 0o755)
        os.chmod(self.b.root, 0o755)
        for label, local in ((XRD_NDN, None), (XRD_LOCAL, str(self.b.root))):
            if not self.b.wanted(label):
                continue
            server = XrootdServer(
                self.b.tmp / ("xrd-ndn" if local is None else "xrd-disk"), self.plane
            )
            prefix = self.PREFIX if local is None else "/CMS"
            state = server.up(Settings(port=free_port(), prefix=prefix, local_root=local))
            self.xrootd[label] = (f"root://127.0.0.1:{state.port}//file.bin", server)
        print(
            "xrootd: "
            + ", ".join(f"{label} pid {s.load().pid}" for label, (_, s) in self.xrootd.items()),  # type: ignore[union-attr]
            flush=True,
        )

    def xrootd_pids(self, label: str) -> list[int]:
        state = self.xrootd[label][1].load()
        return [state.pid] if state else []

    def pids(self) -> list[int]:
        state = self.plane.load()
        return list(state.pids.values()) if state else []

    def describe(self) -> str:
        layout = self.layout
        return (
            f"native plane: {layout.cpus} CPUs shared by all; forwarder {layout.forwarder.lcores} "
            f"lcores (RX, TX, {layout.fwd_threads} FWD + main), fetcher "
            f"{layout.fetcher.lcores} lcores ({layout.fetch_threads} fetch thread), file server "
            f"{layout.fileserver.lcores} lcores ({layout.fs_threads} I/O thread), "
            f"{layout.hugepages} hugepages of 2 MB"
        )

    def receive(self, label: str, name: str, out: Path) -> tuple[float, float]:
        """One file through a native transport; (seconds, CPU seconds of all the plane, NDNd and
        this process, the consumer)."""
        from ndnsci.sdk.transports import FetchOptions, Job

        out.unlink(missing_ok=True)
        out.touch()
        job = Job(
            name=name,
            part=str(out),
            state=str(out) + ".state",
            resume=False,
            options=FetchOptions(checksum_wait=0),
            progress=lambda done, total: None,
            stop=threading.Event(),
        )
        pids = [*self.pids(), self.b.forwarder_pid]
        cpu_before, own_before = total_cpu_seconds(pids), time.process_time()
        started = time.monotonic()
        got = self.transports[label].receive(job)
        seconds = time.monotonic() - started
        cpu = total_cpu_seconds(pids) - cpu_before + time.process_time() - own_before
        if got.size != out.stat().st_size:
            raise RuntimeError(f"{label}: {out.stat().st_size} bytes, not {got.size}")
        return seconds, cpu

    def down(self) -> None:
        for _, server in getattr(self, "xrootd", {}).values():
            server.down()
        problems = self.plane.down()
        if problems:
            print(f"native plane down: {problems}", file=sys.stderr)


def size_rounds(
    b: Bench, size_mb: int, n: int, engines: list[str], native: bool = False
) -> tuple[dict[str, float], dict[str, float]]:
    """Warm and cold, ndnsci against ndnd cat, ``n`` interleaved rounds at one file size (and the
    native plane's rows with ``native``); the ratios (ndnsci / ndnd cat, native)."""
    b.size = size_mb << 20
    write_random(b.root / "file.bin", b.size)
    # the content store holds the file only for warm rows, and once: ndnsci serve's 8000-byte
    # segments (NDN-DPDK's 4096-byte ones with --native). At 4 GiB a store sized for 4096-byte
    # segments kept two versions of 8000: NDNd grew to 12 GB beside `ndnd put`'s 8 GB, and to
    # 21 GB in a warm-only run, and was OOM-killed (24 GB machine); so at 4 GiB run the cold
    # rows (--only "cold") and the warm ones (--only warm) apart
    warm_rows = b.wanted(WARM_CAT, *(f"warm {ENGINE_LABEL[e]} <- forwarder cache" for e in engines))
    segment = 4096 if native else 8000
    b.start_forwarder(b.size // segment + 1 if warm_rows else 0)
    rates: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[tuple[float, float]]] = defaultdict(list)
    per_gb: dict[str, list[float]] = defaultdict(list)  # --native: CPU s/GB, every process
    failed: dict[str, int] = defaultdict(int)
    ndnd = str(forwarder.binary())
    out = b.out / "file.bin"
    serve = b.start_serve("/bench/serve")

    def record(
        label: str, args: list[str], target: Path, producers: list[int], **kw: object
    ) -> None:
        before = total_cpu_seconds(producers)
        try:
            seconds, _ = b.consume(args, target, b.size, **kw)  # type: ignore[arg-type]
        except RuntimeError as exc:  # counted and shown: the medians are of the runs that ended
            failed[label] += 1
            print(f"  {size_mb} MiB {label}: FAILED {exc}", flush=True)
            return
        cpu[label].append(b.cpu)
        note = f"consumer CPU {b.cpu[0]:.0%}, forwarder CPU {b.cpu[1]:.0%}"
        if native:  # all the processes of the transfer: consumer, forwarder, producer(s)
            used = (b.cpu[0] + b.cpu[1]) * seconds + total_cpu_seconds(producers) - before
            per_gb[label].append(used / (b.size / 1e9))
            note += f", CPU {per_gb[label][-1]:.1f} s/GB"
        show(label, seconds, note)

    def record_native(label: str, name: str) -> None:
        assert b.native is not None
        try:
            seconds, used = b.native.receive(label.split(" <- ", maxsplit=1)[0], name, out)
        except Exception as exc:  # counted and shown, as record's
            failed[label] += 1
            print(f"  {size_mb} MiB {label}: FAILED {exc!r}"[:600], flush=True)
            return
        per_gb[label].append(used / (b.size / 1e9))
        show(label, seconds, f"CPU {per_gb[label][-1]:.1f} s/GB")

    def show(label: str, seconds: float, note: str) -> None:
        rates[label].append(b.size / seconds / 1e6)
        print(
            f"  {size_mb} MiB {label}: {b.size / seconds / 1e6:.1f} MB/s ({seconds:.2f} s, {note})",
            flush=True,
        )

    try:
        if native:
            b.native = Native(b)
            print(b.native.describe(), flush=True)
        for r in range(1, n + 1):
            print(f"{size_mb} MiB, round {r}", flush=True)
            versioned = 0.0  # when file.bin got this round's version (0: not yet)
            for engine in engines:
                env = {"NDNSCI_HOTLOOP": engine}
                name = fetch_args("/bench/serve/file.bin")
                cold = f"cold {ENGINE_LABEL[engine]} <- ndnsci serve"
                warm = f"warm {ENGINE_LABEL[engine]} <- forwarder cache"
                if b.wanted(cold, warm, WARM_CAT):  # the warm rows read what the cold one got
                    b.new_version("file.bin", "/bench/serve")
                    versioned = time.monotonic()
                    record(cold, name, out, [serve.pid], env=env)
                if b.wanted(warm):
                    record(warm, name, out, [serve.pid], env=env)
            # the same version again: ndnd cat's discovery asks serve, the segments come from
            # the forwarder's cache
            if b.wanted(WARM_CAT):
                record(WARM_CAT, [ndnd, "cat", "/bench/serve/file.bin"], out, [serve.pid],
                       stdout_file=True)  # fmt: skip
            if b.wanted(COLD_PUT):
                prefix, put = b.start_put(b.root / "file.bin")
                record(COLD_PUT, [ndnd, "cat", prefix], out, [put.pid], stdout_file=True)
                b.stop(put)
            if b.native is not None:
                # the file is ndnsci serve's too: no new version per native run (a new mtime
                # would make serve hash the file again, during these runs); NDN-DPDK's content
                # store holds 1024 Data (8 MB), nothing next to the file
                dpdk_name = f"{Native.PREFIX}/file.bin"
                for transport in b.native.transports:
                    if b.wanted(f"{transport} <- NDN-DPDK file server"):
                        record_native(f"{transport} <- NDN-DPDK file server", dpdk_name)
                if b.wanted(DPDK_CAT):
                    # through NDNd, whose cache may hold the last round's version: a new one if
                    # --only left out the ndnsci rows, seen by the file server within a second
                    # (its statValidity)
                    if not versioned:
                        b.new_version("file.bin", "/bench/serve")
                        versioned = time.monotonic()
                    time.sleep(max(0.0, versioned + 1.1 - time.monotonic()))
                    record(DPDK_CAT, [ndnd, "cat", dpdk_name], out, b.native.pids(),
                           stdout_file=True)  # fmt: skip
                for label, (url, _) in b.native.xrootd.items():
                    through = b.native.pids() if label == XRD_NDN else []
                    record(label, ["xrdcp", "--nopbar", "-f", url, str(out)], out,
                           [*through, *b.native.xrootd_pids(label)])  # fmt: skip
                    first_copy = label == XRD_NDN and r == 1 and out.exists()
                    if first_copy and sha256_of(out) != sha256_of(b.root / "file.bin"):
                        failed[f"{label}: SHA-256 differs from the file's"] += 1
                        print(f"  {size_mb} MiB {label}: SHA-256 DIFFERS", flush=True)
    finally:
        if b.native is not None:
            b.native.down()
            b.native = None
        b.stop(serve)
        b.stop_forwarder()
        (b.root / "file.bin").unlink()
        out.unlink(missing_ok=True)
    for label, count in failed.items():
        print(f"{size_mb} MiB {label}: {count} of {n} runs failed")
    return size_report(size_mb, rates, cpu, per_gb, engines, b.wanted)


def size_report(
    size_mb: int,
    rates: dict[str, list[float]],
    cpu: dict[str, list[tuple[float, float]]],
    per_gb: dict[str, list[float]],
    engines: list[str],
    wanted: Callable[..., bool],
) -> tuple[dict[str, float], dict[str, float]]:
    if not rates:
        print(f"\n{size_mb} MiB: no run ended\n", flush=True)
        return {}, {}
    med = {label: statistics.median(v) for label, v in rates.items()}
    print(f"\n{size_mb} MiB, medians of {len(next(iter(rates.values())))} interleaved rounds")
    for label, value in med.items():
        notes = []
        if cpu.get(label):
            consumer = statistics.median(c for c, _ in cpu[label])
            fw = statistics.median(f for _, f in cpu[label])
            notes += [f"consumer CPU {consumer:.0%}", f"forwarder CPU {fw:.0%}"]
        spread = ""
        if per_gb:  # --native
            spread = f" ({min(rates[label]):.0f}-{max(rates[label]):.0f})"
            if per_gb.get(label):
                notes.append(f"CPU {statistics.median(per_gb[label]):.1f} s/GB")
        print(f"{size_mb} MiB {label}: {value:.1f} MB/s{spread}" + "".join(f", {x}" for x in notes))
    ratios = {}
    for engine in engines:
        who = ENGINE_LABEL[engine]
        for kind, ours, theirs in (
            ("warm", f"warm {who} <- forwarder cache", WARM_CAT),
            ("cold", f"cold {who} <- ndnsci serve", COLD_PUT),
        ):
            if not (wanted(ours) and wanted(theirs)):  # --only left one out
                continue
            if ours not in med or theirs not in med:
                print(f"ratio {size_mb} MiB {kind}: {who} / ndnd cat: no run ended")
                continue
            ratios[f"{kind} {who}"] = med[ours] / med[theirs]
            print(f"ratio {size_mb} MiB {kind}: {who} / ndnd cat = {med[ours] / med[theirs]:.2f}x")
    native = {}
    dpdk, ndnc = "NDN-DPDK fetcher", "NDNc ndncft-client"
    pairs = [(dpdk, "ndnd cat", COLD_PUT), (ndnc, "ndnd cat", COLD_PUT)]
    pairs += [(dpdk, ENGINE_LABEL[e], f"cold {ENGINE_LABEL[e]} <- ndnsci serve") for e in engines]
    for who, whom, theirs in pairs:
        ours = f"{who} <- NDN-DPDK file server"
        if ours in med and theirs in med:  # each from its own producer
            native[f"{who.split()[0]} / {whom}"] = med[ours] / med[theirs]
            print(f"ratio {size_mb} MiB native: {who} / {whom} = {med[ours] / med[theirs]:.2f}x")
    for whom, theirs in (
        (dpdk, f"{dpdk} <- NDN-DPDK file server"),
        ("xrdcp local disk", XRD_LOCAL),
    ):
        if XRD_NDN in med and theirs in med:
            native[f"xrdcp NDN / {whom}"] = med[XRD_NDN] / med[theirs]
            print(
                f"ratio {size_mb} MiB native: xrdcp through the NDN plugin / {whom} = "
                f"{med[XRD_NDN] / med[theirs]:.2f}x"
            )
    print(flush=True)
    return ratios, native


def time_to_first_byte(b: Bench, runs: int) -> None:
    """``ndnsci fetch`` of the catalog's typical small netCDF: process start to first byte."""
    small = b.root / "small.nc"
    if SMALL_NETCDF is not None:
        shutil.copyfile(SMALL_NETCDF, small)
    else:
        write_random(small, 30_000)
    size = small.stat().st_size
    b.start_forwarder(1000)
    serve = b.start_serve("/bench/ttfb")
    out = b.out / "small.nc"
    firsts, totals, bare = [], [], []
    try:
        for i in range(runs + 1):
            b.new_version("small.nc", "/bench/ttfb")
            first, total = first_byte(b, fetch_args("/bench/ttfb/small.nc"), out)
            started = time.monotonic()
            subprocess.run([PY, "-c", "pass"], env=b.env, check=True)
            if i:  # the first run writes the bytecode cache
                firsts.append(first)
                totals.append(total)
                bare.append(time.monotonic() - started)
            if out.stat().st_size != size:
                raise RuntimeError(f"{out}: {out.stat().st_size} bytes, not {size}")
    finally:
        b.stop(serve)
        b.stop_forwarder()
    print(f"time to first byte, ndnsci fetch of a {size:,}-byte netCDF file (median of {runs}):")
    print(f"ttfb first byte on disk: {statistics.median(firsts) * 1000:.1f} ms")
    print(f"ttfb whole file, process exited: {statistics.median(totals) * 1000:.1f} ms")
    print(f"ttfb python -c pass (the interpreter alone): {statistics.median(bare) * 1000:.1f} ms")
    print(flush=True)


def first_byte(b: Bench, args: list[str], out: Path) -> tuple[float, float]:
    """Seconds from spawning ``args`` to the first byte of ``out`` (or its .part), and to exit."""
    part = out.with_name(out.name + ".part")
    out.unlink(missing_ok=True)
    part.unlink(missing_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        args, env=b.env, cwd=b.out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    first = None
    while first is None and proc.poll() is None:
        for path in (part, out):
            with contextlib.suppress(OSError):
                if path.stat().st_size:
                    first = time.monotonic() - started
                    break
        time.sleep(0.0005)
    proc.wait()
    total = time.monotonic() - started
    if proc.returncode:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode})")
    return (first if first is not None else total), total


def room_for(size_mb: int, workdir: Path) -> str | None:
    """Why a size cannot run here (disk for the file and two copies, memory for the forwarder's
    cache and ndnd put's copy), or None."""
    size = size_mb << 20
    free = shutil.disk_usage(workdir).free
    if free < 3 * size + (1 << 30):
        return f"needs {3 * size / 2**30 + 1:.0f} GiB of disk in {workdir}, {free / 2**30:.0f} free"
    available = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            available = int(line.split()[1]) * 1024
    if available < 3 * size:
        return f"needs {3 * size / 2**30:.0f} GiB of memory, {available / 2**30:.0f} available"
    return None


def rounds(b: Bench, n: int, small: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = defaultdict(list)
    rss: dict[str, list[int]] = defaultdict(list)
    ndnd = str(forwarder.binary())
    out = b.out / "file.bin"
    serve = b.start_serve("/bench/serve")
    http_port = free_port()
    b.spawn(
        [PY, "-m", "http.server", "--bind", "127.0.0.1", str(http_port), "-d", str(b.root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)

    def record(
        label: str, size: int, args: list[str], target: Path, to_stdout: bool = False
    ) -> None:
        seconds, peak = b.consume(args, target, size, to_stdout)
        rates[label].append(size / seconds / 1e6)
        rss[label].append(peak)
        print(
            f"  {label}: {size / seconds / 1e6:.1f} MB/s ({seconds:.2f} s, "
            f"consumer RSS {peak / 1e6:.0f} MB)",
            flush=True,
        )

    for r in range(1, n + 1):
        print(f"round {r}", flush=True)
        b.new_version("file.bin", "/bench/serve")
        serve_args = fetch_args("/bench/serve/file.bin")
        record("ndnsci fetch <- ndnsci serve", b.size, serve_args, out)
        record("ndnsci fetch <- forwarder cache", b.size, serve_args, out)

        prefix, put = b.start_put(b.root / "file.bin")
        record("ndnd cat <- ndnd put", b.size, [ndnd, "cat", prefix], out, True)
        rss["producer ndnd put"].append(b.stop(put))

        prefix, put = b.start_put(b.root / "file.bin")
        record("ndnsci fetch <- ndnd put", b.size, fetch_args(prefix), b.out / Path(prefix).name)
        b.stop(put)

        b.new_version("file.bin", "/bench/serve")
        record(
            "ndnd cat <- ndnsci serve", b.size, [ndnd, "cat", "/bench/serve/file.bin"], out, True
        )

        b.new_version("small.bin", "/bench/serve")
        small_out = b.out / "small.bin"
        pyndn = [PY, "-c", PYNDN_FETCH, "/bench/serve/small.bin", str(small_out)]
        record("python-ndn segment_fetcher <- ndnsci serve", small, pyndn, small_out)

        url = f"http://127.0.0.1:{http_port}/file.bin"
        record("curl <- python -m http.server", b.size, ["curl", "-sf", "-o", str(out), url], out)
    rss["producer ndnsci serve"].append(b.stop(serve))
    report(rates, rss)
    return rates


def report(rates: dict[str, list[float]], rss: dict[str, list[int]]) -> None:
    med = {label: statistics.median(v) for label, v in rates.items()}
    print("\nmedians")
    for label, value in med.items():
        print(f"{label}: {value:.1f} MB/s")
    ratios = [
        (
            "ndnsci fetch / ndnd cat, producer ndnd put",
            "ndnsci fetch <- ndnd put",
            "ndnd cat <- ndnd put",
        ),
        (
            "ndnsci fetch / ndnd cat, producer ndnsci serve",
            "ndnsci fetch <- ndnsci serve",
            "ndnd cat <- ndnsci serve",
        ),
        (
            "ndnsci serve / ndnd put, consumer ndnd cat",
            "ndnd cat <- ndnsci serve",
            "ndnd cat <- ndnd put",
        ),
        (
            "ndnsci fetch <- ndnsci serve / curl <- http.server",
            "ndnsci fetch <- ndnsci serve",
            "curl <- python -m http.server",
        ),
        (
            "cache speed-up (ndnsci fetch, same version again)",
            "ndnsci fetch <- forwarder cache",
            "ndnsci fetch <- ndnsci serve",
        ),
    ]
    for text, a, b in ratios:
        print(f"ratio {text}: {med[a] / med[b]:.2f}x")
    for label, values in rss.items():
        print(f"peak RSS {label}: {max(values) / 1e6:.0f} MB")


def sweep(b: Bench, sizes: list[int], windows: list[int], ccs: list[str], repeat: int) -> None:
    """Every (segment size, cc, window) point ``repeat`` times, rounds interleaved; medians."""
    print(f"\nsweep (ndnsci fetch <- ndnsci serve, median of {repeat} interleaved rounds)")
    out = b.out / "file.bin"
    runs: dict[tuple[int, str, int], list[float]] = {}
    for _ in range(repeat):
        for seg in sizes:
            prefix = f"/bench/sweep{seg}"
            serve = b.start_serve(prefix, seg)
            for cc in ccs:
                for window in windows:
                    b.new_version("file.bin", prefix)
                    seconds, _ = b.consume(
                        fetch_args(f"{prefix}/file.bin", cc, window), out, b.size
                    )
                    runs.setdefault((seg, cc, window), []).append(b.size / seconds / 1e6)
            b.stop(serve)
    for (seg, cc, window), rates in runs.items():
        spread = f"{min(rates):.0f}-{max(rates):.0f}"
        print(
            f"sweep segment={seg} cc={cc} window={window}: "
            f"{statistics.median(rates):.1f} MB/s ({spread})"
        )
    best = max(runs, key=lambda point: statistics.median(runs[point]))
    print(f"sweep best: segment={best[0]} cc={best[1]} window={best[2]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,192,1024,4096", help="file sizes in MiB")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per size")
    parser.add_argument("--engines", default="c", help="ndnsci per-packet loops: c,python")
    parser.add_argument("--ttfb-runs", type=int, default=11, help="TTFB runs, 0: none")
    parser.add_argument("--peers", action="store_true", help="also python-ndn, curl, mixed pairs")
    parser.add_argument("--peers-mb", type=int, default=1024, help="file size of --peers, MiB")
    parser.add_argument("--small-mb", type=int, default=64, help="python-ndn file, MiB (64)")
    parser.add_argument("--sweep-mb", type=int, default=0, help="sweep file size, 0: none")
    parser.add_argument("--sweep-rounds", type=int, default=3, help="repeats of each point")
    parser.add_argument("--windows", default="16,64,128,256")
    parser.add_argument("--segment-sizes", default="4096,6000,8000,8500")
    parser.add_argument("--ccs", default="fixed,aimd,cubic")
    parser.add_argument("--workdir", default=None, help="where the temp folder goes")
    parser.add_argument("--native", action="store_true", help="add the NDN-DPDK/NDNc rows")
    parser.add_argument("--only", default="", help="rows to run: comma list of label prefixes")
    args = parser.parse_args()
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory(prefix="ndnsci-bench-", dir=args.workdir) as tmp:
        b = Bench(Path(tmp), 0, args.small_mb << 20)
        b.only = [row for row in args.only.split(",") if row]
        print(f"forwarder {forwarder.binary()}; load average {os.getloadavg()}", flush=True)
        try:
            if args.ttfb_runs:
                time_to_first_byte(b, args.ttfb_runs)
            summary = {}
            for size_mb in [int(s) for s in args.sizes.split(",") if s]:
                why_not = room_for(size_mb, Path(tmp))
                if why_not:
                    print(f"{size_mb} MiB: not run: {why_not}", flush=True)
                    continue
                summary[size_mb] = size_rounds(b, size_mb, args.rounds, engines, args.native)
            for size_mb, (ratios, native) in summary.items():
                text = ", ".join(f"{kind} {value:.2f}x" for kind, value in ratios.items())
                if ratios or not b.only:
                    print(f"summary {size_mb} MiB (ndnsci / ndnd cat): {text}")
                if native:
                    text = ", ".join(f"{kind} {value:.2f}x" for kind, value in native.items())
                    print(f"summary {size_mb} MiB (native): {text}")
            if args.peers:
                b.size = args.peers_mb << 20
                write_random(b.root / "file.bin", b.size)
                b.start_forwarder(b.size // 4096 + 1)
                rounds(b, args.rounds, b.small)
                b.stop_forwarder()
            if args.sweep_mb:
                b.size = args.sweep_mb << 20
                write_random(b.root / "file.bin", b.size)
                b.start_forwarder(b.size // 4096 + 1)
                sweep(
                    b,
                    [int(s) for s in args.segment_sizes.split(",")],
                    [int(w) for w in args.windows.split(",")],
                    args.ccs.split(","),
                    args.sweep_rounds,
                )
                b.stop_forwarder()
        finally:
            b.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
