"""The ``ndn-dpdk`` transport: NDN-DPDK's fetcher moves the bytes (``fetch --engine ndn-dpdk``).

For one file (:class:`~ndnsci.sdk.transports.Job`):

1. the metadata (versioned name, size, segment size, the publisher's signature and SHA-256 when
   the producer gives them) is asked through NDNd with ndnsci's own consumer: one packet, and
   the same signature checks as the Python transport. NDN-DPDK's fetcher neither retrieves
   metadata nor discovers versions (app/fetch/task.go);
2. the segments are fetched by the plane's fetcher (``ndnsci native up``) through the NDN-DPDK
   forwarder, in **ranges** of :data:`RANGE_SEGMENTS` segments, one fetch task per range,
   written by the fetcher itself (io_uring) into ``job.part`` at their offsets;
3. each finished range is recorded in ``job.state``; a resumed job fetches only the ranges not
   recorded (the fetcher cannot say which segments of an unfinished range arrived, so a range is
   the unit of resume).

Progress comes from the task counters (Data received x segment size), polled ten times a
second. NDN-DPDK's fetcher ignores Nacks and retries without end, so the stall rule is ours: no
new Data for ``options.stall_seconds`` ends the task with FetchTimeout (the engine retries,
resuming). The whole-file SHA-256 is the engine's job, on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ndnsci.errors import FetchError, FetchTimeout, NativePlaneError, TransportError
from ndnsci.native import gql
from ndnsci.native.plane import Plane
from ndnsci.sdk.transports import Cancelled, FetchOptions, Job, Received

RANGE_SEGMENTS = 16384  # 128 MB of 8000-byte segments: the unit of resume
POLL_SECONDS = 0.1
BUSY_RETRY_SECONDS = 0.2  # every fetch task slot is taken: try again this soon


@dataclass(frozen=True)
class Object:
    """What the metadata says about the file."""

    versioned: str  # versioned name URI (the fetch task's prefix)
    size: int
    segment_size: int
    segments: int
    published_sha256: str | None
    signer: str
    sha256_pending: bool = False  # the producer is still hashing the file: ask again after


class NdnDpdkTransport:
    """Fetches through the NDN-DPDK plane's fetcher; see the module docstring."""

    name = "ndn-dpdk"

    def __init__(self, plane: Plane | None = None) -> None:
        self.plane = plane or Plane()
        self._slots: threading.Semaphore | None = None

    def check(self, options: FetchOptions) -> None:
        state = self.plane.load()
        if state is None or state.fetcher is None or not self.plane.is_up():
            raise TransportError(
                "the NDN-DPDK plane is not up: start it with `ndnsci native up` (see "
                "`ndnsci native check`), or fetch with --engine python"
            )

    def receive(self, job: Job) -> Received:
        state = self.plane.load()
        if state is None or state.fetcher is None:
            raise TransportError("the NDN-DPDK plane went down (`ndnsci native up`)")
        target = discover(job.name, job.options)
        if target.size == 0:
            os.truncate(job.part, 0)
            return Received(0, target.published_sha256, target.signer)
        done = _Ranges.load(job.state, target) if job.resume else _Ranges(job.state, target, set())
        if self._slots is None:
            self._slots = threading.Semaphore(state.layout.fetch_tasks)
        with gql.Client(state.layout.fetcher.url) as client, self._slots:
            transfer = _Transfer(client, state.fetcher, job, target, done)
            for begin, end in done.pending():
                transfer.fetch_range(begin, end)
                done.add(begin)
        done.remove()
        return Received(
            size=target.size,
            published_sha256=published_checksum(job.name, job.options, target),
            signer=target.signer,
            segments=target.segments,
            retransmissions=transfer.retransmitted,
            resumed_segments=done.resumed_segments,
        )


@dataclass
class _Transfer:
    """One file's fetch tasks."""

    client: gql.Client
    fetcher: str
    job: Job
    target: Object
    done: _Ranges
    retransmitted: int = 0

    def fetch_range(self, begin: int, end: int) -> None:
        """Fetch segments ``begin`` to ``end - 1`` into the file; returns once they are there."""
        job, target = self.job, self.target
        task = {
            "prefix": target.versioned,
            "segmentBegin": begin,
            "segmentEnd": end,
            "filename": os.path.abspath(job.part),
            "fileSize": target.size,
            "segmentLen": target.segment_size,
            "interestLifetime": job.options.lifetime_ms,
        }
        task_id = _start(self.client, self.fetcher, task, job)
        before = self.done.bytes_done()
        last_received, last_change = -1, time.monotonic()
        try:
            while True:
                if job.stop.wait(POLL_SECONDS):
                    raise Cancelled(job.name)
                counters = self.client.fetch_counters(task_id)
                if counters is None:
                    raise FetchError(f"{job.name}: the NDN-DPDK fetch task disappeared")
                now = time.monotonic()
                if counters.received != last_received:
                    last_received, last_change = counters.received, now
                got = before + counters.received * target.segment_size
                job.progress(min(target.size, got), target.size)
                if counters.finished:
                    self.retransmitted += counters.retransmitted
                    return
                # the fetcher backs its RTO off up to 60 s after losses: it is not stalled
                # while a retransmission is still due
                patience = max(job.options.stall_seconds, 2 * counters.rto_s)
                if now - last_change > patience:
                    raise FetchTimeout(
                        f"{job.name}: no Data for {patience:.0f} s through NDN-DPDK (segments "
                        f"{begin}..{end - 1}, {counters.received} received, RTO "
                        f"{counters.rto_s:.1f} s)"
                    )
        finally:
            # stopping the task closes the file, truncated to the file's size
            with contextlib.suppress(NativePlaneError):
                self.client.delete(task_id)


