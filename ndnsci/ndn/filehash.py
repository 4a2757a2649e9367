"""Whole-file SHA-256 for the metadata, computed once per file version and cached on disk.

Hashing a 4 GiB file takes seconds, and the first byte must not wait for it. So the producer
asks :meth:`HashCache.lookup` when it answers a metadata Interest: a known digest is returned
at once (memory, then the sidecar cache on disk); an unknown one is queued for a background
thread (hashlib releases the GIL, so it runs on another core) and the metadata says "pending"
(``SHA256_PENDING``). The consumer asks the metadata again after the last segment.

A file version is keyed by its real path, size, mtime and inode change time (ctime): a file
rewritten in place with its mtime put back still gets a new ctime (no user can set it), so it
is hashed again and never announced with its old digest.

The on-disk cache lives in ``$NDNSCI_CACHE_DIR`` (else ``$XDG_CACHE_HOME/ndnsci``, else
``~/.cache/ndnsci``) under ``sha256/``, one small file per file version, so a restarted
producer does not hash again and the served tree is never written to.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
from pathlib import Path

from ndnsci.base.environment import settings

log = logging.getLogger(__name__)

# (real path, size, mtime ns, ctime ns): one version of a file's content
FileKey = tuple[bytes, int, int, int]


def file_key(path: bytes, st: os.stat_result) -> FileKey:
    return (path, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def cache_dir() -> Path:
    return settings().cache_dir


def sha256_file(path: bytes | str) -> bytes:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


class HashCache:
    """SHA-256 of file versions: memory, then disk, else computed in a background thread."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = (directory or cache_dir()) / "sha256"
        self._known: dict[FileKey, bytes] = {}
        self._queued: set[FileKey] = set()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[FileKey] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="sha256", daemon=True)
        self._worker.start()

    def lookup(self, key: FileKey) -> bytes | None:
        """The digest if known; otherwise None, and the computation is queued."""
        with self._lock:
            if key in self._known:
                return self._known[key]
        digest = self._read_disk(key)
        with self._lock:
            if digest is not None:
                self._known[key] = digest
                return digest
            if key not in self._queued:
                self._queued.add(key)
                self._queue.put(key)
        return None

    def compute(self, key: FileKey) -> bytes | None:
        """Hash now, in the caller's thread (for small files: cheaper than a "pending" round)."""
        try:
            digest = self._compute(key)
        except OSError as exc:
            log.warning("cannot hash %r: %s", key[0], exc)
            return None
        if digest is not None:
            with self._lock:
                self._known[key] = digest
        return digest

    def _disk_path(self, key: FileKey) -> Path:
        path, size, mtime_ns, ctime_ns = key
        stamp = f"{size}\0{mtime_ns}\0{ctime_ns}".encode()
        ident = hashlib.sha256(path + b"\0" + stamp).hexdigest()
        return self.directory / ident[:2] / ident[2:40]

    def _read_disk(self, key: FileKey) -> bytes | None:
        try:
            text = self._disk_path(key).read_text().strip()
            return bytes.fromhex(text) if len(text) == 64 else None
        except (OSError, ValueError):
            return None

    def _work(self) -> None:
        while True:
            key = self._queue.get()
            try:
                digest = self._compute(key)
            except OSError as exc:
                log.warning("cannot hash %r: %s", key[0], exc)
                digest = None
            with self._lock:
                self._queued.discard(key)
                if digest is not None:
                    self._known[key] = digest

    def _compute(self, key: FileKey) -> bytes | None:
        path = key[0]
        digest = sha256_file(path)
        if file_key(path, os.stat(path)) != key:
            return None  # changed while hashing: the next metadata request queues it again
        target = self._disk_path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(digest.hex() + "\n")
            os.replace(tmp, target)
        except OSError as exc:  # a read-only cache only costs a recomputation next time
            log.warning("cannot write the checksum cache %s: %s", target, exc)
        return digest
