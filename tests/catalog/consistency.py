"""Invariants every committed catalog state satisfies (used after crashes and failed requests)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from ndnsci_catalog.bulk import unpack_ids


def check(session: Session) -> int:
    """Assert the derived tables agree with ``files``; returns the number of files."""
    one = lambda sql: session.execute(text(sql)).scalar_one()  # noqa: E731
    files = one("SELECT count(*) FROM files")
    assert one("SELECT files FROM catalog_state") == files
    assert one("SELECT coalesce(sum(size), 0) FROM files") == one("SELECT bytes FROM catalog_state")
    assert one("SELECT count(*) FROM files_fts") == files
    assert one("SELECT coalesce(sum(files), 0) FROM tree_nodes WHERE parent = ''") == files
    assert one("SELECT coalesce(max(seq), 0) FROM changes") == one(
        "SELECT last_seq FROM catalog_state"
    )
    # every packed value id names a facet value
    held: set[int] = set()
    for (blob,) in session.execute(text("SELECT packed FROM files")):
        held.update(unpack_ids(blob))
    stored = {i for (i,) in session.execute(text("SELECT id FROM facet_values"))}
    assert not held - stored, "files refer to facet values that do not exist"
    last_change: dict[str, tuple[str, int | None]] = {}
    for name, op, file_id in session.execute(
        text("SELECT name, op, file_id FROM changes ORDER BY seq")
    ):
        last_change[name] = (op, file_id)
    rows = {name: file_id for file_id, name in session.execute(text("SELECT id, name FROM files"))}
    published = {n: i for n, (op, i) in last_change.items() if op == "publish"}
    assert published == rows, "the change feed's last word on a name disagrees with files"
    return int(files)
