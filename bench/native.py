"""The native plane's rows (NDN-DPDK, NDNc) beside ndnd cat and ndnsci fetch, at one size.
bench/transfer.py is the per-size comparison of ndnsci fetch with ndnd cat; this script keeps
the layout it had when the native rows were written (to be folded into transfer.py).

Transfer benchmark: ndnsci fetch/serve against ndnd cat/put, python-ndn and HTTP.

One private NDNd forwarder (unix socket in a temp folder, private UDP/WebSocket ports), one
random file, and these transfers, interleaved round after round:

    ndnsci fetch <- ndnsci serve        ndnd cat <- ndnd put
    ndnsci fetch <- ndnd put            ndnd cat <- ndnsci serve
    python-ndn segment fetcher <- ndnsci serve (a smaller file: it manages ~3k packets/s)
    curl <- python -m http.server
    ndnsci fetch again, same version: served from the forwarder's content store

Every NDN run asks for a version the forwarder has never seen (``ndnsci serve``: the file's
mtime is bumped; ``ndnd put``: a fresh name), so nothing comes from the cache unless meant to.
Producers are made ready before the clock starts (``ndnd put`` has read and signed the file;
``ndnsci serve`` has its SHA-256). Times are the consumer process's wall time, start to exit,
writing the file to disk. RSS is the peak resident set (consumer: wait4; producer: VmHWM).
Then a window / segment-size sweep with ndnsci fetch <- ndnsci serve.

With ``--native`` (NDN-DPDK built by ``make native``, root, hugepages) the native plane comes up
on the bench's NDNd (``ndnsci native up``, in a private run folder) with its file server serving
the file, and each round adds (docs/native.md):

    NDN-DPDK fetcher <- NDN-DPDK file server      NDNc ndncft-client <- NDN-DPDK file server
    ndnd cat <- NDN-DPDK file server (through the NDNd <-> NDN-DPDK link)

timed from the metadata request to the last byte on disk (the NDN-DPDK transports of
``ndnsci.native``), with the CPU seconds per GB of every process that took part (producer,
forwarder(s), consumer; from /proc), beside the same for ``ndnd cat <- ndnd put``.
``--only`` keeps the named rows (a comma list of label prefixes) to shorten a big run.

    .venv/bin/python bench/native.py --size-mb 1024 --rounds 3
    .venv/bin/python bench/native.py --native --size-mb 4096 --rounds 3 --sweep-mb 0 \
        --only "ndnd cat <- ndnd put,ndnsci fetch <- ndnsci serve,NDN,ndnd cat <- NDN"
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

from ndnsci.ndn import forwarder, keys, rdr
from ndnsci.ndn.consumer import fetch_one
from ndnsci.ndn.name import from_uri
from ndnsci.ndn.transport import Face
from ndnsci.transports import Transport

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
NDNSCI = [PY, "-m", "ndnsci"]

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
        }
        os.environ.update(self.env)
        keys.create()  # metadata signed with Ed25519, as a real publisher's
        write_random(self.root / "file.bin", size)
        write_random(self.root / "small.bin", small)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.put_count = 0
        self.native: Native | None = None
        self.only: list[str] = []
        self.fw_pid = 0

    # --- processes -----------------------------------------------------------------------------

    def start_forwarder(self, segments: int) -> None:
        ports = {"NDNSCI_FW_UDP_PORT": str(free_port()), "NDNSCI_FW_WS_PORT": str(free_port())}
        self.fw_pid = forwarder.start(
            # NDNd's limit: 32 threads of 65535 entries (a 4 GiB file still fits, 8 KB each)
            self.sock,
            cs_capacity=min(max(131070, 2 * segments), 32 * 65535),
            extra_env=ports,
        )

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
        """Bump the file's mtime (= its version) and let ndnsci serve hash it, untimed."""
        path = self.root / name
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, max(time.time_ns(), st.st_mtime_ns + 1000)))
        self.await_metadata(f"{prefix}/{name}", want_hash=True)

    def consume(
        self, args: list[str], out: Path, size: int, stdout_file: bool = False
    ) -> tuple[float, int, float]:
        """Run a consumer; returns (seconds, its peak RSS in bytes, its CPU seconds)."""
        out.unlink(missing_ok=True)
        (out.parent / (out.name + ".part")).unlink(missing_ok=True)
        # /usr/bin/time measures the consumer's own peak RSS: a child forked from this large
        # process would inherit the parent's ru_maxrss (it survives exec)
        rss_file = self.tmp / "rss.txt"
        sink = open(out, "wb") if stdout_file else subprocess.DEVNULL  # noqa: SIM115
        started = time.monotonic()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", str(rss_file), *args],
            env=self.env,
            stdout=sink,
            stderr=subprocess.PIPE,
            cwd=self.out,
            check=False,
        )
        seconds = time.monotonic() - started
        if stdout_file:
            sink.close()  # type: ignore[union-attr]
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err[-500:]}")
        if out.stat().st_size != size:
            raise RuntimeError(f"{' '.join(args)}: {out.stat().st_size} bytes, not {size}")
        user, system, peak = rss_file.read_text().split()[-3:]
        return seconds, int(peak) * 1024, float(user) + float(system)

    def wanted(self, label: str) -> bool:
        return not self.only or any(label.startswith(prefix) for prefix in self.only)

    def cleanup(self) -> None:
        if self.native is not None:
            self.native.down()
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        forwarder.stop(self.sock)


