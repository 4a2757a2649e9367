"""State Vector Sync v3: each site announces how many change batches it has published.

The wire format and the timers are NDNd's (``std/sync/svs.go``, ``std/ndn/svs/v3``), checked
against NDNd's own SVS node in ``tests/federation`` (it joins our group, and each side sees the
other's sequence numbers):

- Sync Interest ``<group>/v=3/params-sha256=<digest>``, lifetime 1 s, never answered; its
  ApplicationParameters hold a *Sync Data* packet ``<sync data name>/v=<µs>`` whose content is

  ::

      SvsData 0xC9
        StateVectorEntry 0xCA*: Name 0x07, SeqNoEntry 0xD2* (BootstrapTime 0xD4, SeqNo 0xD6)

- A node sends one when its own sequence number grows, every ``periodic`` seconds (±10 %),
  and, after a suppression delay (< 200 ms), when an incoming vector is behind its own and no
  other node brought it up to date meanwhile.

Our Sync Data is signed with the site's Ed25519 key; incoming vectors are accepted whatever
their signer: a state vector is only a hint of which batches exist, and every batch is verified
against the trust list when it is fetched (a forged vector costs a failed fetch, nothing more).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ndnsci.errors import TransportError
from ndnsci.ndn import control, keys, tlv
from ndnsci.ndn.transport import Face

log = logging.getLogger(__name__)

SVS_DATA = 0xC9
SV_ENTRY = 0xCA
SEQ_NO_ENTRY = 0xD2
BOOTSTRAP_TIME = 0xD4
SEQ_NO = 0xD6
VERSION_3 = tlv.version(3)
SYNC_LIFETIME_MS = 1000
PERIODIC = 30.0
SUPPRESSION = 0.2
#: vectors whose bootstrap time is this far in the future are dropped (the spec's rule)
FUTURE_BOOT = 86400

#: node name (TLV-VALUE) -> bootstrap time -> sequence number
StateVector = dict[bytes, dict[int, int]]


def encode_state_vector(state: StateVector) -> bytes:
    entries = b""
    for node in sorted(state):
        seqs = b"".join(
            tlv.tlv(SEQ_NO_ENTRY, tlv.tlv(BOOTSTRAP_TIME, tlv.nni(b)) + tlv.tlv(SEQ_NO, tlv.nni(n)))
            for b, n in sorted(state[node].items())
        )
        entries += tlv.tlv(SV_ENTRY, tlv.tlv(tlv.NAME, node) + seqs)
    return tlv.tlv(SVS_DATA, entries)


def decode_state_vector(content: bytes) -> StateVector:
    """The vector of an SvsData TLV; TlvError when malformed."""
    top = tlv.iter_tlvs(content, 0, len(content))
    if len(top) != 1 or top[0][0] != SVS_DATA:
        raise tlv.TlvError("not an SvsData TLV")
    state: StateVector = {}
    for typ, vs, ve in tlv.iter_tlvs(content, top[0][1], top[0][2]):
        if typ != SV_ENTRY:
            continue
        node: bytes | None = None
        seqs: dict[int, int] = {}
        for etyp, evs, eve in tlv.iter_tlvs(content, vs, ve):
            if etyp == tlv.NAME:
                node = bytes(content[evs:eve])
            elif etyp == SEQ_NO_ENTRY:
                fields = {
                    t: tlv.read_nni(content[a:b]) for t, a, b in tlv.iter_tlvs(content, evs, eve)
                }
                if BOOTSTRAP_TIME in fields and SEQ_NO in fields:
                    seqs[fields[BOOTSTRAP_TIME]] = fields[SEQ_NO]
        if node is None:
            raise tlv.TlvError("a state vector entry without a name")
        state[node] = seqs
    return state


def sync_interest(group: bytes, sync_data: bytes, nonce: int) -> bytes:
    """A Sync Interest carrying ``sync_data`` (a whole Data packet)."""
    params = tlv.tlv(tlv.APP_PARAMETERS, sync_data)
    digest = tlv.component(tlv.PARAMETERS_SHA256, hashlib.sha256(params).digest())
    value = tlv.tlv(tlv.NAME, group + VERSION_3 + digest)
    value += b"\x0a\x04" + nonce.to_bytes(4, "big")
    value += tlv.tlv(tlv.INTEREST_LIFETIME, tlv.nni(SYNC_LIFETIME_MS))
    return tlv.tlv(tlv.INTEREST, value + params)


def sync_data_of(interest: bytes | memoryview, group: bytes) -> tlv.DataPacket | None:
    """The Sync Data of a Sync Interest of ``group`` (None for anything else)."""
    wire = bytes(interest)
    top = tlv.iter_tlvs(wire, 0, len(wire))
    if len(top) != 1 or top[0][0] != tlv.INTEREST:
        return None
    name, params = None, None
    for typ, vs, ve in tlv.iter_tlvs(wire, top[0][1], top[0][2]):
        if typ == tlv.NAME and name is None:
            name = wire[vs:ve]
        elif typ == tlv.APP_PARAMETERS:
            params = wire[vs:ve]
    if name is None or params is None or not name.startswith(group + VERSION_3):
        return None
    return tlv.parse_data(params)


@dataclass(frozen=True, slots=True)
class Update:
    """A node's sequence number moved to ``seq`` (``boot``: its bootstrap time)."""

    node: bytes
    boot: int
    seq: int


