"""The ``auto`` transport, the default: the fastest engine that works, per file.

For each file: NDN-DPDK's fetcher (:mod:`ndnsci.native.fetcher`) when the native plane is up
and its file server serves the name (the fetcher reaches nothing else: the plane's forwarder
routes only the file server's prefixes), else ndnsci's own consumer (``python``). A file the
native fetcher cannot finish (the plane went down, its fetcher stalled or failed) is finished by
ndnsci's own consumer, which resumes from the ranges the fetcher completed: the fetcher's
resume record is rewritten as the consumer's, so nothing that arrived is fetched again. Each
file's outcome says which engine moved it (``Outcome.engine``: ``ndn-dpdk``, ``python``, or
``ndn-dpdk+python`` after a fall-back, with a warning that says why).

Cheap when there is no plane: whether one is up is first asked of the file system (the plane's
state file), so a fetch on a machine without it imports nothing of the native plane (the
start-up test, tests/ndn/test_ndn_startup.py, holds that).
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from ndnsci.base.environment import native_run
from ndnsci.errors import (
    FetchError,
    IntegrityError,
    NativePlaneError,
    NotFoundError,
    TransportError,
)

if TYPE_CHECKING:
    from ndnsci.sdk.transports import FetchOptions, Job, Received, Transport

#: how long an answer to "is the plane up, and what does it serve" is trusted
PLANE_SECONDS = 5.0


class AutoTransport:
    """NDN-DPDK's fetcher where it reaches the name, else ndnsci's own; see the module."""

    name = "auto"

    def __init__(self) -> None:
        self._python: Transport | None = None
        self._native: Transport | None = None
        self._served: list[list[bytes]] | None = None  # the file server's prefixes; None: no plane
        self._asked = -PLANE_SECONDS
        # a job's workers ask at once: one looks, the others wait for what it found (they took
        # ndnsci's own engine while the first was still reading the plane's state)
        self._looking = threading.Lock()

    # --- the engines -------------------------------------------------------------------------

    def python(self) -> Transport:
        if self._python is None:
            from ndnsci.ndn.consumer import PythonTransport

            self._python = PythonTransport()
        return self._python

    def native(self) -> Transport:
        if self._native is None:
            from ndnsci.native.fetcher import NdnDpdkTransport

            self._native = NdnDpdkTransport()
        return self._native

    def _served_prefixes(self) -> list[list[bytes]] | None:
        """What the plane's file server serves, as name components; None: no plane up."""
        with self._looking:
            if time.monotonic() - self._asked < PLANE_SECONDS:
                return self._served
            served = self._look()
            self._asked, self._served = time.monotonic(), served
            return served

    def _look(self) -> list[list[bytes]] | None:
        if not os.path.exists(os.path.join(native_run(), "state.json")):
            return None  # no plane on this machine: nothing else is imported
        from ndnsci.native.plane import Plane
        from ndnsci.ndn import name as ndnname

        plane = Plane()
        try:
            state = plane.load()
        except NativePlaneError:  # an unreadable state is no plane
            return None
        if state is None or state.fetcher is None or not state.fileserver_prefixes:
            return None
        if not plane.is_up():
            return None
        return [ndnname.from_uri(prefix) for prefix in state.fileserver_prefixes]

    def engine_for(self, name: str) -> str:
        """``ndn-dpdk`` when the plane is up and its file server serves ``name``, else
        ``python``."""
        served = self._served_prefixes()
        if served:
            from ndnsci.ndn import name as ndnname

            components = ndnname.from_uri(name)
            if any(components[: len(prefix)] == prefix for prefix in served):
                return "ndn-dpdk"
        return "python"

    # --- the Transport contract --------------------------------------------------------------

    def list_directory(self, name: str, options: FetchOptions) -> list[tuple[str, bool]]:
        # NDN-DPDK's file server lists as ndnsci's producer does: one consumer lists both
        from ndnsci.ndn.consumer import list_directory

        return list_directory(name, options)

    def check(self, options: FetchOptions) -> None:
        # the metadata always comes through NDNd, whichever engine moves the segments
        self.python().check(options)

    def receive(self, job: Job) -> Received:
        if self.engine_for(job.name) == "python":
            received = self.python().receive(job)
            received.engine = "python"
            return received
        try:
            received = self.native().receive(job)
            received.engine = "ndn-dpdk"
            return received
        except (TransportError, FetchError, NativePlaneError) as exc:
            # nobody serves it, or its bytes are wrong: the engine's business, not an engine's
            if isinstance(exc, (NotFoundError, IntegrityError)) or job.stop.is_set():
                raise
            self._asked = -PLANE_SECONDS  # ask the plane again for the next file
            resumed = _ranges_to_bitmap(job)
            received = self.python().receive(job._replace(resume=resumed > 0))
            received.engine = "ndn-dpdk+python"
            how = f"resuming after {resumed:,} segments" if resumed else "from the start"
            received.warnings.append(
                f"NDN-DPDK's fetcher did not finish ({exc}); ndnsci's own engine finished the "
                f"file, {how}"
            )
            return received


def _ranges_to_bitmap(job: Job) -> int:
    """Rewrite the native fetcher's resume record (the ranges it finished) as ndnsci's
    consumer's (a byte per segment), so the consumer fetches only what is missing; the number
    of segments carried over (0: the consumer starts from nothing)."""
    import json

    from ndnsci.native.fetcher import RANGE_SEGMENTS, discover
    from ndnsci.ndn import name as ndnname

    try:
        with open(job.state, encoding="utf-8") as f:
            record = json.load(f)
        finished = [int(begin) for begin in record.get("finished", [])]
        if record.get("range") != RANGE_SEGMENTS or not finished:
            return 0
        target = discover(job.name, job.options)  # one packet: the segment size and count
        if target.versioned != record.get("versioned") or target.segments == 0:
            return 0
    except (OSError, ValueError, TransportError, FetchError):
        return 0
    done = bytearray(target.segments)
    for begin in finished:
        end = min(begin + RANGE_SEGMENTS, target.segments)
        done[begin:end] = b"\x01" * (end - begin)
    key = {
        "name": b"".join(ndnname.from_uri(target.versioned)).hex(),
        "segment_size": target.segment_size,
        "segments": target.segments,
    }
    temporary = job.state + ".tmp"
    with open(temporary, "wb") as f:
        f.write(json.dumps(key).encode() + b"\n" + bytes(done))
    os.replace(temporary, job.state)
    return sum(done)
