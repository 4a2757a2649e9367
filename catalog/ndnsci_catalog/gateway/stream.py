"""Bytes of a file named in NDN, fetched through the forwarder and streamed in order.

The consumer of :mod:`ndnsci.ndn.consumer` does the work, as ``ndnsci fetch`` does: discovery
of the versioned name from the signed metadata (signature checked), a window of Interests with
congestion control and retransmissions, every segment's digest checked. The difference is where
the segments go: only those covering the asked bytes are requested, and instead of a file they
go into a reorder buffer released in order to the HTTP response through a :class:`Pipe` of a
few chunks. A request therefore holds at most the window's segments plus the pipe's chunks
(about 13 MiB with the defaults), whatever the file's size, and a slow reader slows the fetch
instead of filling memory.

A whole-file request is checked against the signed SHA-256 before its last chunk is released:
a mismatch cuts the response short (the client sees fewer bytes than Content-Length), so bad
bytes are never delivered as a complete file.

Each stream runs the consumer's loop in a thread of its own with its own face; the forwarder
aggregates and caches, so concurrent readers of the same file share its work.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ndnsci.errors import IntegrityError
from ndnsci.ndn import consumer
from ndnsci.ndn import name as ndnname
from ndnsci.ndn.transport import Face
from ndnsci.sdk.transports import FetchOptions, Received

#: bytes released to the response at a time
CHUNK = 1 << 20
#: chunks a stream may have waiting for the HTTP client before it stops asking for segments
SLOTS = 4
#: how long a discovered version is reused (a file republished meanwhile is refused by its
#: producer: the old version's segments come back as a Nack, and the stream fails clearly)
DISCOVERY_SECONDS = 10.0
DISCOVERY_ENTRIES = 1024


class Cancelled(Exception):
    """The HTTP client went away: the stream stops."""


class Pipe:
    """In-order chunks from a fetching thread to the event loop serving the response.

    ``put`` never blocks (the fetch stops *asking* for data instead: :meth:`wait_room`), so a
    segment's arrival is never delayed by the reader, only the next Interests are.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, slots: int = SLOTS) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._room = threading.Condition()
        self._queued = 0
        self._slots = slots
        self.closed = False

    def put(self, item: bytes | BaseException | None) -> None:
        """A chunk, an error, or None at the end (from the fetching thread)."""
        with self._room:
            if self.closed:
                raise Cancelled
            self._queued += 1
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError as exc:  # the event loop is gone
            raise Cancelled from exc

    def wait_room(self) -> None:
        """Block while the reader has ``slots`` chunks still to take."""
        with self._room:
            while self._queued >= self._slots and not self.closed:
                self._room.wait(0.5)
            if self.closed:
                raise Cancelled

    async def get(self) -> bytes | BaseException | None:
        item = await self._queue.get()
        with self._room:
            self._queued -= 1
            self._room.notify()
        return item  # type: ignore[no-any-return]

    def close(self) -> None:
        with self._room:
            self.closed = True
            self._room.notify_all()


class _RangeTransfer(consumer.Transfer):
    """The consumer's transfer of the segments covering bytes ``start..end`` into a pipe."""

    def __init__(
        self,
        face: Face,
        target: consumer.Target,
        *,
        start: int,
        end: int,
        pipe: Pipe,
        opts: FetchOptions,
    ) -> None:
        assert target.segment_size is not None and target.last_segment is not None
        size = target.segment_size
        self.first_segment, self.last_wanted = start // size, end // size
        state = consumer._State(None, target, resume=False)
        # segments outside the range count as done: never asked for
        state.done[: self.first_segment] = b"\1" * self.first_segment
        state.done[self.last_wanted + 1 :] = b"\1" * (target.last_segment - self.last_wanted)
        result = Received(size=0, published_sha256=None, signer=target.signer)
        super().__init__(face, target, fd=-1, state=state, opts=opts, result=result, progress=None)
        self.next_new, self.last_asked = self.first_segment, self.last_wanted
        self.pipe = pipe
        self.start, self.end = start, end
        self.position = start  # the next byte to release
        self.next_out = self.first_segment
        self.waiting: dict[int, bytes] = {}
        self.out = bytearray()
        self.whole = start == 0 and target.size is not None and end == target.size - 1
        self.digest = hashlib.sha256() if self.whole and target.sha256 else None

    def _send(self, now: float) -> None:
        self.pipe.wait_room()  # the HTTP client is behind: ask for nothing more until it reads
        super()._send(time.monotonic())

    def _write(self, seg: int, content: memoryview) -> None:
        if seg != self.next_out:
            self.waiting[seg] = bytes(content)
            return
        self._release(seg, content)
        while self.next_out in self.waiting:
            self._release(self.next_out, memoryview(self.waiting.pop(self.next_out)))

    def _release(self, seg: int, content: memoryview) -> None:
        offset = seg * self.segment_size
        first = self.position - offset
        last = min(len(content), self.end + 1 - offset)
        piece = content[first:last]
        if self.digest is not None:
            self.digest.update(piece)
        self.out += piece
        self.position += len(piece)
        self.next_out = seg + 1
        # the first bytes go at once (time to first byte); the last wait for the checksum
        if self.position <= self.end and (len(self.out) >= CHUNK or self.position - self.start
                                          == len(self.out)):  # fmt: skip
            self.pipe.put(bytes(self.out))
            self.out.clear()

    def finish(self) -> None:
        """After :meth:`run`: check the whole file's SHA-256, then release the last bytes."""
        expected = self.target.sha256
        if self.digest is not None and expected is not None and self.digest.digest() != expected:
            raise IntegrityError(
                f"{ndnname.value_to_uri(self.target.versioned)}: SHA-256 "
                f"{self.digest.hexdigest()} does not match the signed {expected.hex()}"
            )
        if self.out:
            self.pipe.put(bytes(self.out))
            self.out.clear()


