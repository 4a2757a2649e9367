"""The ``ndnc`` transport: NDNc's file-transfer client moves the bytes (``fetch --engine ndnc``).

NDNc (the consumer of the SANDIE/N-DISE experiments) talks to the NDN-DPDK forwarder directly:
``ndncft-client`` makes itself a memif face through the forwarder's GraphQL API and fetches with
its own AIMD (or fixed) window. It is built from the pinned sources with the patches in
``deploy/ndnc/patches/`` (start-up order, writing the file, a clean exit and exit status).

For one file: the metadata is asked through NDNd by ndnsci's consumer (signature checks, size,
the publisher's SHA-256 when given, a clean NotFoundError), then ``ndncft-client --copy NAME
--output-file PART`` writes the file. Progress is the bytes NDNc has written (the part file's
allocated blocks: NDNc writes segments where they belong, holes stay unallocated). NDNc cannot
resume: a resumed job starts from nothing. No new bytes for ``options.stall_seconds`` stops it
(SIGINT: NDNc deletes its face on the way out) with FetchTimeout.

A producer that goes away mid-transfer ends NDNc one of two ways, depending on whether the
forwarder still has a route to it: its Interests time out (no new bytes: the stall above), or
the forwarder answers them with a Nack (NoRoute), which NDNc's pipeline takes as fatal (exit
status 1). Both are FetchTimeout, worth another try, and the message says which it was.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time

from ndnsci.errors import FetchError, FetchTimeout, TransportError
from ndnsci.native import install
from ndnsci.native.fetcher import discover, published_checksum
from ndnsci.native.plane import NDNC_SOCKET_DIR, Plane
from ndnsci.sdk.transports import Cancelled, FetchOptions, Job, Received

POLL_SECONDS = 0.1
START_GRACE_SECONDS = 10.0  # NDNc waits a second after making its face; allow for a slow start
STOP_SECONDS = 10.0
NO_FACE = 3  # ndncft-client's exit status when it cannot make its face (patch 03)


class NdncTransport:
    """Fetches with NDNc's ``ndncft-client`` through the NDN-DPDK forwarder."""

    name = "ndnc"

    def __init__(self, plane: Plane | None = None) -> None:
        self.plane = plane or Plane()

    def check(self, options: FetchOptions) -> None:
        install.require_ndnc()
        if not self.plane.is_up():
            raise TransportError(
                "NDNc fetches through the NDN-DPDK forwarder, which is not up: "
                "`ndnsci native up` (see `ndnsci native check`)"
            )

    def command(self, job: Job) -> list[str]:
        state = self.plane.load()
        if state is None:
            raise TransportError("the NDN-DPDK plane is not up (`ndnsci native up`)")
        options = job.options
        fixed = options.cc == "fixed"
        return [
            str(install.require_ndnc().bin("ndncft-client")),
            "--gqlserver",
            state.layout.forwarder.url,
            "--name-prefix",
            "/",
            "--copy",
            job.name,
            "--output-file",
            os.path.abspath(job.part),
            "--pipeline-type",
            "fixed" if fixed else "aimd",
            "--pipeline-size",
            str(options.window if fixed else options.max_window),
            "--lifetime",
            str(options.lifetime_ms),
        ]

    def receive(self, job: Job) -> Received:
        target = discover(job.name, job.options)
        NDNC_SOCKET_DIR.mkdir(parents=True, exist_ok=True)
        argv = self.command(job)
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            try:
                self._watch(proc, job, target.size)
            finally:
                _stop(proc)
            if proc.returncode != 0:
                log.seek(0)
                text = log.read().decode(errors="replace")
                raise _failure(job.name, proc.returncode, text, _written(job.part), target.size)
        size = os.path.getsize(job.part)
        if size != target.size:
            raise FetchError(
                f"{job.name}: NDNc wrote {size} bytes, the metadata says {target.size}"
            )
        job.progress(size, size)
        return Received(
            size=size,
            published_sha256=published_checksum(job.name, job.options, target),
            signer=target.signer,
            segments=target.segments,
        )

    def _watch(self, proc: subprocess.Popen[bytes], job: Job, total: int) -> None:
        # NDNc makes its face and asks the metadata before the first byte: a grace period
        last, last_change = -1, time.monotonic() + START_GRACE_SECONDS
        while proc.poll() is None:
            if job.stop.wait(POLL_SECONDS):
                raise Cancelled(job.name)
            written = _written(job.part)
            now = time.monotonic()
            if written != last:
                last, last_change = written, max(now, last_change)
                job.progress(min(written, total), total)
            elif now - last_change > job.options.stall_seconds:
                raise FetchTimeout(
                    f"{job.name}: NDNc received nothing for {job.options.stall_seconds:.0f} s "
                    f"({written} of {total} bytes)"
                )


def _written(path: str) -> int:
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT first: NDNc's handler deletes its face on the forwarder (patch 03)."""
    for sig in (signal.SIGINT, signal.SIGKILL):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(STOP_SECONDS)


#: what NDNc's pipeline logs when the forwarder answers an Interest with a Nack it does not retry
#: (NoRoute: the producer's route went away), and what its file client logs then
NACK_LINES = ("received unsupported NACK packet", "pipeline error on receive file content")
#: NDNc's progress bar (redrawn with carriage returns): left out of the log an error quotes
_BAR = frozenset("█▉▊▋▌▍▎▏")


def _failure(name: str, status: int, log: str, written: int = 0, total: int = 0) -> Exception:
    quoted = tail_text(log)
    if status == NO_FACE:
        return TransportError(f"{name}: NDNc could not make its face on the forwarder\n{quoted}")
    if status == 1 and any(line in log for line in NACK_LINES):
        return FetchTimeout(
            f"{name}: the forwarder answered NDNc with a Nack after {written} of {total} bytes: "
            f"no route to the producer any more (did it stop?)\n{quoted}"
        )
    if status < 0:
        return FetchError(f"{name}: NDNc died of signal {-status}\n{quoted}")
    return FetchError(f"{name}: NDNc failed (exit status {status})\n{quoted}")


def tail_text(text: str, lines: int = 12) -> str:
    """The last lines of NDNc's output, its progress bar left out (the errors come before it)."""
    kept = [line for line in text.splitlines() if line.strip() and _BAR.isdisjoint(line)]
    return "\n".join(f"  | {line}" for line in kept[-lines:])
