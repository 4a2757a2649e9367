"""Publishing to a catalog server in batches it accepts: what :meth:`Catalog.publish` and
:meth:`AsyncCatalog.publish` share (the HTTP itself is theirs).

The server states its limits (``GET /limits``: ``max_publish_records`` records and
``max_publish_bytes`` bytes per request); batches are cut to fit them, and a request refused
as too large (413 ``batch-too-large``, limits restated) is cut again and re-sent: a limit is
never taken for a bad record. A request with bad lines is refused whole (422
``invalid-records``) with every bad line listed: they are reported and the rest is sent once
more, so finding them costs one extra request, never one per line. A request refused as too
busy (503) is sent again after its ``Retry-After``, as every SDK request is. Items are read
as they come and at most two batches are held, so a stream of any length publishes in bounded
memory.

Each item is one record: a JSON line (``str``/``bytes``, e.g. ``ndnsci translate --json``
output, passed through unparsed), a mapping, or a described file (:class:`Publishable`, such as
``ndnsci.sdk.describe.DescribedFile``). Lines are numbered from 1 in the order given, blank ones
included, so a report's ``line N`` is the line of the input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Publishable(Protocol):
    """A record that knows where it came from (a described file:
    ``ndnsci.sdk.describe.DescribedFile``)."""

    @property
    def source(self) -> str: ...

    def to_json(self) -> Mapping[str, Any]: ...


#: one record to publish
PublishItem = Publishable | Mapping[str, Any] | str | bytes


@dataclass(frozen=True)
class PublishLimits:
    """What one publish request may carry (the catalog states it in ``GET /limits``)."""

    max_records: int
    max_bytes: int

    @classmethod
    def from_limits(cls, stated: Mapping[str, Any]) -> PublishLimits:
        """From the catalog's ``GET /limits``; FALLBACK_LIMITS from one that states none."""
        records, size = stated.get("max_publish_records"), stated.get("max_publish_bytes")
        if not isinstance(records, int) or not isinstance(size, int):
            return FALLBACK_LIMITS  # batches any catalog takes
        return cls(records, size)


#: for a catalog that states no limits
FALLBACK_LIMITS = PublishLimits(max_records=1000, max_bytes=8 << 20)


@dataclass(frozen=True)
class Refused:
    """A record that was not published, and why: ``line`` of the input, ``source`` its
    file or input (``line N`` when it says none)."""

    line: int
    source: str
    reason: str


@dataclass(frozen=True)
class Collision:
    """A record whose name another file has (docs/catalog.md, "Name collisions"):
    ``published`` is where the catalog's record came from; ``replaced`` says which won."""

    line: int
    source: str
    name: str
    published: str | None
    replaced: bool


@dataclass(frozen=True)
class Conflict:
    """A record not published because another site of the federation holds its name
    (docs/federation.md): ``held_by`` is that site."""

    line: int
    source: str
    name: str
    held_by: str | None


@dataclass
class PublishBatch:
    """One request's outcome: its items as given, in order, and what did not get in."""

    items: list[Any]
    lines: list[int]
    inserted: int = 0
    replaced: int = 0
    unchanged: int = 0
    last_seq: int = 0
    refused: list[Refused] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    def published_items(self) -> list[Any]:
        """The items now in the catalog as given (not refused, not kept out by a collision or
        by another site holding the name)."""
        out = {c.line for c in self.collisions if not c.replaced}
        out.update(r.line for r in self.refused)
        out.update(c.line for c in self.conflicts)
        return [item for item, line in zip(self.items, self.lines, strict=True) if line not in out]


@dataclass
class PublishReport:
    """A whole publish: counts, and every record refused, colliding or held by another site,
    in input order."""

    inserted: int = 0
    replaced: int = 0
    unchanged: int = 0
    last_seq: int = 0
    requests: int = 0
    refused: list[Refused] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def published(self) -> int:
        """Records in the catalog as given (inserted, replaced or already there)."""
        return self.inserted + self.replaced + self.unchanged

    @property
    def ok(self) -> bool:
        kept_out = any(not c.replaced for c in self.collisions)
        return not self.refused and not kept_out and not self.conflicts

    def add(self, batch: PublishBatch) -> None:
        self.inserted += batch.inserted
        self.replaced += batch.replaced
        self.unchanged += batch.unchanged
        self.last_seq = max(self.last_seq, batch.last_seq)
        self.refused += batch.refused
        self.collisions += batch.collisions
        self.conflicts += batch.conflicts


