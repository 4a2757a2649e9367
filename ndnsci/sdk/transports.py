"""The fetch engine's transport contract: how one file's bytes get from NDN into a ``.part`` file.

The engine (:mod:`ndnsci.sdk.fetch`) owns everything around a transfer: the lock on the
destination, the ``.part`` file, skip-after-checksum and the journal, resume, retries with
back-off, verification of the bytes on disk, the rename into place, progress and Ctrl-C. A
transport only moves bytes: given a :class:`Job`, it writes the file named ``job.name`` into
``job.part`` and returns what it learnt (:class:`Received`). So a second data plane (NDN-DPDK's
fetcher, NDNc) plugs in without copying the bookkeeping.

Transports are found by name: the built-in ones below, then the ``ndnsci.sdk.transports``
entry-point group (the translators' registry has the same shape)::

    [project.entry-points."ndnsci.transports"]
    mine = "mypackage.fetching:MyTransport"

where ``MyTransport()`` satisfies :class:`Transport`. The contract, in full, is in
DEVELOPERS.md ("Fetch engine and transports").
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

# "auto" (ndnsci.native.auto): NDN-DPDK's fetcher where the native plane reaches the name,
# else ndnsci's own consumer, per file
DEFAULT = "auto"
ENTRY_POINT_GROUP = "ndnsci.transports"
# Transports that ship with ndnsci, found without scanning the installed packages' metadata
# (that scan costs tens of milliseconds at start-up; as xarray's BACKEND_ENTRYPOINTS).
BUILTIN = {
    "auto": "ndnsci.native.auto:AutoTransport",
    "python": "ndnsci.ndn.consumer:PythonTransport",
    # the native data plane (docs/native.md): NDN-DPDK's fetcher, NDNc's file-transfer client
    "ndn-dpdk": "ndnsci.native.fetcher:NdnDpdkTransport",
    "ndnc": "ndnsci.native.ndnc:NdncTransport",
}

SEGMENT_LIFETIME_MS = 4000
MAX_RETRIES = 10
STALL_SECONDS = 15.0  # no Data at all for this long: give up (every congestion control)
CHECKSUM_WAIT_SECONDS = 30.0  # how long to wait for a producer still hashing the file


class FetchOptions(NamedTuple):
    """How to fetch: the consumer's knobs. A transport uses those it has and ignores the rest
    (its documentation says which). ``options._replace(window=16)`` changes one."""

    cc: str = "aimd"  # window control: fixed, aimd, cubic
    window: int = 64  # (initial) Interests in flight
    max_window: int = 1024
    lifetime_ms: int = SEGMENT_LIFETIME_MS
    max_retries: int = MAX_RETRIES  # per segment, for rejected segments and Nacks
    trust_key: str | None = None  # pin: the metadata must be signed by this key id
    stall_seconds: float = STALL_SECONDS
    checksum_wait: float = CHECKSUM_WAIT_SECONDS
    forwarder: str | None = None  # face URI; None: $NDN_CLIENT_TRANSPORT, else ndnsci's own
    # "auto": a segment's SHA-256 digest is left to the whole-file SHA-256 when the producer
    # published one (the engine checks the file on disk against it, and on a mismatch fetches
    # it again with "always"); "always": every segment's digest is checked as it arrives
    segment_digests: str = "auto"


class Cancelled(Exception):
    """Raised by a transport once ``job.stop`` is set; ``job.part`` stays resumable."""


class Job(NamedTuple):
    """One file to receive. The engine holds the lock on ``part`` for the whole job."""

    name: str  # NDN name URI of the file
    part: str  # write the file's bytes here, at their offsets; never rename or remove it
    state: str  # the transport's own resume record (any format), beside ``part``
    resume: bool  # continue what ``part`` and ``state`` hold; False: start from nothing
    options: FetchOptions
    progress: Callable[[int, int], None]  # (bytes so far, total bytes): about 10 times a second
    stop: threading.Event  # set on Ctrl-C: raise Cancelled within ~0.1 s
    # call settled(N) once the first N bytes of ``part`` are written for good (they will not
    # change): the engine reads them back and hashes them while the rest arrives; optional (a
    # transport that never calls it leaves the whole hash to after the transfer)
    settled: Callable[[int], None] | None = None


@dataclass
class Received:
    """What a transport reports once ``job.part`` holds the whole file (and nothing more).

    A transport fills the counters in as it goes (the consumer's compiled loop too).
    """

    size: int
    published_sha256: str | None  # the publisher's signed whole-file SHA-256, hex, or None
    signer: str  # "ed25519:<key id>", "digest", "none", or what the transport can tell
    segments: int = 0
    retransmissions: int = 0
    timeouts: int = 0
    nacks: int = 0
    rejected: int = 0  # segments refused (digest, size)
    congestion_marks: int = 0
    resumed_segments: int = 0
    warnings: list[str] = field(default_factory=list)
    digests_deferred: bool = False  # segments' digests left to the whole-file SHA-256
    engine: str = ""  # the engine that moved the bytes ("": the transport's name)

    def __post_init__(self) -> None:
        if self.warnings is None:  # warnings=None means none, as it always has (typed list[str])
            self.warnings = []  # type: ignore[unreachable]


class Transport(Protocol):
    """A data plane the engine fetches through (``python``: ndnsci's own consumer)."""

    name: str

    def check(self, options: FetchOptions) -> None:
        """Fail fast, before any file: raise TransportError (with what to do) when the data
        plane cannot be reached."""
        ...

    def receive(self, job: Job) -> Received:
        """Write the file ``job.name`` into ``job.part``, truncated to its size.

        Raises:
            NotFoundError: nobody serves the name (not retried).
            FetchTimeout, TransportError: worth another try; ``part`` and ``state`` keep what
                arrived, and the engine retries with ``resume=True``.
            IntegrityError: a signature or digest is wrong; the engine starts again from
                nothing.
            Cancelled: ``job.stop`` was set.
            OSError: ``part`` cannot be written (a full disk): reported, not retried.
        """
        ...


class Lister(Protocol):
    """A transport that also lists served directories (NDN-DPDK's ``32=ls``): the ``python``
    one does. Optional: :func:`list_directory` says when a transport cannot."""

    def list_directory(self, name: str, options: FetchOptions) -> list[tuple[str, bool]]:
        """The entries of the directory ``name``, as ``(entry, is_directory)``.

        Raises:
            NotFoundError: nobody serves the name.
            FetchError: ``name`` is not a directory; TransportError: no forwarder.
        """
        ...


class UnknownTransportError(ValueError):
    """A transport name nobody registered; the message lists the valid ones."""


@functools.cache
def _plugins() -> dict[str, str]:
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def list_transports() -> list[str]:
    """Names of every transport: the built-in ones and the registered plugins, sorted."""
    return sorted({**_plugins(), **BUILTIN})


@functools.cache
def get_transport(name: str = DEFAULT) -> Transport:
    """The (shared) transport called ``name``.

    Raises:
        UnknownTransportError: nobody registered ``name``; the message lists the valid ones.
    """
    target = BUILTIN.get(name) or _plugins().get(name)
    if target is None:
        raise UnknownTransportError(
            f"unknown transport {name!r}; valid transports: {', '.join(list_transports())}"
        )
    module, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module), attr)
    transport: Transport = factory()
    return transport


def list_directory(
    name: str, options: FetchOptions | None = None, transport: str = DEFAULT
) -> list[tuple[str, bool]]:
    """The entries of the served directory ``name``, as ``(entry, is_directory)``, through the
    transport called ``transport`` (a :class:`Lister`).

    Raises:
        UnknownTransportError: nobody registered ``transport``, or it cannot list directories.
        NdnError: as :meth:`Lister.list_directory`.
    """
    lister = get_transport(transport)
    if not hasattr(lister, "list_directory"):
        raise UnknownTransportError(f"the transport {transport!r} cannot list directories")
    entries: list[tuple[str, bool]] = lister.list_directory(name, options or FetchOptions())
    return entries
