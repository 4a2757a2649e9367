"""Which files below a directory a catalog publishes, and under which names (``serve --catalog``).

Names are location independent, so the catalog does not keep where a file lies on the
publisher's disk (``ndnsci publish`` drops the path on purpose). The producer finds out the
way the publisher named the files in the first place: it walks ROOT, names every file exactly
as ``ndnsci publish`` does (same translators, same netCDF attributes), and keeps the files
whose name the catalog holds with the same size. A file the catalog does not hold, or holds
with another size, is not served; nor is one whose content is not the published SHA-256 (checked
by the producer before it signs the file's metadata: a file changed in place, its size and mtime
kept, is refused, logged and counted in the producer's ``changed``).

Files are named by the one describe step (``ndnsci/sdk/describe.py``) that ``ndnsci publish``,
``translate --metadata`` and ``scan`` use.

The table follows the catalog: the producer polls its change feed (``/api/v1/changes``) and,
when something was published or retracted, walks ROOT again; a file's name is kept across walks
while its size and mtime are unchanged, so only new files are read.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass, field

from ndnsci.ndn import name as ndnname
from ndnsci.ndn.producer import NameTable
from ndnsci.sdk.client import Catalog
from ndnsci.sdk.describe import Quarantined, describe_all, walk
from ndnsci.sdk.manifest import ManifestEntry

log = logging.getLogger(__name__)
CHUNK = 10_000  # names per manifest request


@dataclass
class Scan:
    """The outcome of one walk: what is served, and why the rest is not."""

    table: NameTable
    files: int = 0
    unnamed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    unpublished: int = 0
    size_mismatch: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{len(self.table)} published files served of {self.files} under the root "
            f"({self.unpublished} not in the catalog, {len(self.size_mismatch)} with another "
            f"size than published, {len(self.unnamed)} that cannot be named)"
        )


class PublishedFiles:
    """Maps the catalog's names to the files below ``root`` (see the module docstring)."""

    def __init__(self, root: str, catalog: Catalog, scheme: str = "auto", jobs: int = 1) -> None:
        self.root = os.path.realpath(root)
        self.catalog = catalog
        self.scheme = scheme
        self.jobs = jobs
        self.names: dict[str, tuple[int, int, str | None]] = {}  # path -> (size, mtime, name)
        self.reasons: dict[str, str] = {}  # path -> why it cannot be named
        self.last_seq = 0

    def scan(self) -> Scan:
        """Walk ROOT, name new files, ask the catalog which names it holds.

        Raises:
            CatalogError: the catalog cannot be asked (nothing is changed then).
        """
        self.last_seq = int(self.catalog.stats().get("last_seq") or 0)
        candidates, unnamed, count = self._named()
        published = self._published(list(candidates))
        files: dict[tuple[bytes, ...], bytes] = {}
        sizes: dict[tuple[bytes, ...], int] = {}
        sha256s: dict[tuple[bytes, ...], bytes] = {}
        scan = Scan(NameTable(files), files=count, unnamed=unnamed)
        for name, (path, size) in candidates.items():
            entry = published.get(name)
            if entry is None:
                scan.unpublished += 1
            elif entry.size is not None and entry.size != size:
                scan.size_mismatch.append(path)
            else:
                key = tuple(ndnname.from_uri(name))
                files[key] = os.fsencode(path)
                sizes[key] = size
                if entry.sha256:
                    with contextlib.suppress(ValueError):
                        sha256s[key] = bytes.fromhex(entry.sha256)
        scan.table = NameTable(files, sizes, sha256s=sha256s)
        return scan

    def changed(self) -> bool:
        """True when the catalog published or retracted something since the last scan."""
        return bool(self.catalog.changes(since=self.last_seq, limit=1).changes)

    def _named(self) -> tuple[dict[str, tuple[str, int]], list[tuple[str, str]], int]:
        """name -> (path, size) of every file that can be named, and the refusals."""
        paths = list(walk(self.root))
        present = set(paths)
        self.names = {p: v for p, v in self.names.items() if p in present}  # forget removed
        todo = [p for p in paths if not self._known(p)]
        # named as `ndnsci publish` names them; the header is not kept, no checksum
        for item in describe_all(todo, self.scheme, False, header=False, jobs=self.jobs):
            with contextlib.suppress(OSError):
                st = os.stat(item.path)
                name = None if isinstance(item, Quarantined) else item.name
                self.names[item.path] = (st.st_size, st.st_mtime_ns, name)
            if isinstance(item, Quarantined):
                self.reasons[item.path] = item.reason
        named: dict[str, tuple[str, int]] = {}
        unnamed = []
        for path in paths:
            size, _, name = self.names.get(path, (0, 0, None))
            if name is None:
                unnamed.append((path, self.reasons.get(path, "cannot be read")))
            elif name not in named:  # two copies of one file: the first is served
                named[name] = (path, size)
        return named, unnamed, len(paths)

    def _known(self, path: str) -> bool:
        entry = self.names.get(path)
        try:
            st = os.stat(path)
        except OSError:
            return False
        return entry is not None and entry[:2] == (st.st_size, st.st_mtime_ns)

    def _published(self, names: list[str]) -> dict[str, ManifestEntry]:
        found: dict[str, ManifestEntry] = {}
        for start in range(0, len(names), CHUNK):
            for entry in self.catalog.manifest(names[start : start + CHUNK]):
                if isinstance(entry, ManifestEntry):
                    found[entry.name] = entry
        return found


def table_names(table: NameTable) -> list[str]:
    """The names a table serves, as URIs (for logs and tests)."""
    return sorted(ndnname.to_uri(list(key)) for key in table.files)
