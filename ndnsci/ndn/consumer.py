"""The ``python`` transport: RDR discovery, then a pipelined, verified, resumable segment transfer.

1. Discovery: ``<name>/32=metadata`` (CanBePrefix, MustBeFresh). A Data of ContentType NACK is
   "not found" at once; silence for ``DISCOVERY_ATTEMPTS`` lifetimes is "nobody serves it".
   The metadata signature is checked: DigestSha256, or Ed25519 with the key fetched from the
   KeyLocator name, whose last component must be the key id (hash) of the key it returns.
2. Transfer: a window of Interests in flight (fixed, AIMD or CUBIC), RTO from RFC 6298,
   retransmission on timeout and Nack, every segment's DigestSha256 checked, its content written
   in place into the engine's ``<file>.part`` with ``os.pwrite`` straight from the receive
   buffer; which segments are there is kept in ``<file>.part.state`` (a byte per segment), so
   a resumed job fetches only what is missing, as long as the producer serves the same version.
3. Completion: the file is truncated to its size and the publisher's signed whole-file SHA-256
   is returned (asked again while the producer is still hashing).

The lock, the hash of the bytes on disk and the rename into place are the engine's
(:mod:`ndnsci.sdk.fetch`): this module only moves bytes (:class:`PythonTransport`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ndnsci.base import hashes
from ndnsci.errors import (
    FetchError,
    FetchTimeout,
    IntegrityError,
    NoProducerError,
    NotFoundError,
    TransportError,
)
from ndnsci.ndn import cc, keys, rdr, tlv
from ndnsci.ndn import name as ndnname
from ndnsci.ndn.transport import Face
from ndnsci.sdk.transports import Cancelled, FetchOptions, Job, Received

try:  # the compiled hot loop (ndnsci/ndn/_hotloop.c), built by `pip install`
    from ndnsci.ndn import _hotloop
except ImportError:  # pragma: no cover - a build without a C compiler
    _hotloop = None  # type: ignore[assignment]

# Which per-packet code a transfer runs: "auto" (compiled when built), "c" or "python"
HOTLOOP_ENV = "NDNSCI_HOTLOOP"

DISCOVERY_LIFETIME_MS = 1000
DISCOVERY_ATTEMPTS = 3
RECONNECT_SECONDS = 5.0
STATE_FLUSH_SECONDS = 1.0

ProgressFn = Callable[[int, int], None]


@dataclass
class Target:
    """What discovery learnt about an object (filled in as it learns more)."""

    versioned: bytes  # name TLV-VALUE ending in v=
    last_segment: int | None
    segment_size: int | None
    size: int | None
    sha256: bytes | None
    sha256_pending: bool
    signer: str  # "ed25519:<key id>", "digest" or "none"
    is_listing: bool
    metadata_name: bytes  # the name the metadata was asked under (to ask again)


# --- single Interest / Data exchanges -----------------------------------------------------------


def express(face: Face, wire: bytes, name_value: bytes, timeout: float) -> tlv.DataPacket | int:
    """Send one Interest, return the Data under ``name_value``, or a Nack reason (int).

    Raises FetchTimeout when nothing answers within ``timeout``.
    """
    face.send([wire])
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        face.fill(remaining)
        for typ, first, value_start, last in face.packets():
            start, end = first, last
            reason = None
            if typ == tlv.LP_PACKET:
                frame = tlv.unwrap_lp(face.buf, value_start, end)
                if frame is None:
                    continue
                start, end, reason = frame.start, frame.end, frame.nack_reason
            packet = face.view[start:end]
            if reason is not None:
                nacked = tlv.parse_interest(packet)
                if nacked.name_value == name_value:
                    return reason
            elif packet[0] == tlv.DATA:
                data = tlv.parse_data(packet)
                if data.name_value.startswith(name_value):
                    return data
    raise FetchTimeout("no answer")


def _nonce() -> int:
    return int.from_bytes(os.urandom(4), "big")


def fetch_one(face: Face, name_value: bytes, can_be_prefix: bool, fresh: bool) -> tlv.DataPacket:
    """One Data for a name, with DISCOVERY_ATTEMPTS tries; raises NotFoundError."""
    uri = ndnname.value_to_uri(name_value)
    reasons = []
    for _ in range(DISCOVERY_ATTEMPTS):
        wire = tlv.interest(name_value, _nonce(), DISCOVERY_LIFETIME_MS, can_be_prefix, fresh)
        try:
            answer = express(face, wire, name_value, DISCOVERY_LIFETIME_MS / 1000 + 0.1)
        except FetchTimeout:
            reasons.append("timeout")
            continue
        if isinstance(answer, int):
            reasons.append(f"Nack {tlv.NACK_REASONS.get(answer, answer)}")
            if answer == 150:  # NoRoute: asking again will not help
                break
            time.sleep(0.05)
            continue
        if answer.content_type == tlv.CT_NACK:
            why = answer.content.decode(errors="replace") or "not found"
            raise NotFoundError(f"{uri}: the producer says: {why}")
        return answer
    raise NoProducerError(
        f"{uri}: no producer answered ({', '.join(reasons)}); is the name right, and is a "
        f"producer serving its prefix on this forwarder ({face.uri})?"
    )


# --- discovery ---------------------------------------------------------------------------------


def discover(face: Face, components: list[bytes], opts: FetchOptions) -> Target:
    """Metadata of a name (or, for a versioned name, what its first segment says)."""
    if components and tlv.component_type(components[-1]) == tlv.VERSION:
        return _from_first_segment(face, b"".join(components))
    asked = b"".join(components) + rdr.METADATA
    data = fetch_one(face, asked, can_be_prefix=True, fresh=True)
    signer = verify_signature(face, data, opts.trust_key)
    try:
        meta = rdr.Metadata.decode(data.content)
    except tlv.TlvError as exc:
        raise FetchError(f"{ndnname.value_to_uri(asked)}: bad metadata: {exc}") from exc
    versioned_comps = tlv.split_components(meta.versioned_name)
    target = Target(
        versioned=meta.versioned_name,
        last_segment=meta.last_segment,
        segment_size=meta.segment_size,
        size=meta.size,
        sha256=meta.sha256,
        sha256_pending=meta.sha256_pending,
        signer=signer,
        is_listing=len(versioned_comps) >= 2 and versioned_comps[-2] == rdr.LS,
        metadata_name=asked,
    )
    if target.last_segment is None or target.segment_size is None:
        # ndnd put announces neither: its first segment tells both
        first = _from_first_segment(face, meta.versioned_name)
        target.last_segment, target.segment_size = first.last_segment, first.segment_size
    return target


def _from_first_segment(face: Face, versioned: bytes) -> Target:
    data = fetch_one(face, versioned + tlv.segment(0), can_be_prefix=False, fresh=False)
    if not data.digest_ok() and data.signature_type == tlv.SIG_DIGEST_SHA256:
        raise IntegrityError(f"{ndnname.value_to_uri(versioned)}: segment 0 digest mismatch")
    if data.final_block_id is None or tlv.component_type(data.final_block_id) != tlv.SEGMENT:
        raise FetchError(f"{ndnname.value_to_uri(versioned)}: segment 0 has no FinalBlockId")
    last = tlv.component_number(data.final_block_id)
    return Target(
        versioned=versioned,
        last_segment=last,
        segment_size=len(data.content) if last > 0 else max(1, len(data.content)),
        size=len(data.content) if last == 0 else None,
        sha256=None,
        sha256_pending=False,
        signer="none",
        is_listing=False,
        metadata_name=b"",
    )


# Key names end in the key's own hash (keys.key_id), so a key checked once is the same key for
# every later file it signs: a bulk download fetches and checks each publisher key once.
_publisher_keys: dict[bytes, bytes] = {}


def verify_signature(face: Face, data: tlv.DataPacket, trust_key: str | None) -> str:
    """Check the metadata signature; returns a description of the signer."""
    uri = ndnname.value_to_uri(data.name_value)
    if data.signature_type == tlv.SIG_ED25519 and data.key_locator is not None:
        key_comps = tlv.split_components(data.key_locator)
        key_id = tlv.component_value(key_comps[-1]).decode(errors="replace") if key_comps else ""
        locator = bytes(data.key_locator)
        public = _publisher_keys.get(locator)
        if public is None:
            public = bytes(fetch_one(face, locator, can_be_prefix=False, fresh=False).content)
            if len(public) != 32 or keys.key_id(public) != key_id:
                raise IntegrityError(f"{uri}: the publisher key does not match its name")
            _publisher_keys[locator] = public
        if not keys.verify(public, data.signed, data.signature_value):
            raise IntegrityError(f"{uri}: bad Ed25519 signature on the metadata")
        if trust_key and trust_key != key_id:
            raise IntegrityError(f"{uri}: signed by key {key_id}, not the trusted {trust_key}")
        return f"ed25519:{key_id}"
    if trust_key:
        raise IntegrityError(f"{uri}: metadata not signed by a publisher key ({trust_key} wanted)")
    if data.signature_type == tlv.SIG_DIGEST_SHA256:
        if not data.digest_ok():
            raise IntegrityError(f"{uri}: metadata digest mismatch")
        return "digest"
    return "none"


# --- the transfer ------------------------------------------------------------------------------


def hotloop() -> str:
    """The per-packet code transfers run now: ``"c"`` or ``"python"`` (``$NDNSCI_HOTLOOP``)."""
    from ndnsci.base import environment

    wanted = environment.hotloop()
    if wanted not in ("auto", "c", "python"):
        raise ValueError(f"{HOTLOOP_ENV}={wanted!r}: auto, c or python")
    if wanted == "c" and _hotloop is None:
        raise FetchError(f"{HOTLOOP_ENV}=c, but ndnsci was installed without its C extension")
    return "python" if wanted == "python" or _hotloop is None else "c"


class _State:
    """Which segments are on disk: a byte per segment, saved beside ``<file>.part`` (kept in
    memory only when ``path`` is None)."""

    def __init__(self, path: str | None, target: Target, resume: bool) -> None:
        assert target.last_segment is not None
        self.path = path
        self.count = target.last_segment + 1
        self.key = {
            "name": target.versioned.hex(),
            "segment_size": target.segment_size,
            "segments": self.count,
        }
        self.done = bytearray(self.count)
        if resume:
            self._load()
        self.flushed = time.monotonic()

    def _load(self) -> None:
        import json  # only to resume, or stop: not on a fetch's way to its first byte

        if self.path is None:
            return
        try:
            with open(self.path, "rb") as f:
                header, _, bitmap = f.read().partition(b"\n")
            if json.loads(header) == self.key and len(bitmap) == self.count:
                self.done[:] = bitmap
        except (OSError, ValueError):
            pass

    def flush(self) -> None:
        """Save the bitmap (write a temporary file, rename it over); a failed write (a full
        disk) leaves the previous state and no temporary file, and raises. No path: nothing
        to save (a transfer that streams instead of resuming)."""
        if self.path is None:
            self.flushed = time.monotonic()
            return
        import json

        tmp = self.path + ".tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(json.dumps(self.key).encode() + b"\n" + self.done)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self.flushed = time.monotonic()

    def remove(self) -> None:
        if self.path is None:
            return
        for path in (self.path, self.path + ".tmp"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


class Transfer:
    """Fetches the segments of one target into ``fd`` (the hot loop)."""

    def __init__(
        self,
        face: Face,
        target: Target,
        *,
        fd: int,
        state: _State,
        opts: FetchOptions,
        result: Received,
        progress: ProgressFn | None,
        defer_digests: bool = False,
    ) -> None:
        """``defer_digests``: leave each segment's SHA-256 digest unchecked when the producer
        published the whole file's SHA-256 and the caller checks the file against it (as the
        fetch engine does on disk); never for a subclass that streams the content on."""
        assert target.last_segment is not None and target.segment_size is not None
        self.face = face
        self.target = target
        self.fd = fd
        self.state = state
        self.opts = opts
        self.result = result
        self.progress = progress
        self.cc = cc.make(opts.cc, opts.window, opts.max_window)
        self.rtt = cc.RttEstimator(max_rto=max(1.0, opts.lifetime_ms / 1000))
        self.interests = tlv.SegmentInterests(target.versioned, opts.lifetime_ms)
        self.fresh_interests = tlv.SegmentInterests(target.versioned, opts.lifetime_ms, True)
        self.segment_size = target.segment_size
        self.last = target.last_segment
        self.inflight: dict[int, float] = {}
        self.retries: dict[int, int] = {}
        self.pending: deque[int] = deque()  # to (re)send before new segments
        self.must_be_fresh: set[int] = set()
        self.next_new = 0
        self.last_asked = self.last  # new Interests stop here (a subclass may fetch a range)
        self.remaining = self.last + 1 - sum(state.done)
        self.received_bytes = (self.last + 1 - self.remaining) * self.segment_size
        self.total = target.size if target.size is not None else (self.last + 1) * self.segment_size
        deferred = (
            defer_digests and target.sha256 is not None and type(self)._write is Transfer._write
        )
        result.digests_deferred = deferred
        # the segments' digests (a small file's hash is cheaper to make at once); None: deferred
        self.sha256 = None if deferred else hashes.sha256(self.total)
        self.last_size: int | None = (
            target.size - self.last * self.segment_size if (target.size is not None) else None
        )
        self.nonce = _nonce()
        self.last_data = time.monotonic()
        self.core = self._compiled_core() if hotloop() == "c" else None
        # told how many of the file's first bytes are written for good (Job.settled), if set
        self.settled: Callable[[int], None] | None = None
        self.contiguous = 0  # the first segment not yet written, as last told

    def _compiled_core(self) -> _hotloop.Core:
        """The compiled twin of :meth:`_send` and :meth:`_receive`, on this object's containers."""
        return _hotloop.Core(
            prefix=bytes(self.target.versioned), last=self.last, segment_size=self.segment_size,
            fd=self.fd, done=self.state.done, inflight=self.inflight, retries=self.retries,
            pending=self.pending, must_be_fresh=self.must_be_fresh, rtt=self.rtt, cc=self.cc,
            result=self.result, interests=self.interests.layout(),
            fresh_interests=self.fresh_interests.layout(),
            hook=type(self)._write is not Transfer._write,  # a subclass streams the content
            sha256=self.sha256, tlv_error=tlv.TlvError,
        )  # fmt: skip

    # the loop ---------------------------------------------------------------------------------

    def run(self) -> None:
        last_progress = 0.0
        while self.remaining:
            now = time.monotonic()
            self._expire(now)
            self._send(now)
            wait = self._next_deadline(now) - now
            try:
                got = self.face.fill(min(max(wait, 0.0), 0.05))
            except TransportError:
                self._reconnect()
                continue
            if got:
                self._receive()
                if self.settled is not None:
                    self._settle()
            elif now - self.last_data > self.opts.stall_seconds:
                raise FetchTimeout(
                    f"no Data for {self.opts.stall_seconds:.0f} s "
                    f"({self.remaining} segments missing); the producer may be gone"
                )
            if now - self.state.flushed > STATE_FLUSH_SECONDS:
                self.state.flush()
            if self.progress is not None and now - last_progress > 0.1:
                self.progress(self.received_bytes, self.total)
                last_progress = now
        if self.progress is not None:
            self.progress(self.received_bytes, self.total)

    def _settle(self) -> None:
        """Tell ``settled`` how far the segments written so far are contiguous from the start."""
        missing = self.state.done.find(0, self.contiguous)
        if missing < 0 or missing > self.last:
            missing = self.last + 1
        if missing == self.contiguous:
            return
        if missing > self.last:
            if self.last_size is None:
                return  # the end is not known yet: the engine hashes the rest afterwards
            offset = self.last * self.segment_size + self.last_size
        else:
            offset = missing * self.segment_size
        self.contiguous = missing
        assert self.settled is not None
        self.settled(offset)

    def _next_deadline(self, now: float) -> float:
        for sent in self.inflight.values():
            return sent + self.rtt.rto
        return now + 0.05

    def _expire(self, now: float) -> None:
        """Segments whose RTO elapsed go back to the queue (oldest first: dict order).

        A timeout counts against the segment's retry budget only when other Data arrived
        since it was sent; while nothing arrives at all, the stall deadline decides, so every
        congestion control gives up after ``stall_seconds`` (not a fixed window's 10 short RTOs).
        """
        rto = self.rtt.rto
        expired = []
        for seg, sent in self.inflight.items():
            if now - sent < rto:
                break
            expired.append((seg, sent))
        if not expired:
            return
        for seg, sent in expired:
            del self.inflight[seg]
            if self.last_data > sent:
                self._retry(seg, "timeout")
            else:
                self.pending.append(seg)
        self.result.timeouts += len(expired)
        if self.cc.on_loss(now, self.rtt.smoothed):
            self.rtt.backoff()

    def _retry(self, seg: int, why: str) -> None:
        count = self.retries.get(seg, 0) + 1
        if count > self.opts.max_retries:
            raise FetchTimeout(
                f"segment {seg}: {why} after {self.opts.max_retries} retransmissions"
            )
        self.retries[seg] = count
        self.pending.append(seg)

    def _send(self, now: float) -> None:
        if self.core is not None:
            interests = self.core.send(self, now)
            if interests is not None:
                self._send_batch([interests])
            return
        room = int(self.cc.window) - len(self.inflight)
        if room <= 0:
            return
        batch = []
        done = self.state.done
        nonce = self.nonce
        while room > 0:
            if self.pending:
                seg = self.pending.popleft()
                if done[seg] or seg in self.inflight:
                    continue
                self.result.retransmissions += 1
                maker = self.fresh_interests if seg in self.must_be_fresh else self.interests
            elif self.next_new <= self.last_asked:
                seg = self.next_new
                self.next_new += 1
                if done[seg]:
                    continue
                maker = self.interests
            else:
                break
            nonce = (nonce + 0x9E3779B1) & 0xFFFFFFFF
            batch.append(maker.encode(seg, nonce))
            self.inflight[seg] = now
            room -= 1
        self.nonce = nonce
        if batch:
            self._send_batch(batch)

    def _send_batch(self, batch: list[bytes]) -> None:
        try:
            self.face.send(batch)
        except TransportError:
            self._reconnect()

    def _reconnect(self) -> None:
        """The forwarder went away: reconnect (bounded) and re-express what was in flight."""
        deadline = time.monotonic() + RECONNECT_SECONDS
        error: TransportError | None = None
        while time.monotonic() < deadline:
            try:
                face = Face(self.face.uri)
            except TransportError as exc:
                error = exc
                time.sleep(0.2)
                continue
            self.face.close()
            self.face = face
            self.pending.extendleft(sorted(self.inflight, reverse=True))
            self.inflight.clear()
            return
        raise TransportError(
            f"lost the forwarder at {self.face.uri} and could not reconnect within "
            f"{RECONNECT_SECONDS:.0f} s ({error}); run again with --resume"
        )

    # receiving -------------------------------------------------------------------------------

    def _receive(self) -> None:
        face = self.face
        if self.core is not None:
            face.start = self.core.receive(self, face.buf, face.start, face.end)
            return
        buf = face.buf
        for typ, first, value_start, end in face.packets():
            if typ == tlv.LP_PACKET:
                if buf[value_start] == tlv.LP_FRAGMENT:
                    # NDNd's usual wrapper: a bare fragment, nothing to look at
                    start = value_start + 2 if buf[value_start + 1] < 253 else value_start + 4
                    if buf[start] == tlv.DATA:
                        self._on_data(buf, start, end)
                    continue
                self._receive_lp(value_start, end)
            elif buf[first] == tlv.DATA:
                self._on_data(buf, first, end)

    def _receive_lp(self, value_start: int, end: int) -> None:
        """An LpPacket with more than a fragment: a Nack, a congestion mark, a PIT token."""
        buf = self.face.buf
        frame = tlv.unwrap_lp(buf, value_start, end)
        if frame is None:
            return
        if frame.nack_reason is not None:
            self._on_nack(frame)
            return
        if frame.congestion_mark:
            self.result.congestion_marks += 1
            self.cc.on_loss(time.monotonic(), self.rtt.smoothed)
        if buf[frame.start] == tlv.DATA:
            self._on_data(buf, frame.start, frame.end)

    def _on_data(self, buf: bytearray, start: int, end: int) -> None:
        """Verify and store one segment (offsets into the receive buffer, no copies)."""
        _, p = tlv.read_varnum(buf, start + 1)
        if buf[p] != tlv.NAME:
            return
        name_len, name_start = tlv.read_varnum(buf, p + 1)
        name_end = name_start + name_len
        prefix = self.target.versioned
        q = name_start + len(prefix)
        if not buf.startswith(prefix, name_start) or buf[q] != tlv.SEGMENT:
            return  # not ours (e.g. a late metadata answer)
        seg = int.from_bytes(buf[q + 2 : name_end], "big")
        if seg > self.last or self.state.done[seg]:
            return  # duplicate
        # MetaInfo: a ContentType other than BLOB means the producer refuses (e.g. new version)
        if buf[name_end] != tlv.META_INFO:
            return self._reject(seg, "no MetaInfo")
        meta_len, meta_start = tlv.read_varnum(buf, name_end + 1)
        if buf[meta_start] == tlv.CONTENT_TYPE and buf[meta_start + 2] != tlv.CT_BLOB:
            self._refused(buf, start, end)
        content_len, content_start = tlv.read_varnum(buf, meta_start + meta_len + 1)
        content_end = content_start + content_len
        sig_len, sig_start = tlv.read_varnum(buf, content_end + 1)
        sig_end = sig_start + sig_len
        view = self.face.view
        if buf[sig_start + 2] == tlv.SIG_DIGEST_SHA256 and self.sha256 is not None:
            digest = self.sha256(view[p:sig_end]).digest()
            if buf[sig_end] != tlv.SIGNATURE_VALUE or buf[sig_end + 2 : sig_end + 34] != digest:
                return self._reject(seg, "digest mismatch")
        expected = self.segment_size if seg < self.last else self.last_size
        if expected is not None and content_len != expected:
            return self._reject(seg, f"{content_len} bytes, {expected} expected")
        self._write(seg, view[content_start:content_end])
        self._stored(seg, content_len)

    def _write(self, seg: int, content: memoryview) -> None:
        """Store one verified segment (in place in the file; a subclass may stream it)."""
        os.pwrite(self.fd, content, seg * self.segment_size)

    def _stored(self, seg: int, size: int) -> None:
        now = time.monotonic()
        self.last_data = now
        sent = self.inflight.pop(seg, None)
        if sent is not None and seg not in self.retries:
            self.rtt.sample(now - sent)  # Karn: no samples from retransmitted segments
        self.cc.on_ack(now)
        self.state.done[seg] = 1
        self.remaining -= 1
        self.received_bytes += size
        if seg == self.last:
            self.last_size = size

    def _reject(self, seg: int, why: str) -> None:
        """A bad segment: count it and ask again, bypassing caches still holding it."""
        self.result.rejected += 1
        self.inflight.pop(seg, None)
        self.must_be_fresh.add(seg)
        self._retry(seg, f"rejected ({why})")

    def _refused(self, buf: bytearray, start: int, end: int) -> None:
        data = tlv.parse_data(buf[start:end])
        why = data.content.decode(errors="replace") or "refused"
        raise NotFoundError(f"{ndnname.value_to_uri(data.name_value)}: the producer says: {why}")

    def _on_nack(self, frame: tlv.LpFrame) -> None:
        self.result.nacks += 1
        try:
            nacked = tlv.parse_interest(self.face.view[frame.start : frame.end])
        except tlv.TlvError:
            return
        comps = tlv.split_components(nacked.name_value)
        if not comps or tlv.component_type(comps[-1]) != tlv.SEGMENT:
            return
        seg = tlv.component_number(comps[-1])
        if self.inflight.pop(seg, None) is None:
            return
        reason = frame.nack_reason or 0
        if reason == 150 and self.received_bytes == 0 and self.retries.get(seg, 0) >= 2:
            raise NoProducerError(
                f"{ndnname.value_to_uri(self.target.versioned)}: no route (Nack NoRoute)"
            )
        if reason == 50:
            self.cc.on_loss(time.monotonic(), self.rtt.smoothed)
        self._retry(seg, f"Nack {tlv.NACK_REASONS.get(reason, reason)}")