class SyncNode:
    """One node of a sync group on its own face, in a thread of its own.

    ``node``: our node name (TLV-VALUE; the site prefix); ``on_update`` is called (from the
    node's thread) for every entry of another node that grew.
    """

    def __init__(
        self,
        group: bytes,
        node: bytes,
        *,
        boot: int,
        key: keys.PublisherKey,
        key_name: bytes,
        on_update: Callable[[Update], None],
        transport: str | None = None,
        periodic: float = PERIODIC,
        sync_data_name: bytes | None = None,
    ) -> None:
        self.group = group
        self.node = node
        self.boot = boot
        self.key = key
        self.key_name = key_name
        self.on_update = on_update
        self.transport = transport
        self.periodic = periodic
        self.sync_data_name = sync_data_name or node
        self.state: StateVector = {}
        self._lock = threading.Lock()
        self._send_now = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._suppressing = False
        self._merged: StateVector = {}
        self._timer = 0.0
        self.stats = {"sent": 0, "received": 0, "bad": 0}

    # --- the application's side ----------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> SyncNode:
        self._thread = threading.Thread(target=self._run, name="svs", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TransportError("the sync node could not join its group on the forwarder")
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def publish(self, seq: int) -> None:
        """Our sequence number is now ``seq``: announce it at once."""
        with self._lock:
            mine = self.state.setdefault(self.node, {})
            if seq <= mine.get(self.boot, 0):
                return
            mine[self.boot] = seq
        self._send_now.set()

    def seq_of(self, node: bytes) -> dict[int, int]:
        with self._lock:
            return dict(self.state.get(node, {}))

    # --- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        backoff = 0.2
        while not self._stop.is_set():
            try:
                with Face(self.transport) as face:
                    control.register(face, tlv.split_components(self.group))
                    control.set_strategy(face, tlv.split_components(self.group), control.MULTICAST)
                    self._ready.set()
                    backoff = 0.2
                    self._send(face)  # a node that (re)joins says where it is at once
                    self._loop(face)
            except TransportError as exc:
                if self._stop.is_set():
                    return
                log.warning("sync: %s; reconnecting in %.1f s", exc, backoff)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)

    def _loop(self, face: Face) -> None:
        while not self._stop.is_set():
            if self._send_now.is_set() or time.monotonic() >= self._timer:
                self._on_timer(face)
            if face.fill(min(0.1, max(0.0, self._timer - time.monotonic()))):
                for sync_data in self._incoming(face):
                    self._on_sync_data(sync_data)

    def _incoming(self, face: Face) -> list[tlv.DataPacket]:
        found = []
        for typ, first, value_start, last in face.packets():
            start, end = first, last
            if typ == tlv.LP_PACKET:
                frame = tlv.unwrap_lp(face.buf, value_start, last)
                if frame is None or frame.nack_reason is not None:
                    continue
                start, end = frame.start, frame.end
            if face.buf[start] != tlv.INTEREST:
                continue
            try:
                data = sync_data_of(face.view[start:end], self.group)
            except tlv.TlvError:
                data = None
                self.stats["bad"] += 1
            if data is not None:
                found.append(data)
        return found

    def _on_timer(self, face: Face) -> None:
        with self._lock:
            behind = self._suppressing and self._newer_than(self._merged)
            send = self._send_now.is_set() or not self._suppressing or behind
            self._send_now.clear()
        if send:
            self._send(face)
        else:  # suppression: others brought everyone up to date
            self._steady()

    def _send(self, face: Face) -> None:
        with self._lock:
            content = encode_state_vector(self.state or {self.node: {self.boot: 0}})
            self._steady()
        name = self.sync_data_name + tlv.version(time.time_ns() // 1000)
        info = tlv.signature_info(tlv.SIG_ED25519, self.key_name)
        data = tlv.signed_data(name, tlv.meta_info(tlv.CT_BLOB), content, info, self.key.sign)
        nonce = int.from_bytes(os.urandom(4), "big")
        face.send([sync_interest(self.group, data, nonce)])
        self.stats["sent"] += 1

    def _steady(self) -> None:
        self._suppressing = False
        jitter = self.periodic / 10
        delay = random.uniform(self.periodic - jitter, self.periodic + jitter)
        self._timer = time.monotonic() + delay

    def _on_sync_data(self, data: tlv.DataPacket) -> None:
        try:
            vector = decode_state_vector(data.content)
        except tlv.TlvError as exc:
            self.stats["bad"] += 1
            log.debug("sync: malformed state vector: %s", exc)
            return
        self.stats["received"] += 1
        if any(boot > time.time() + FUTURE_BOOT for seqs in vector.values() for boot in seqs):
            return
        updates: list[Update] = []
        with self._lock:
            outdated = False
            for node, seqs in vector.items():
                known = self.state.setdefault(node, {})
                for boot, seq in seqs.items():
                    if seq > known.get(boot, 0) and node != self.node:
                        # (our own entry is ours to set: a claim about it is not taken)
                        known[boot] = seq
                        updates.append(Update(node, boot, seq))
                    elif seq < known.get(boot, 0):
                        outdated = True
                    if self._suppressing:
                        merged = self._merged.setdefault(node, {})
                        merged[boot] = max(merged.get(boot, 0), seq)
            if not outdated and self._newer_than(vector):
                outdated = True  # it lacks nodes we know
            if not outdated:
                self._steady()
            elif not self._suppressing:
                self._suppressing = True
                self._merged = {}
                self._timer = time.monotonic() + _suppression_timeout()
        for update in updates:
            self.on_update(update)

    def _newer_than(self, other: StateVector) -> bool:
        """Does our state hold an entry ``other`` lacks or has lower (lock held)?"""
        for node, seqs in self.state.items():
            for boot, seq in seqs.items():
                if seq > other.get(node, {}).get(boot, 0):
                    return True
        return False


def _suppression_timeout() -> float:
    """The spec's exponential decay: most nodes wait close to the full period."""
    c = SUPPRESSION
    v = random.uniform(0, c)
    return c * (1 - math.exp((v - c) / (c / 10)))