def write_random(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = min(left, 16 << 20)
            f.write(os.urandom(chunk))
            left -= chunk


def peak_rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes used so far (/proc/PID/stat, their threads)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


class Native:
    """The NDN-DPDK plane on the bench's NDNd, its file server serving the bench's root."""

    PREFIX = "/bench/dpdk"

    def __init__(self, b: Bench) -> None:
        from ndnsci._stack import die_with_parent
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
        self.plane.start_fileserver(tree_mounts(str(b.root), self.PREFIX), preexec=die_with_parent)
        b.await_metadata(f"{self.PREFIX}/small.bin", want_hash=False)
        self.transports: dict[str, Transport] = {"NDN-DPDK fetcher": NdnDpdkTransport(self.plane)}
        if install.ndnc() is not None:
            self.transports["NDNc ndncft-client"] = NdncTransport(self.plane)
        else:
            print("NDNc is not built (make native): no NDNc row", file=sys.stderr)

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
        """One file through a native transport; (seconds, CPU seconds of all the plane)."""
        from ndnsci.transports import FetchOptions, Job

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
        pids = [*self.pids(), self.b.fw_pid]
        cpu_before, own_before = cpu_seconds(pids), time.process_time()
        started = time.monotonic()
        got = self.transports[label].receive(job)
        seconds = time.monotonic() - started
        cpu = cpu_seconds(pids) - cpu_before + time.process_time() - own_before
        if got.size != out.stat().st_size:
            raise RuntimeError(f"{label}: {out.stat().st_size} bytes, not {got.size}")
        return seconds, cpu

    def down(self) -> None:
        problems = self.plane.down()
        if problems:
            print(f"native plane down: {problems}", file=sys.stderr)


def fetch_args(name: str, cc: str = "aimd", window: int = 64) -> list[str]:
    return [*NDNSCI, "fetch", name, "-o", ".", "-q", "--cc", cc, "--window", str(window)]


def rounds(b: Bench, n: int, small: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = defaultdict(list)
    rss: dict[str, list[int]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    failed: dict[str, list[str]] = defaultdict(list)
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
        label: str,
        size: int,
        args: list[str],
        target: Path,
        to_stdout: bool = False,
        producer: int = 0,
    ) -> None:
        if not b.wanted(label):
            return
        pids = [b.fw_pid, producer] if producer else []
        before = cpu_seconds(pids)
        try:
            seconds, peak, consumer_cpu = b.consume(args, target, size, to_stdout)
        except RuntimeError as exc:  # counted and reported, the other rows go on
            failed[label].append(str(exc)[-300:])
            print(f"  {label}: FAILED {failed[label][-1]}", flush=True)
            return
        rss[label].append(peak)
        note = f"consumer RSS {peak / 1e6:.0f} MB"
        if producer:  # all the processes of the transfer: forwarder, producer, consumer
            cpu[label].append((cpu_seconds(pids) - before + consumer_cpu) / (size / 1e9))
            note += f", CPU {cpu[label][-1]:.1f} s/GB"
        show(label, size, seconds, note)

    def record_native(label: str, name: str) -> None:
        if not b.wanted(label) or b.native is None:
            return
        seconds, used = b.native.receive(label.split(" <- ", maxsplit=1)[0], name, out)
        cpu[label].append(used / (b.size / 1e9))
        show(label, b.size, seconds, f"CPU {cpu[label][-1]:.1f} s/GB")

    def show(label: str, size: int, seconds: float, note: str) -> None:
        rates[label].append(size / seconds / 1e6)
        print(f"  {label}: {size / seconds / 1e6:.1f} MB/s ({seconds:.2f} s, {note})", flush=True)

    for r in range(1, n + 1):
        print(f"round {r}", flush=True)
        if b.wanted("ndnsci fetch <- ndnsci serve"):  # ndnsci serve hashes each new version
            b.new_version("file.bin", "/bench/serve")
        serve_args = fetch_args("/bench/serve/file.bin")
        record("ndnsci fetch <- ndnsci serve", b.size, serve_args, out)
        record("ndnsci fetch <- forwarder cache", b.size, serve_args, out)

        if b.wanted("ndnd cat <- ndnd put"):
            prefix, put = b.start_put(b.root / "file.bin")
            record("ndnd cat <- ndnd put", b.size, [ndnd, "cat", prefix], out, True, put.pid)
            rss["producer ndnd put"].append(b.stop(put))

        if b.native is not None:
            dpdk_name = f"{Native.PREFIX}/file.bin"
            # no new version per run: the file is ndnsci serve's too (a new mtime would make
            # it hash the file again, during these runs), and NDN-DPDK's content store holds
            # 1024 Data (8 MB), nothing next to the file
            for transport in b.native.transports:
                record_native(f"{transport} <- NDN-DPDK file server", dpdk_name)
            record("ndnd cat <- NDN-DPDK file server", b.size, [ndnd, "cat", dpdk_name], out, True)

        if b.wanted("ndnsci fetch <- ndnd put"):
            prefix, put = b.start_put(b.root / "file.bin")
            record(
                "ndnsci fetch <- ndnd put", b.size, fetch_args(prefix), b.out / Path(prefix).name
            )
            b.stop(put)

        if b.wanted("ndnd cat <- ndnsci serve"):
            b.new_version("file.bin", "/bench/serve")
            record(
                "ndnd cat <- ndnsci serve",
                b.size,
                [ndnd, "cat", "/bench/serve/file.bin"],
                out,
                True,
            )

        if b.wanted("python-ndn"):
            b.new_version("small.bin", "/bench/serve")
        small_out = b.out / "small.bin"
        pyndn = [PY, "-c", PYNDN_FETCH, "/bench/serve/small.bin", str(small_out)]
        record("python-ndn segment_fetcher <- ndnsci serve", small, pyndn, small_out)

        url = f"http://127.0.0.1:{http_port}/file.bin"
        record("curl <- python -m http.server", b.size, ["curl", "-sf", "-o", str(out), url], out)
    rss["producer ndnsci serve"].append(b.stop(serve))
    report(rates, rss, cpu)
    for label, errors in failed.items():
        print(f"failed {label}: {len(errors)} of {n} rounds")
    return rates


def report(
    rates: dict[str, list[float]], rss: dict[str, list[int]], cpu: dict[str, list[float]]
) -> None:
    med = {label: statistics.median(v) for label, v in rates.items()}
    print("\nmedians")
    for label, value in med.items():
        spread = f"{min(rates[label]):.0f}-{max(rates[label]):.0f}"
        per_gb = f", CPU {statistics.median(cpu[label]):.1f} s/GB" if cpu.get(label) else ""
        print(f"{label}: {value:.1f} MB/s ({spread}{per_gb})")
    ratios = [
        (
            "NDN-DPDK fetcher / ndnd cat (each from its own producer)",
            "NDN-DPDK fetcher <- NDN-DPDK file server",
            "ndnd cat <- ndnd put",
        ),
        (
            "NDNc / ndnd cat (each from its own producer)",
            "NDNc ndncft-client <- NDN-DPDK file server",
            "ndnd cat <- ndnd put",
        ),
        (
            "NDN-DPDK fetcher / ndnsci fetch (each from its own producer)",
            "NDN-DPDK fetcher <- NDN-DPDK file server",
            "ndnsci fetch <- ndnsci serve",
        ),
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
        if a in med and b in med:
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
                    seconds, _, _ = b.consume(
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
    parser.add_argument("--size-mb", type=int, default=1024, help="file size in MiB (1024)")
    parser.add_argument("--small-mb", type=int, default=64, help="python-ndn file, MiB (64)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sweep-mb", type=int, default=200, help="sweep file size, 0: none")
    parser.add_argument("--sweep-rounds", type=int, default=3, help="repeats of each point")
    parser.add_argument("--windows", default="16,64,128,256")
    parser.add_argument("--segment-sizes", default="4096,6000,8000,8500")
    parser.add_argument("--ccs", default="fixed,aimd,cubic")
    parser.add_argument("--workdir", default=None, help="where the temp folder goes")
    parser.add_argument("--native", action="store_true", help="add the NDN-DPDK/NDNc rows")
    parser.add_argument("--only", default="", help="rows to run: comma list of label prefixes")
    args = parser.parse_args()
    size, small = args.size_mb << 20, args.small_mb << 20
    with tempfile.TemporaryDirectory(prefix="ndnsci-bench-", dir=args.workdir) as tmp:
        b = Bench(Path(tmp), size, small)
        b.only = [row for row in args.only.split(",") if row]
        try:
            b.start_forwarder(size // 4096 + 1)
            print(f"file: {size} bytes; forwarder {forwarder.binary()}", flush=True)
            if args.native:
                b.native = Native(b)
                print(b.native.describe(), flush=True)
            if args.rounds:
                rounds(b, args.rounds, small)
            if args.sweep_mb:
                sweep_bench = b
                sweep_bench.size = args.sweep_mb << 20
                write_random(b.root / "file.bin", sweep_bench.size)
                sweep(
                    sweep_bench,
                    [int(s) for s in args.segment_sizes.split(",")],
                    [int(w) for w in args.windows.split(",")],
                    args.ccs.split(","),
                    args.sweep_rounds,
                )
        finally:
            b.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