@dataclass
class Pending:
    """A batch being sent: items, their input lines and encoded lines; refusals found so far."""

    items: list[Any] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    encoded: list[bytes] = field(default_factory=list)
    size: int = 0
    refused: list[Refused] = field(default_factory=list)
    #: times the catalog answered it was too busy (503) and it was sent again
    attempts: int = 0

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """The body in pieces of about ``size`` bytes: never a second copy of the whole batch."""
        piece: list[bytes] = []
        held = 0
        for encoded in self.encoded:
            piece.append(encoded)
            held += len(encoded)
            if held >= size:
                yield b"".join(piece)
                piece, held = [], 0
        if piece:
            yield b"".join(piece)

    def append(self, item: Any, line: int, encoded: bytes) -> None:
        self.items.append(item)
        self.lines.append(line)
        self.encoded.append(encoded)
        self.size += len(encoded)


class Batcher:
    """Cuts items into batches within the limits (and at most ``batch`` records each)."""

    def __init__(self, limits: PublishLimits, batch: int | None = None) -> None:
        self.limits = limits
        self.batch = batch
        self.line = 0
        self.current = Pending()
        #: items refused before any request (too big for any request, not one line)
        self.refused: list[Refused] = []

    @property
    def max_records(self) -> int:
        return max(1, min(self.limits.max_records, self.batch or self.limits.max_records))

    def add(self, item: Any) -> Pending | None:
        """Take one item; a batch to send when this one does not fit with it."""
        self.line += 1
        encoded = encode(item)
        if encoded is None:
            return None  # a blank line
        if isinstance(encoded, str):
            self.refused.append(Refused(self.line, source_of(item, self.line), encoded))
            return None
        if len(encoded) > self.limits.max_bytes:
            reason = (
                f"a record of {len(encoded)} bytes: more than the catalog accepts in one "
                f"request ({self.limits.max_bytes} bytes)"
            )
            self.refused.append(Refused(self.line, source_of(item, self.line), reason))
            return None
        full = None
        current = self.current
        if current.items and (
            len(current.items) >= self.max_records
            or current.size + len(encoded) > self.limits.max_bytes
        ):
            full, self.current = current, Pending()
        self.current.append(item, self.line, encoded)
        return full

    def flush(self) -> Pending | None:
        current, self.current = self.current, Pending()
        return current if current.items else None

    def split(self, pending: Pending) -> list[Pending]:
        """``pending`` cut again to the (new) limits, in order."""
        parts: list[Pending] = []
        part = Pending(refused=pending.refused)
        for item, line, encoded in zip(pending.items, pending.lines, pending.encoded, strict=True):
            if part.items and (
                len(part.items) >= self.max_records
                or part.size + len(encoded) > self.limits.max_bytes
            ):
                parts.append(part)
                part = Pending()
            part.append(item, line, encoded)
        parts.append(part)
        return parts


def encode(item: Any) -> bytes | str | None:
    """One item as one JSON line (bytes ending in a newline), None for a blank line, or why
    it cannot be sent (a string)."""
    # lines first: a runtime-checkable Protocol's isinstance costs ~10 us, more than the rest
    # of a line's way to the catalog, and a file's lines are the millions-of-records case
    if isinstance(item, bytes):
        return _line(item)
    if isinstance(item, str):
        return _line(item.encode("utf-8", "surrogateescape"))
    if isinstance(item, Publishable):
        item = item.to_json()
    if isinstance(item, Mapping):
        return json.dumps(item).encode() + b"\n"
    return _line(bytes(item))