@dataclass
class Stream:
    """Bytes ``start..end`` of a discovered file, fetched by a thread of its own."""

    target: consumer.Target
    start: int
    end: int
    opts: FetchOptions
    transport: str | None
    pipe: Pipe

    def begin(self) -> None:
        threading.Thread(target=self._run, name="ndnsci-gateway-stream", daemon=True).start()

    def _run(self) -> None:
        try:
            face = Face(self.transport)
        except BaseException as exc:
            self._fail(exc)
            return
        transfer: _RangeTransfer | None = None
        try:
            transfer = _RangeTransfer(
                face, self.target, start=self.start, end=self.end, pipe=self.pipe, opts=self.opts
            )
            transfer.run()
            transfer.finish()
            self.pipe.put(None)
        except Cancelled:
            pass
        except BaseException as exc:
            self._fail(exc)
        finally:
            (transfer.face if transfer is not None else face).close()

    def _fail(self, exc: BaseException) -> None:
        with contextlib.suppress(Cancelled):
            self.pipe.put(exc)

    async def next_chunk(self) -> bytes | None:
        """The next bytes, None at the end; raises what the fetch raised."""
        item = await self.pipe.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def body(self, first: bytes | None) -> AsyncIterator[bytes]:
        """The response body: ``first`` (already taken), then the rest."""
        try:
            chunk = first
            while chunk is not None:
                yield chunk
                chunk = await self.next_chunk()
        finally:
            self.pipe.close()

    def cancel(self) -> None:
        self.pipe.close()


class Source:
    """Discovery (with a short cache of versions) and streams, through one forwarder."""

    def __init__(self, transport: str | None = None, opts: FetchOptions | None = None) -> None:
        self.transport = transport
        self.opts = opts or FetchOptions()
        self._found: OrderedDict[str, tuple[float, consumer.Target]] = OrderedDict()
        self._lock = threading.Lock()

    def discover(self, name: str) -> consumer.Target:
        """The file's metadata (blocking; raises the consumer's errors)."""
        now = time.monotonic()
        with self._lock:
            cached = self._found.get(name)
            if cached is not None and now - cached[0] < DISCOVERY_SECONDS:
                return cached[1]
        with Face(self.transport) as face:
            target = consumer.discover(face, ndnname.from_uri(name), self.opts)
            if target.sha256 is None and target.sha256_pending:
                # the producer is still hashing the file: wait (bounded) as fetch does
                target.sha256 = consumer._await_checksum(face, target, self.opts)
        if not target.is_listing and target.sha256 is not None:
            with self._lock:
                self._found[name] = (now, target)
                self._found.move_to_end(name)
                while len(self._found) > DISCOVERY_ENTRIES:
                    self._found.popitem(last=False)
        return target

    def forget(self, name: str) -> None:
        with self._lock:
            self._found.pop(name, None)

    def stream(self, target: consumer.Target, start: int, end: int) -> Stream:
        stream = Stream(target, start, end, self.opts, self.transport,
                        Pipe(asyncio.get_running_loop()))  # fmt: skip
        stream.begin()
        return stream