def _start(client: gql.Client, fetcher: str, task: dict[str, object], job: Job) -> str:
    """Start a fetch task, waiting for a free task slot (other fetches may hold them all)."""
    while True:
        try:
            return client.fetch(fetcher, task)
        except gql.GraphQLError as exc:
            if "too many running tasks" not in str(exc):
                raise TransportError(f"{job.name}: NDN-DPDK refused the fetch: {exc}") from exc
        if job.stop.wait(BUSY_RETRY_SECONDS):
            raise Cancelled(job.name)


class _Ranges:
    """Which ranges of segments are in ``part``: ``job.state`` as JSON."""

    def __init__(self, path: str, target: Object, finished: set[int]) -> None:
        self.path = Path(path)
        self.target = target
        self.finished = finished
        self.resumed_segments = sum(self._length(b) for b in finished)

    @classmethod
    def load(cls, path: str, target: Object) -> _Ranges:
        try:
            raw = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            return cls(path, target, set())
        if raw.get("versioned") != target.versioned or raw.get("range") != RANGE_SEGMENTS:
            return cls(path, target, set())  # another version of the file: start again
        return cls(path, target, {int(b) for b in raw.get("finished", [])})

    def _length(self, begin: int) -> int:
        return min(begin + RANGE_SEGMENTS, self.target.segments) - begin

    def pending(self) -> list[tuple[int, int]]:
        return [
            (b, b + self._length(b))
            for b in range(0, self.target.segments, RANGE_SEGMENTS)
            if b not in self.finished
        ]

    def bytes_done(self) -> int:
        return min(
            self.target.size, sum(self._length(b) for b in self.finished) * self.target.segment_size
        )

    def add(self, begin: int) -> None:
        self.finished.add(begin)
        record = {
            "versioned": self.target.versioned,
            "range": RANGE_SEGMENTS,
            "finished": sorted(self.finished),
        }
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(record))
        os.replace(temporary, self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def discover(name: str, options: FetchOptions) -> Object:
    """The file's metadata, through NDNd with ndnsci's consumer (signature checked)."""
    from ndnsci.ndn import consumer, tlv
    from ndnsci.ndn import name as ndnname
    from ndnsci.ndn.transport import Face, transport_uri

    components = ndnname.from_uri(name)
    opts = FetchOptions(trust_key=options.trust_key)
    with Face(options.forwarder or transport_uri()) as face:
        target = consumer.discover(face, components, opts)
    if target.is_listing:
        raise FetchError(f"{name} is a folder, not a file")
    if target.last_segment is None or target.segment_size is None:
        raise FetchError(f"{name}: the metadata says neither the segment size nor the last segment")
    segments = target.last_segment + 1
    size = target.size
    if size is None:
        raise FetchError(
            f"{name}: the producer does not announce the file size, which NDN-DPDK's fetcher "
            f"needs to write the file; fetch it with --engine python"
        )
    return Object(
        versioned=numeric_uri(tlv.split_components(target.versioned)),
        size=size,
        segment_size=target.segment_size,
        segments=segments if size else 0,
        published_sha256=target.sha256.hex() if target.sha256 else None,
        signer=target.signer,
        sha256_pending=target.sha256_pending,
    )


def published_checksum(name: str, options: FetchOptions, target: Object) -> str | None:
    """The publisher's SHA-256: from the metadata, or, when the producer was still hashing the
    file (ndnsci serve hashes big files in the background), asked again until it says or
    ``options.checksum_wait`` runs out (None: the engine checks against the catalog alone)."""
    deadline = time.monotonic() + options.checksum_wait
    while target.sha256_pending and time.monotonic() < deadline:
        time.sleep(0.5)
        target = discover(name, options)
    return target.published_sha256


def numeric_uri(components: list[bytes]) -> str:
    """A name URI with typed components as ``<type>=<value>`` (``54=%01%02`` for a version):
    NDN-DPDK's parser (ndn.ParseNameComponent) reads only that form, and ``v=1`` would be a
    generic component "v=1"."""
    from ndnsci.ndn import name as ndnname
    from ndnsci.ndn import tlv

    parts = []
    for comp in components:
        typ = tlv.component_type(comp)
        plain = ndnname.component_to_uri(tlv.component(tlv.GENERIC, tlv.component_value(comp)))
        parts.append(plain if typ == tlv.GENERIC else f"{typ}={plain}")
    return "/" + "/".join(parts)