def _line(data: bytes) -> bytes | str | None:
    """A line as given (bytes): sent as it is when it is one line ending in a newline."""
    if data.endswith(b"\n") and not data.endswith(b"\r\n") and data.count(b"\n") == 1:
        # a line as read from a file: sent as it is, not copied (a batch holds it once)
        return None if data.isspace() else data
    data = data.rstrip(b"\r\n")
    if not data.strip():
        return None
    if b"\n" in data:
        return "not one JSON line: it holds a line break"
    return data + b"\n"


def source_of(item: Any, line: int) -> str:
    """Where a record came from: a described file's path, else its ``input``, else its line."""
    if isinstance(item, Publishable):
        return item.source
    obj = item
    if isinstance(item, str | bytes):
        try:
            obj = json.loads(item)
        except (ValueError, RecursionError):
            return f"line {line}"
    given = obj.get("input") if isinstance(obj, Mapping) else None
    return given if isinstance(given, str) and given else f"line {line}"


@dataclass
class Answer:
    """What a publish answer means: a finished batch, batches to send (again, after ``wait``
    seconds), new limits."""

    batch: PublishBatch | None = None
    resend: list[Pending] = field(default_factory=list)
    limits: PublishLimits | None = None
    wait: float = 0.0


def interpret(status: int, body: Any, pending: Pending, batcher: Batcher) -> Answer | None:
    """The meaning of the catalog's answer to ``pending``; None for an error to raise."""
    code = body.get("code") if isinstance(body, Mapping) else None
    if status == 200 and isinstance(body, Mapping):
        return Answer(batch=_done(body, pending))
    if status == 413 and code == "batch-too-large":
        limits = PublishLimits(int(body["max_records"]), int(body["max_bytes"]))
        if limits == batcher.limits and len(pending.items) <= limits.max_records:
            return None  # it fits the limits the catalog states, and still: an error
        batcher.limits = limits
        return Answer(resend=batcher.split(pending), limits=limits)
    if status == 422 and code == "invalid-records":
        bad = {int(r["line"]): str(r["detail"]) for r in body.get("refused") or ()}
        if not bad:
            return None
        return Answer(resend=_without(pending, bad))
    return None


def _done(body: Mapping[str, Any], pending: Pending) -> PublishBatch:
    batch = PublishBatch(
        items=pending.items,
        lines=pending.lines,
        inserted=int(body.get("inserted", 0)),
        replaced=int(body.get("replaced", 0)),
        unchanged=int(body.get("unchanged", 0)),
        last_seq=int(body.get("last_seq", 0)),
        refused=pending.refused,
    )
    for entry in body.get("collisions") or ():
        index = int(entry["line"]) - 1  # the line of this request
        line = pending.lines[index]
        batch.collisions.append(
            Collision(
                line=line,
                source=source_of(pending.items[index], line),
                name=str(entry["name"]),
                published=entry.get("published"),
                replaced=bool(entry.get("replaced")),
            )
        )
    batch.conflicts = _conflicts(body.get("conflicting") or (), pending)
    return batch


def _conflicts(conflicting: Iterable[Mapping[str, Any]], pending: Pending) -> list[Conflict]:
    """The lines of ``pending`` whose names the catalog says another site holds (its answer
    names them, not their lines: rare, so the lines are decoded only then)."""
    held = {str(c["name"]): c.get("held_by") for c in conflicting}
    if not held:
        return []
    found = []
    for item, line, encoded in zip(pending.items, pending.lines, pending.encoded, strict=True):
        name = _name_of(encoded)
        if name in held:
            found.append(Conflict(line, source_of(item, line), name, held[name]))
    return found


def _name_of(encoded: bytes) -> str | None:
    try:
        obj = json.loads(encoded)
    except (ValueError, RecursionError):
        return None
    name = obj.get("name") if isinstance(obj, Mapping) else None
    return name if isinstance(name, str) else None


def _without(pending: Pending, bad: Mapping[int, str]) -> list[Pending]:
    """``pending`` without the lines the catalog refused (numbered in the request)."""
    rest = Pending(refused=list(pending.refused))
    for number, (item, line, encoded) in enumerate(
        zip(pending.items, pending.lines, pending.encoded, strict=True), start=1
    ):
        if number in bad:
            rest.refused.append(Refused(line, source_of(item, line), bad[number]))
        else:
            rest.append(item, line, encoded)
    return [rest]