# --- one file, end to end ----------------------------------------------------------------------


class PythonTransport:
    """The ``python`` transport of the fetch engine (see :mod:`ndnsci.sdk.transports`)."""

    name = "python"

    def check(self, options: FetchOptions) -> None:
        Face(options.forwarder).close()

    def receive(self, job: Job) -> Received:
        def progress(done: int, total: int) -> None:
            if job.stop.is_set():
                raise Cancelled
            job.progress(done, total)

        # the engine checks the file on disk against the published SHA-256: the segments'
        # digests can wait for it (FetchOptions.segment_digests)
        return receive(
            job.name, job.part, job.state, resume=job.resume, opts=job.options, progress=progress,
            settled=job.settled, defer_digests=job.options.segment_digests == "auto",
        )  # fmt: skip

    def list_directory(self, name: str, options: FetchOptions) -> list[tuple[str, bool]]:
        return list_directory(name, options)


def receive(
    uri: str,
    part: str,
    state: str,
    *,
    resume: bool = False,
    opts: FetchOptions | None = None,
    progress: ProgressFn | None = None,
    face: Face | None = None,
    settled: Callable[[int], None] | None = None,
    defer_digests: bool = False,
) -> Received:
    """Write the file named ``uri`` into ``part`` (its bitmap in ``state``); see
    :meth:`ndnsci.sdk.transports.Transport.receive`. ``defer_digests``: see :class:`Transfer` (only
    for a caller that checks the whole file against ``published_sha256`` itself).

    Raises NotFoundError, IntegrityError, FetchTimeout (all FetchError) or TransportError.
    """
    opts = opts or FetchOptions()
    components = ndnname.from_uri(uri)
    own_face = face is None
    face = face or Face(opts.forwarder)
    try:
        target = discover(face, components, opts)
        if target.is_listing:
            raise FetchError(f"{uri} is a directory: fetch the files it lists (ndnsci fetch --ls)")
        received = Received(size=0, published_sha256=None, signer=target.signer)
        # a forwarder restart replaces the face: keep the live one
        face = _transfer_file(
            face, target, part=part, state_path=state, resume=resume, opts=opts,
            received=received, progress=progress, settled=settled, defer_digests=defer_digests,
        )  # fmt: skip
        return received
    finally:
        if own_face:
            face.close()


