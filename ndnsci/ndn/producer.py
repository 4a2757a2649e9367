"""``ndnsci serve``: a file-server producer compatible with NDN-DPDK's and ``ndnd cat``.

Name -> file mapping (see docs/protocol.md, "Producer"): ``<prefix>/<c1>/.../<cn>`` is the file
``ROOT/c1/.../cn`` when every ``ci`` is a generic component that is a plain file-name (not
empty, ``.``, ``..``, no ``/`` or NUL, at most 255 bytes) and the real path, symlinks resolved,
stays inside ROOT. Anything else gets an application-level Nack: a Data of ContentType NACK,
freshness 1 ms, as NDN-DPDK's file server answers, so consumers fail fast.

Requests:

- ``<file>/32=metadata`` (CanBePrefix) -> RDR metadata, signed by the publisher key.
- ``<dir>/32=metadata`` or ``<dir>/32=ls/32=metadata`` -> metadata of the directory listing.
- ``<file>/v=<version>/seg=<n>`` -> segment ``n`` read with ``os.pread``, DigestSha256; the
  version is the file's inode change time in ns (:func:`version_of`).
- ``<dir>/32=ls/v=<version>/seg=<n>`` -> listing segment.
- ``<prefix>/32=key/<key id>`` -> the publisher's raw Ed25519 public key.

The segment path is the hot loop: a dict maps the versioned name bytes straight to an open
file, the segment number is read off the end of the name, and the Data is assembled from
precomputed pieces; everything else goes through the general (slower) path. The segment path is
compiled (``_serveloop.c``, built by ``pip install``, the consumer's switch ``NDNSCI_HOTLOOP``:
``python`` keeps this module's own loop); what it does not answer it hands back here.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from threading import Event
from typing import Any

from ndnsci.base import environment
from ndnsci.base.hashes import sha256 as new_sha256
from ndnsci.errors import NdnError, TransportError
from ndnsci.ndn import control, rdr, tlv
from ndnsci.ndn import name as ndnname
from ndnsci.ndn.filehash import FileKey, HashCache, file_key
from ndnsci.ndn.keys import PublisherKey
from ndnsci.ndn.transport import Face
from ndnsci_translators.names import UnsafePathError, safe_relative_path

try:  # the compiled segment path (ndnsci/ndn/_serveloop.c), built by `pip install`
    from ndnsci.ndn import _serveloop
except ImportError:  # a source tree without the build: the loop below does the same
    _serveloop = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

DEFAULT_SEGMENT_SIZE = 8000
SEGMENT_FRESHNESS_MS = 4000  # as ndnd put: lets the forwarder's cache answer repeat fetches
METADATA_FRESHNESS_MS = 1000  # short: a changed file is announced within a second
NACK_FRESHNESS_MS = 1
KEY_FRESHNESS_MS = 3_600_000
NAME_MAX = 255
PATH_MAX = 4096
MAX_OPEN_FILES = 256
RECHECK_SECONDS = 1.0  # how stale a cached stat() may be before a segment is served from it
KEY_KEYWORD = tlv.keyword(b"key")
FLUSH_EVERY = 16  # replies per write; larger batches add latency a fixed window feels
NAME_RESERVE = 64  # bytes of file path the segment size must leave room for in the name
INLINE_HASH_MAX = 1 << 20  # files up to this size are hashed when their metadata is asked


def version_of(st: os.stat_result) -> int:
    """The version a file (or directory) is served under: its inode change time in ns.

    Any change to the content moves it (a write sets it, and so does putting the mtime back),
    so a changed file never reuses a version whose segments caches may still hold; an
    unchanged file keeps its version across producer restarts.
    """
    return st.st_ctime_ns


def max_segment_size(name_value_len: int) -> int:
    """The largest content that keeps a segment Data within the 8800-byte packet limit."""
    # name + seg component (<= 10) + MetaInfo (<= 3+3+4+12) + Content TL (4) + signature (5+34)
    name_tl = 4 + name_value_len + 10
    overhead = 4 + name_tl + 22 + 4 + 5 + 34
    return tlv.MAX_PACKET_SIZE - overhead


@dataclass
class _Object:
    """An open file (or a directory listing) served under one versioned name."""

    versioned: bytes  # name TLV-VALUE ending in v=<version>
    path: bytes
    fd: int | None
    payload: bytes | None  # directory listings are served from memory
    size: int
    key: FileKey  # the content version, for the checksum cache
    segment_size: int
    last_segment: int
    meta: bytes  # the MetaInfo TLV every segment carries
    content_tl: bytes = b""  # Content TLV header of a full segment
    checked: float = field(default_factory=time.monotonic)

    def read(self, seg: int) -> bytes:
        offset = seg * self.segment_size
        if self.payload is not None:
            return self.payload[offset : offset + self.segment_size]
        assert self.fd is not None
        return os.pread(self.fd, self.segment_size, offset)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def plain_parts(path_comps: list[bytes]) -> list[bytes]:
    """The file-name values of generic components; NotServed for anything else."""
    parts = []
    for comp in path_comps:
        if tlv.component_type(comp) != tlv.GENERIC:
            raise NotServed("path components must be generic name components")
        value = tlv.component_value(comp)
        try:
            safe_relative_path([os.fsdecode(value)])
        except UnsafePathError:
            raise NotServed("not a plain file name") from None
        if len(value) > NAME_MAX:
            raise NotServed("file name too long")
        parts.append(value)
    return parts


def _compiled() -> bool:
    """Whether segments are answered by ``_serveloop`` (``$NDNSCI_HOTLOOP``, as the consumer)."""
    wanted = environment.hotloop()
    if wanted == "c" and _serveloop is None:
        raise NdnError("NDNSCI_HOTLOOP=c, but ndnsci was installed without its C extension")
    return wanted != "python" and _serveloop is not None


class NotServed(Exception):
    """A request that gets an application-level Nack; the message is the reason."""


class Producer:
    """Serves the files below ``root`` under ``prefix`` (a list of encoded components)."""

    def __init__(
        self,
        root: str,
        prefix: list[bytes],
        *,
        segment_size: int = DEFAULT_SEGMENT_SIZE,
        key: PublisherKey | None = None,
        hashes: HashCache | None = None,
        transport: str | None = None,
    ) -> None:
        self.root = os.path.realpath(os.fsencode(root))
        if not os.path.isdir(self.root):
            raise NotADirectoryError(f"not a directory: {root}")
        self.prefix = list(prefix)
        self.prefix_value = b"".join(prefix)
        limit = max_segment_size(len(self.prefix_value) + NAME_RESERVE)
        if not 64 <= segment_size <= limit:
            raise ValueError(
                f"segment size {segment_size} out of range 64..{limit} "
                f"(the 8800-byte NDN packet limit, with room for the name)"
            )
        self.segment_size = segment_size
        self.key = key
        self.hashes = hashes or HashCache()
        self.transport = transport
        self.objects: OrderedDict[bytes, _Object] = OrderedDict()
        self.key_name = self.prefix_value + KEY_KEYWORD + tlv.generic(key.key_id) if key else None
        # Interests answered, by kind (``ndnsci serve`` prints them on SIGUSR1)
        # (``changed``: files a MappedProducer stopped serving, their content not the published)
        self.stats = {"interests": 0, "segments": 0, "metadata": 0, "nacks": 0, "changed": 0}
        self.registered: set[tuple[bytes, ...]] = set()
        self.registrations_changed = False
        self.compiled = _compiled()
        self.sha256 = new_sha256()  # as tlv.digest_packet's

    # --- the loop ----------------------------------------------------------------------------

    def serve_forever(self, stop: Event | None = None, ready: Event | None = None) -> None:
        """Connect, register, answer Interests; reconnect when the forwarder restarts."""
        stop = stop or Event()
        backoff = 0.2
        while not stop.is_set():
            try:
                with Face(self.transport) as face:
                    self.registered = set()
                    self._register(face)
                    log.info("serving %s on %s", self.root.decode(errors="replace"), face.uri)
                    if ready is not None:
                        ready.set()
                    backoff = 0.2
                    self._loop(face, stop)
            except TransportError as exc:
                if stop.is_set():
                    break
                log.warning("%s; reconnecting in %.1f s", exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
        for obj in self.objects.values():
            obj.close()

    def registrations(self) -> list[list[bytes]]:
        """The prefixes to register with the forwarder."""
        return [self.prefix]

    def _register(self, face: Face) -> None:
        for prefix in self.registrations():
            if tuple(prefix) not in self.registered:
                control.register(face, prefix)
                self.registered.add(tuple(prefix))

    def _loop(self, face: Face, stop: Event) -> None:
        while not stop.is_set():
            if self.registrations_changed:
                self.registrations_changed = False
                self._register(face)  # on this thread: the face is not shared
            if not face.fill(0.25):
                continue
            replies = self._answer(face)
            if replies:
                face.send(replies)

    def _answer(self, face: Face) -> Sequence[bytes | bytearray]:
        if not self.compiled:
            return self._answer_frames(face, face.packets())
        out: list[bytes | bytearray] = []
        while True:
            face.start, replies, frames, answered, more, odd = _serveloop.serve(
                face.buf, face.start, face.end, self.objects, time.monotonic(),
                RECHECK_SECONDS, self.sha256, 2 * FLUSH_EVERY,
            )  # fmt: skip
            self.stats["interests"] += answered
            self.stats["segments"] += answered
            if replies:
                out.append(replies)
            if frames:
                out.extend(self._answer_frames(face, frames))
            if odd:  # a packet no forwarder sends: the framing below raises TlvError
                out.extend(self._answer_frames(face, face.packets()))
            if not more:
                return out
            face.send(out)  # keep the pipeline moving, as below
            out = []

    def _answer_frames(self, face: Face, frames: list[tuple[int, int, int, int]]) -> list[bytes]:
        """Replies to ``frames`` (Face.packets()'s) of ``face.buf``."""
        buf = face.buf
        view = face.view
        out: list[bytes] = []
        for typ, first, value_start, last in frames:
            start, end = first, last
            token = None
            if typ == tlv.LP_PACKET:
                # NDNd sends `64 LL 62 LL <PIT token> 50 LL <Interest>`; the token is echoed
                if buf[value_start] == tlv.LP_PIT_TOKEN and buf[value_start + 1] < 253:
                    t_end = value_start + 2 + buf[value_start + 1]
                    token = bytes(buf[value_start + 2 : t_end])
                    if buf[t_end] == tlv.LP_FRAGMENT and buf[t_end + 1] < 253:
                        start = t_end + 2  # the usual shape, no need for the general parser
                    else:
                        frame = tlv.unwrap_lp(buf, t_end, end)
                        if frame is None or frame.nack_reason is not None:
                            continue
                        start, end = frame.start, frame.end
                else:
                    frame = tlv.unwrap_lp(buf, value_start, end)
                    if frame is None or frame.nack_reason is not None:
                        continue
                    start, end, token = frame.start, frame.end, frame.pit_token
            if buf[start] != tlv.INTEREST:
                continue
            self.stats["interests"] += 1
            reply = self._segment_fast(buf, start, end)
            if reply is None:
                reply = self._general(view[start:end])
            if reply is not None:
                # the LpPacket header and the Data go out as two buffers of one sendmsg
                out.append(tlv.lp_header(len(reply), token))
                out.append(reply)
                if len(out) >= 2 * FLUSH_EVERY:
                    face.send(out)  # keep the pipeline moving: consumers wait on latency
                    out = []
        return out

    def _segment_fast(self, buf: bytearray, start: int, end: int) -> bytes | None:
        """Data for ``<known versioned name>/seg=<n>``, or None to take the general path."""
        _, p = tlv.read_varnum(buf, start + 1)  # Interest TLV-LENGTH
        if buf[p] != tlv.NAME:
            return None
        name_len, name_start = tlv.read_varnum(buf, p + 1)
        name_end = name_start + name_len
        for width in (1, 2, 4, 8):
            head = name_end - width - 2
            if head > name_start and buf[head] == tlv.SEGMENT and buf[head + 1] == width:
                break
        else:
            return None
        obj = self.objects.get(bytes(buf[name_start:head]))
        if obj is None:
            return None
        seg = int.from_bytes(buf[head + 2 : name_end], "big")
        if seg > obj.last_segment or time.monotonic() - obj.checked > RECHECK_SECONDS:
            return None  # out of range, or the file must be re-checked: general path decides
        self.stats["segments"] += 1
        content = obj.read(seg)
        content_tl = obj.content_tl
        if len(content) != obj.segment_size:
            content_tl = tlv.varnum(tlv.CONTENT) + tlv.varnum(len(content))
        return tlv.digest_packet(bytes(buf[p:name_end]), obj.meta, content_tl, content)

    # --- the general path --------------------------------------------------------------------

    def _general(self, wire: memoryview) -> bytes | None:
        try:
            interest = tlv.parse_interest(wire)
            comps = tlv.split_components(interest.name_value)
        except tlv.TlvError:
            return None  # not even a name to answer: drop
        if comps[: len(self.prefix)] != self.prefix:
            return None
        try:
            return self._dispatch(interest, comps[len(self.prefix) :])
        except NotServed as exc:
            self.stats["nacks"] += 1
            log.debug("nack %s: %s", interest.name_value.hex(), exc)
            meta = tlv.meta_info(tlv.CT_NACK, NACK_FRESHNESS_MS)
            return tlv.data_digest(interest.name_value, meta, str(exc).encode())

    def _dispatch(self, interest: tlv.InterestPacket, rel: list[bytes]) -> bytes | None:
        if len(rel) == 2 and rel[0] == KEY_KEYWORD:
            return self._key_data(interest.name_value)
        if rel and rel[-1] == rdr.METADATA:
            if not interest.can_be_prefix:
                raise NotServed("a metadata Interest needs CanBePrefix")
            listing = len(rel) >= 2 and rel[-2] == rdr.LS
            path_comps = rel[:-2] if listing else rel[:-1]
            self.stats["metadata"] += 1
            return self._metadata(interest.name_value, path_comps, listing)
        if rel and tlv.component_type(rel[-1]) == tlv.VERSION and interest.can_be_prefix:
            # `<versioned name>` with CanBePrefix (python-ndn's segment_fetcher starts so):
            # segment 0 is the Data under it
            rel = [*rel, tlv.segment(0)]
            interest = interest._replace(name_value=interest.name_value + tlv.segment(0))
        if len(rel) >= 2 and tlv.component_type(rel[-1]) == tlv.SEGMENT:
            if tlv.component_type(rel[-2]) != tlv.VERSION:
                raise NotServed("a segment name is <name>/v=<version>/seg=<n>")
            listing = len(rel) >= 3 and rel[-3] == rdr.LS
            path_comps = rel[:-3] if listing else rel[:-2]
            obj = self._object(path_comps, listing, tlv.component_number(rel[-2]))
            seg = tlv.component_number(rel[-1])
            if seg > obj.last_segment:
                raise NotServed(f"segment {seg} past the last one ({obj.last_segment})")
            self.stats["segments"] += 1
            return tlv.data_digest(interest.name_value, obj.meta, obj.read(seg))
        raise NotServed("not a metadata, listing or segment name")

    def _metadata(self, interest_name: bytes, path_comps: list[bytes], listing: bool) -> bytes:
        _, st = self.resolve(path_comps)
        listing = listing or stat.S_ISDIR(st.st_mode)
        if listing and not stat.S_ISDIR(st.st_mode):
            raise NotServed("32=ls of a file")
        obj = self._object(path_comps, listing, version_of(st))
        digest = None
        if not listing:
            digest = self.hashes.lookup(obj.key)
            if digest is None and obj.size <= INLINE_HASH_MAX:
                # a millisecond here saves the consumer a "pending" round trip and its wait:
                # what makes a bulk download of thousands of small files fast
                digest = self.hashes.compute(obj.key)
            self._verify(path_comps, obj, digest)
        metadata = rdr.Metadata(
            versioned_name=obj.versioned,
            final_block_id=tlv.segment(obj.last_segment),
            segment_size=self.segment_size,
            size=obj.size,
            mode=st.st_mode,
            mtime_ns=st.st_mtime_ns,
            sha256=digest,
            sha256_pending=digest is None and not listing,
        )
        # named like NDN-DPDK's: <Interest name>/v=<now ns>/seg=0, so a new answer (e.g. once
        # the checksum is known) never reuses the name of an older one
        name = interest_name + tlv.version(time.time_ns()) + tlv.segment(0)
        # while the checksum is pending, a cached copy must not hide the final answer
        freshness = NACK_FRESHNESS_MS if metadata.sha256_pending else METADATA_FRESHNESS_MS
        meta = tlv.meta_info(tlv.CT_BLOB, freshness, tlv.segment(0))
        return self._sign(name, meta, metadata.encode())

    def _verify(self, path_comps: list[bytes], obj: _Object, digest: bytes | None) -> None:
        """Raise NotServed when ``digest`` (None: not known yet) is not the content that may be
        served under the name; a plain tree serves whatever its files hold."""

    def _sign(self, name: bytes, meta: bytes, content: bytes) -> bytes:
        if self.key is None or self.key_name is None:
            return tlv.data_digest(name, meta, content)
        info = tlv.signature_info(tlv.SIG_ED25519, self.key_name)
        return tlv.signed_data(name, meta, content, info, self.key.sign)

    def _key_data(self, name: bytes) -> bytes:
        if self.key is None or name != self.key_name:
            raise NotServed("no such key")
        meta = tlv.meta_info(tlv.CT_KEY, KEY_FRESHNESS_MS)
        return self._sign(name, meta, self.key.public)

    # --- names -> files ------------------------------------------------------------------------

    def resolve(self, path_comps: list[bytes]) -> tuple[bytes, os.stat_result]:
        """The real path and stat of the file or directory a name designates, inside ROOT.

        Raises NotServed for every hostile or missing name.
        """
        parts = plain_parts(path_comps)
        joined = os.path.join(self.root, *parts) if parts else self.root
        return self._inside(joined)

    def _inside(self, joined: bytes) -> tuple[bytes, os.stat_result]:
        """The real path and stat of ``joined`` when it resolves inside ROOT; else NotServed."""
        if len(joined) > PATH_MAX:
            raise NotServed("path too long")
        real = os.path.realpath(joined)
        if real != self.root and not real.startswith(self.root + b"/"):
            raise NotServed("outside the served tree")
        try:
            st = os.stat(real)
        except OSError as exc:
            raise NotServed("not found") from exc
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise NotServed("not a regular file or directory")
        return real, st

    def _object(self, path_comps: list[bytes], listing: bool, version: int) -> _Object:
        """The open object for a versioned name, (re)validated against the file on disk."""
        base = b"".join(path_comps) + (rdr.LS if listing else b"")
        versioned = self.prefix_value + base + tlv.version(version)
        obj = self.objects.get(versioned)
        if obj is not None and time.monotonic() - obj.checked <= RECHECK_SECONDS:
            return obj
        path, st = self.resolve(path_comps)
        if version_of(st) != version:
            self._forget(versioned)
            raise NotServed(f"version {version} is gone (now v={version_of(st)})")
        # the same content version (size, mtime and ctime: a file rewritten in place with its
        # mtime put back has a new ctime), else opened again, its checksum asked again
        if obj is not None and (obj.key, obj.path) == (file_key(path, st), path):
            obj.checked = time.monotonic()
            self.objects.move_to_end(versioned)
            return obj
        self._forget(versioned)
        obj = self._open(versioned, path, st, listing)
        self.objects[versioned] = obj
        while len(self.objects) > MAX_OPEN_FILES:
            self.objects.popitem(last=False)[1].close()
        return obj

    def _open(self, versioned: bytes, path: bytes, st: os.stat_result, listing: bool) -> _Object:
        fd, payload = None, None
        if listing:
            if not stat.S_ISDIR(st.st_mode):
                raise NotServed("32=ls of a file")
            payload = rdr.encode_listing(self._list(path))
            size = len(payload)
        else:
            if not stat.S_ISREG(st.st_mode):
                raise NotServed("a directory has no segments; ask 32=ls")
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
            size = st.st_size
        if self.segment_size > max_segment_size(len(versioned)):
            raise NotServed("name too long for the segment size (8800-byte packet limit)")
        last = max(0, -(-size // self.segment_size) - 1)
        meta = tlv.meta_info(tlv.CT_BLOB, SEGMENT_FRESHNESS_MS, tlv.segment(last))
        content_tl = tlv.varnum(tlv.CONTENT) + tlv.varnum(self.segment_size)
        return _Object(
            versioned,
            path,
            fd,
            payload,
            size,
            file_key(path, st),
            self.segment_size,
            last,
            meta,
            content_tl,
        )

    def _forget(self, versioned: bytes) -> None:
        obj = self.objects.pop(versioned, None)
        if obj is not None:
            obj.close()

    def _list(self, directory: bytes) -> list[tuple[bytes, bool]]:
        entries = []
        with os.scandir(directory) as it:
            for entry in it:
                real = os.path.realpath(entry.path)
                if not real.startswith(self.root + b"/"):
                    continue  # a symlink leading out of the tree is not listed
                if entry.is_dir():
                    entries.append((entry.name, True))
                elif entry.is_file():
                    entries.append((entry.name, False))
        return sorted(entries)


# --- serving a set of names (``ndnsci serve --catalog``) ---------------------------------------

_VIRTUAL = b"\0"  # marks a directory derived from the names: no real path starts with NUL


class NameTable:
    """Exact names -> files below ROOT; the directories are the names' prefixes.

    ``files`` maps a name's encoded components (absolute: the scheme root first, e.g.
    ``/CMIP5``) to the file's path; ``sizes``, when known, to the size it was published with;
    ``sha256s``, when known, to the SHA-256 it was published with (raw bytes). Nothing but these
    names reaches a file.
    """

    def __init__(
        self,
        files: dict[tuple[bytes, ...], bytes],
        sizes: dict[tuple[bytes, ...], int] | None = None,
        version_ns: int | None = None,
        sha256s: dict[tuple[bytes, ...], bytes] | None = None,
    ) -> None:
        self.files = files
        self.sizes = sizes or {}  # the published size: a file that changed is not served
        self.sha256s = sha256s or {}  # the published content: nor is one that holds other bytes
        self.version = version_ns or time.time_ns()
        children: dict[tuple[bytes, ...], set[tuple[bytes, bool]]] = {}
        for key in files:
            for depth in range(len(key)):
                entry = (tlv.component_value(key[depth]), depth < len(key) - 1)
                children.setdefault(key[:depth], set()).add(entry)
        self.dirs = {key: sorted(entries) for key, entries in children.items()}
        self.roots = sorted({key[0] for key in files})

    def __len__(self) -> int:
        return len(self.files)


class MappedProducer(Producer):
    """Serves the names of a :class:`NameTable` (files below ``root``), each under itself.

    Hostile names cannot reach other files: only exact names of the table are served, and the
    file each maps to must still resolve inside ROOT when it is opened. The publisher key is
    served under every root: ``<root>/32=key/<key id>``, the KeyLocator of the metadata of the
    names below that root.
    """

    def __init__(self, root: str, table: NameTable, **kwargs: Any) -> None:
        super().__init__(root, [], **kwargs)
        self.table = table
        self.changed: set[FileKey] = set()  # file versions found to hold unpublished content

    def update(self, table: NameTable) -> None:
        """Serve ``table`` from now on (any thread); new roots get registered."""
        old_roots = self.table.roots
        self.table = table
        if table.roots != old_roots:
            self.registrations_changed = True

    def registrations(self) -> list[list[bytes]]:
        return [[root] for root in self.table.roots]

    def resolve(self, path_comps: list[bytes]) -> tuple[bytes, os.stat_result]:
        plain_parts(path_comps)  # the same refusals as a directory tree, before any lookup
        key = tuple(path_comps)
        table = self.table
        path = table.files.get(key)
        if path is not None:
            real, st = self._inside(path)
            if not stat.S_ISREG(st.st_mode):
                raise NotServed("not a regular file")
            if table.sizes.get(key, st.st_size) != st.st_size:
                raise NotServed("the file changed since it was published")
            return real, st
        if key in table.dirs and key:
            fields = (stat.S_IFDIR | 0o555, 0, 0, 1, 0, 0, 0, 0, table.version // 10**9, 0)
            times = {"st_mtime_ns": table.version, "st_ctime_ns": table.version}
            return _VIRTUAL + b"".join(key), os.stat_result(fields, times)
        raise NotServed("not found")

    def _object(self, path_comps: list[bytes], listing: bool, version: int) -> _Object:
        """As a tree's, and a file's content is checked against the published SHA-256 as soon
        as its digest is known (at once up to INLINE_HASH_MAX, else once hashed in the
        background): a file changed in place, its size and mtime kept, is not served."""
        obj = super()._object(path_comps, listing, version)
        if obj.payload is None:  # a file, not a listing
            digest = self.hashes.lookup(obj.key)
            if digest is None and obj.size <= INLINE_HASH_MAX:
                digest = self.hashes.compute(obj.key)
            self._verify(path_comps, obj, digest)
        return obj

    def _verify(self, path_comps: list[bytes], obj: _Object, digest: bytes | None) -> None:
        key = tuple(path_comps)
        published = self.table.sha256s.get(key)
        if digest is None or published is None or digest == published:
            return
        self._forget(obj.versioned)  # no segment from the fast path either
        if obj.key not in self.changed:
            self.changed.add(obj.key)
            self.stats["changed"] += 1
            log.warning(
                "not serving %s: its content (sha256 %s) is not the published one (%s); "
                "publish it again if the change is meant",
                ndnname.to_uri(list(key)), digest.hex(), published.hex(),
            )  # fmt: skip
        raise NotServed("the file changed since it was published")

    def _list(self, directory: bytes) -> list[tuple[bytes, bool]]:
        if not directory.startswith(_VIRTUAL):
            raise NotServed("not a directory")
        key = tuple(tlv.split_components(directory[len(_VIRTUAL) :]))
        return list(self.table.dirs.get(key, []))

    def _dispatch(self, interest: tlv.InterestPacket, rel: list[bytes]) -> bytes | None:
        if len(rel) == 3 and rel[1] == KEY_KEYWORD:
            if self.key is None or rel[0] not in self.table.roots:
                raise NotServed("no such key")
            if rel[2] != tlv.generic(self.key.key_id):
                raise NotServed("no such key")
            meta = tlv.meta_info(tlv.CT_KEY, KEY_FRESHNESS_MS)
            return self._sign(interest.name_value, meta, self.key.public)
        return super()._dispatch(interest, rel)

    def _sign(self, name: bytes, meta: bytes, content: bytes) -> bytes:
        if self.key is None:
            return tlv.data_digest(name, meta, content)
        root = tlv.split_components(name)[0]
        key_name = root + KEY_KEYWORD + tlv.generic(self.key.key_id)
        info = tlv.signature_info(tlv.SIG_ED25519, key_name)
        return tlv.signed_data(name, meta, content, info, self.key.sign)
