"""Invariants every committed catalog state satisfies (used after crashes and failed requests)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session


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
    wrong = session.execute(
        text(
            "SELECT v.id FROM facet_values v LEFT JOIN "
            "(SELECT value_id, count(*) AS n FROM file_facets GROUP BY value_id) f "
            "ON f.value_id = v.id WHERE v.count != coalesce(f.n, 0)"
        )
    ).all()
    assert not wrong, f"facet counts disagree with file_facets for value ids {wrong[:5]}"
    orphans = one("SELECT count(*) FROM file_facets WHERE file_id NOT IN (SELECT id FROM files)")
    assert orphans == 0
    return int(files)