def _transfer_file(
    face: Face,
    target: Target,
    *,
    part: str,
    state_path: str,
    resume: bool,
    opts: FetchOptions,
    received: Received,
    progress: ProgressFn | None,
    settled: Callable[[int], None] | None = None,
    defer_digests: bool = False,
) -> Face:
    """Fetch ``target`` into ``part``; returns the face in use (new if the forwarder restarted)."""
    state = _State(state_path, target, resume)
    received.resumed_segments = sum(state.done)
    fd = os.open(part, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    transfer: Transfer | None = None
    try:
        transfer = Transfer(
            face, target, fd=fd, state=state, opts=opts, result=received, progress=progress,
            defer_digests=defer_digests,
        )  # fmt: skip
        transfer.settled = settled
        transfer.run()
        face = transfer.face
        assert transfer.last_size is not None and target.segment_size is not None
        size = transfer.last * target.segment_size + transfer.last_size
        os.ftruncate(fd, size)
        received.size, received.segments = size, transfer.last + 1
        received.published_sha256 = _published_checksum(face, target, opts, received)
    except BaseException:
        with contextlib.suppress(OSError):  # a full disk: the error that matters is raised
            state.flush()  # what arrived stays usable by a resumed job
        if transfer is not None and transfer.face is not face:
            transfer.face.close()
        raise
    finally:
        os.close(fd)
    return face


def _published_checksum(
    face: Face, target: Target, opts: FetchOptions, received: Received
) -> str | None:
    expected = target.sha256
    if expected is None and target.sha256_pending:
        expected = _await_checksum(face, target, opts)
    if expected is None:
        received.warnings.append(
            "the producer publishes no whole-file SHA-256: only segment digests were checked"
        )
        return None
    return expected.hex()


def _await_checksum(face: Face, target: Target, opts: FetchOptions) -> bytes | None:
    """Ask the metadata again until the producer has finished hashing the file (bounded)."""
    deadline = time.monotonic() + opts.checksum_wait
    while time.monotonic() < deadline:
        data = fetch_one(face, target.metadata_name, can_be_prefix=True, fresh=True)
        verify_signature(face, data, opts.trust_key)
        meta = rdr.Metadata.decode(data.content)
        if meta.versioned_name != target.versioned:
            raise FetchError("the file changed on the producer during the transfer")
        if meta.sha256 is not None or not meta.sha256_pending:
            return meta.sha256
        time.sleep(0.25)
    return None


def list_directory(
    uri: str, opts: FetchOptions | None = None, face: Face | None = None
) -> list[tuple[str, bool]]:
    """Entries of a served directory, as ``(name, is_directory)`` (NDN-DPDK ``32=ls``)."""
    import tempfile

    opts = opts or FetchOptions()
    components = ndnname.from_uri(uri)
    if not components or components[-1] != rdr.LS:
        components.append(rdr.LS)
    own_face = face is None
    face = face or Face(opts.forwarder)
    try:
        target = discover(face, components, opts)
        if not target.is_listing:
            raise FetchError(f"{uri} is not a directory")
        with tempfile.TemporaryDirectory(prefix="ndnsci-ls-") as tmp:
            path = os.path.join(tmp, "listing")
            received = Received(size=0, published_sha256=None, signer=target.signer)
            face = _transfer_file(
                face, target, part=path, state_path=path + ".state", resume=False, opts=opts,
                received=received, progress=None,
            )  # fmt: skip
            with open(path, "rb") as f:
                payload = f.read()
    finally:
        if own_face:
            face.close()
    return [(os.fsdecode(name), is_dir) for name, is_dir in rdr.decode_listing(payload)]
