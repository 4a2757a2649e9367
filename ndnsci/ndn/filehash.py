"""Whole-file SHA-256 for the metadata, computed once per file version and cached on disk.

Hashing a 4 GiB file takes seconds, and the first byte must not wait for it. So the producer
asks :meth:`HashCache.lookup` when it answers a metadata Interest: a known digest is returned
at once (memory, then the sidecar cache on disk); an unknown one is queued for a background
thread (hashlib releases the GIL, so it runs on another core) and the metadata says "pending"
(``SHA256_PENDING``). The consumer asks the metadata again after the last segment.

The on-disk cache lives in ``$NDNSCI_CACHE_DIR`` (else ``$XDG_CACHE_HOME/ndnsci``, else
``~/.cache/ndnsci``) under ``sha256/``, one small file per (real path, size, mtime), so a
restarted producer does not hash again and the served tree is never written to.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
from pathlib import Path

from ndnsci._settings import settings

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    return settings().cache_dir


def sha256_file(path: bytes | str) -> bytes:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


class HashCache:
    """SHA-256 of file versions: memory, then disk, else computed in a background thread."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = (directory or cache_dir()) / "sha256"
        self._known: dict[tuple[bytes, int, int], bytes] = {}
        self._queued: set[tuple[bytes, int, int]] = set()
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[bytes, int, int]] = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._work, name="sha256", daemon=True)
        self._worker.start()

    def lookup(self, path: bytes, size: int, mtime_ns: int) -> bytes | None:
        """The digest if known; otherwise None, and the computation is queued."""
        key = (path, size, mtime_ns)
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

    def compute(self, path: bytes, size: int, mtime_ns: int) -> bytes | None:
        """Hash now, in the caller's thread (for small files: cheaper than a "pending" round)."""
        key = (path, size, mtime_ns)
        try:
            digest = self._compute(key)
        except OSError as exc:
            log.warning("cannot hash %r: %s", path, exc)
            return None
        if digest is not None:
            with self._lock:
                self._known[key] = digest
        return digest

    def wait(self, path: bytes, size: int, mtime_ns: int, timeout: float) -> bytes | None:
        """Block until the digest is known (used by tests and ``serve --hash-first``)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            digest = self.lookup(path, size, mtime_ns)
            if digest is not None:
                return digest
            time.sleep(0.02)
        return None

    def _disk_path(self, key: tuple[bytes, int, int]) -> Path:
        path, size, mtime_ns = key
        ident = hashlib.sha256(path + b"\0" + f"{size}\0{mtime_ns}".encode()).hexdigest()
        return self.directory / ident[:2] / ident[2:40]

    def _read_disk(self, key: tuple[bytes, int, int]) -> bytes | None:
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

    def _compute(self, key: tuple[bytes, int, int]) -> bytes | None:
        path, size, mtime_ns = key
        digest = sha256_file(path)
        st = os.stat(path)
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
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
