"""Where a bulk publish's CPU goes, per record, measured in one quiet process.

The HTTP publish (bench/catalog.py) runs three processes side by side on the machine's cores,
so its figures move with anything else running. This benchmark runs the same two halves one
after the other, in this process, and times each with the CPU clock of its thread:

1. **preparing**: what the server's preparing process does with a ``POST /publish`` body
   (``loader.prepare_request_dumped``: JSON, validation, ``ingest.prepare``, marshal), then
   the same phases one by one (free-text documents, tree deltas, facet JSON);
2. **writing**: what the server does with the prepared batch (``RequestBatch.loads``, then
   ``ingest.publish`` and the commit on a fresh SQLite database), with each bulk statement of
   :class:`ndnsci_catalog.bulk.Writer` timed apart; and the bytes the writes and reads moved
   (``/proc/self/io``: a batch of random names dirties pages all over the name index and the
   tree, and each commit writes them to the WAL again).

The records are bench/catalog.py's, cut into requests of ``--request`` records (the server's
``max_publish_records`` by default). Prints one figure per line, in µs of CPU per record.

    .venv/bin/python bench/catalog_write.py [--records 1000000] [--request 50000]
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from catalog import records  # noqa: E402
from ndnsci_catalog import bulk, ingest, loader  # noqa: E402
from ndnsci_catalog import records as parsing  # noqa: E402
from ndnsci_catalog.config import Settings  # noqa: E402
from ndnsci_catalog.database import make_engine, make_sessionmaker  # noqa: E402
from ndnsci_catalog.migrate import upgrade  # noqa: E402

#: the bulk statements of a publish, timed apart
WRITER_METHODS = (
    "existing", "value_ids", "insert_values", "insert_history", "delete_fulltext",
    "insert_files", "insert_new_files", "delete_files_from", "update_files", "insert_fulltext",
    "insert_changes", "insert_changes_of_files_from", "add_tree_counts",
)  # fmt: skip


def cpu() -> float:
    return time.thread_time()


def io_bytes() -> dict[str, int]:
    fields = (line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return {key: int(value) for key, value in fields}


def timed_writer(spent: collections.defaultdict[str, float]) -> None:
    """Wrap each bulk statement of the SQLite writer with a CPU clock."""

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed(self: bulk.Writer, *args: Any, **kwargs: Any) -> Any:
            started = cpu()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[name] += cpu() - started

        return timed

    for name in WRITER_METHODS:
        setattr(bulk.Writer, name, wrap(name, getattr(bulk.Writer, name)))


def prepare_phases(body: bytes) -> dict[str, float]:
    """The preparing process's phases for one body, in CPU seconds."""
    spent: dict[str, float] = {}
    started = cpu()
    parsed = parsing.parse_lines(body.split(b"\n"))
    spent["JSON and validation"] = cpu() - started
    rs = parsed.records
    started = cpu()
    for r in rs:
        ingest._document(r)  # compiled for a record without metadata (ndnsci built with it)
    spent["  of prepare: free-text documents"] = cpu() - started
    started = cpu()
    parents: dict[str, int] = {}
    for r in rs:
        parent = r.name.rpartition("/")[0]
        parents[parent] = parents.get(parent, 0) + 1
    ingest._tree_rows(parents)
    spent["  of prepare: tree deltas"] = cpu() - started
    dump_facets = bulk.flat_json_encoder()
    started = cpu()
    for r in rs:
        dump_facets(r.facets)
    spent["  of prepare: facets as JSON"] = cpu() - started
    started = cpu()
    prepared = ingest.prepare(rs, lines=parsed.lines)
    spent["prepare"] = cpu() - started
    started = cpu()
    loader.RequestBatch(prepared, []).dumps()
    spent["marshal"] = cpu() - started
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--request", type=int, default=Settings().max_publish_records)
    args = parser.parse_args()
    n, step = args.records, args.request
    recs = records(n, random.Random(7))
    bodies = [
        "".join(json.dumps(r) + "\n" for r in recs[i : i + step]).encode()
        for i in range(0, n, step)
    ]
    del recs
    gc.disable()  # as in the preparing process and the loader: a batch makes no cycles

    def per_record(seconds: float) -> str:
        return f"{seconds * 1e6 / n:.1f} µs"

    print(f"records: {n:,} in requests of {step:,}")
    started = cpu()
    dumped = [loader.prepare_request_dumped(body, False) for body in bodies]
    print(f"preparing, whole (prepare_request_dumped): {per_record(cpu() - started)}")
    phases: collections.defaultdict[str, float] = collections.defaultdict(float)
    for body in bodies:
        for phase, seconds in prepare_phases(body).items():
            phases[phase] += seconds
    for phase, seconds in phases.items():
        print(f"preparing, {phase}: {per_record(seconds)}")
    del bodies

    spent: collections.defaultdict[str, float] = collections.defaultdict(float)
    timed_writer(spent)
    with tempfile.TemporaryDirectory(prefix="ndnsci-bench-", dir="/var/tmp") as tmp:
        url = f"sqlite:///{tmp}/catalog.db"
        upgrade(url)
        engine = make_engine(url, pool_size=1)
        sessions = make_sessionmaker(engine)
        unmarshal = commit = total = 0.0
        moved = io_bytes()
        wall = time.monotonic()
        for blob in dumped:
            started = cpu()
            batch = loader.RequestBatch.loads(blob)
            unmarshal += cpu() - started
            with sessions() as session:
                assert batch.prepared is not None
                ingest.publish(session, batch.prepared)
                committing = cpu()
                session.commit()
                commit += cpu() - committing
            total += cpu() - started
        wall = time.monotonic() - wall
        after = io_bytes()
        engine.dispose()
    print(f"writing, whole: {per_record(total)} ({n / wall:,.0f} records/s of wall time)")
    print(f"writing, unmarshal: {per_record(unmarshal)}")
    for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        if seconds:
            print(f"writing, {name}: {per_record(seconds)}")
    print(f"writing, commit: {per_record(commit)}")
    rest = total - unmarshal - commit - sum(spent.values())
    print(f"writing, the rest (Python): {per_record(rest)}")
    for key, label in (("wchar", "written"), ("rchar", "read")):
        print(f"writing, bytes {label}: {(after[key] - moved[key]) / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
