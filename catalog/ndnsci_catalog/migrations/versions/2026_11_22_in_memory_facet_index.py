"""in-memory facet index: packed value ids, change feed file ids, no file_facets

Filtering and facet counting moved from SQL to an in-memory index in each server process
(ndnsci_catalog.facetindex), which loads ``files.packed`` (size, time coverage as integers and
the facet value ids, replacing ``facet_ids``) in one scan and follows the change feed by
``changes.file_id``. ``file_facets`` (one row per file and facet, written on every
publish) is no longer read, ``facet_values.count`` is no longer kept (the index counts), and
``fingerprint`` gives way to comparing the stored record.
``tree_nodes`` is keyed by (parent, component), WITHOUT ROWID on SQLite: one B-tree to update
per prefix instead of three.

Revision ID: 2026_11_22_facet_index
Revises: 2026_11_22_initial
Create Date: 2026-11-22
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "2026_11_22_facet_index"
down_revision = "2026_11_22_initial"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
BATCH = 10_000
# the layout of files.packed at this revision (ndnsci_catalog.bulk; frozen copy)
HEAD = struct.Struct("<qqqqq")
NO_START, NO_END = 2**63 - 1, -(2**63)


def _time(value: str | None, missing: int) -> int:
    if value is None:
        return missing
    v = value
    return int(v[0:4] + v[5:7] + v[8:10] + v[11:13] + v[14:16] + v[17:19])


def _pack(*row: Any) -> bytes:
    file_id, seq, facet_ids, size, start, end = row
    ids = [int(i) for i in facet_ids.split(",")] if facet_ids else []
    size = -1 if size is None else size
    head = HEAD.pack(file_id, seq, size, _time(start, NO_START), _time(end, NO_END))
    return head + struct.pack(f"<{len(ids)}i", *ids)


def _unpack(_id: int, packed: bytes) -> str:
    body = bytes(packed)[HEAD.size :]
    return ",".join(map(str, struct.unpack(f"<{len(body) // 4}i", body)))


def _convert(sources: list[str], target: str, convert: Callable[..., Any]) -> None:
    """Fill ``files.<target>`` with ``convert(id, *sources)``, in batches of ids."""
    bind = op.get_bind()
    files = sa.table("files", *(sa.column(c) for c in ["id", *sources, target]))
    last = 0
    while True:
        rows = bind.execute(
            sa.select(files.c.id, *(files.c[c] for c in sources))
            .where(files.c.id > last)
            .order_by(files.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        bind.execute(
            files.update().where(files.c.id == sa.bindparam("b_id")),
            [{"b_id": row[0], target: convert(*row)} for row in rows],
        )
        last = rows[-1][0]


def upgrade() -> None:
    op.add_column("changes", sa.Column("file_id", sa.BigInteger()))
    op.execute(
        "UPDATE changes SET file_id = (SELECT f.id FROM files f WHERE f.name = changes.name) "
        "WHERE op = 'publish'"
    )
    op.add_column("files", sa.Column("packed", sa.LargeBinary()))
    _convert(["seq", "facet_ids", "size", "time_start", "time_end"], "packed", _pack)
    with op.batch_alter_table("files") as batch:
        batch.alter_column("packed", existing_type=sa.LargeBinary(), nullable=False)
        batch.drop_column("facet_ids")
        batch.drop_column("fingerprint")
    op.drop_table("file_facets")
    op.drop_index("ix_facet_values_key_count", "facet_values")
    with op.batch_alter_table("facet_values") as batch:
        batch.drop_column("count")
    _key_tree_nodes(("parent", "component"), with_rowid=False)


def _key_tree_nodes(key: tuple[str, ...], *, with_rowid: bool) -> None:
    """Re-key ``tree_nodes`` (the parent index goes: the key serves it, or comes back)."""
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint("pk_tree_nodes", "tree_nodes", type_="primary")
        if with_rowid:
            op.create_primary_key("pk_tree_nodes", "tree_nodes", list(key))
            op.create_index("ix_tree_nodes_parent_component", "tree_nodes", ["parent", "component"])
        else:
            op.drop_index("ix_tree_nodes_parent_component", "tree_nodes")
            op.create_primary_key("pk_tree_nodes", "tree_nodes", list(key))
        return
    columns = "path, parent, component, files, leaves"
    op.execute("ALTER TABLE tree_nodes RENAME TO tree_nodes_old")
    op.execute("DROP INDEX IF EXISTS ix_tree_nodes_parent_component")
    op.create_table(
        "tree_nodes",
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("parent", sa.String(), nullable=False),
        sa.Column("component", sa.String(), nullable=False),
        sa.Column("files", sa.BigInteger(), nullable=False),
        sa.Column("leaves", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(*key, name=op.f("pk_tree_nodes")),
        sqlite_with_rowid=with_rowid,
    )
    op.execute(f"INSERT INTO tree_nodes ({columns}) SELECT {columns} FROM tree_nodes_old")
    op.execute("DROP TABLE tree_nodes_old")
    if with_rowid:
        op.create_index("ix_tree_nodes_parent_component", "tree_nodes", ["parent", "component"])


def downgrade() -> None:
    _key_tree_nodes(("path",), with_rowid=True)
    op.add_column("facet_values", sa.Column("count", sa.BigInteger(), server_default="0"))
    op.create_index("ix_facet_values_key_count", "facet_values", ["key", "count"])
    # the fingerprint of the old schema cannot be recomputed here: an empty one makes the next
    # publish of each record a replacement (a history entry), never a lost record
    op.create_table(
        "file_facets",
        sa.Column("value_id", Id, nullable=False),
        sa.Column("file_id", Id, nullable=False),
        sa.PrimaryKeyConstraint("value_id", "file_id", name=op.f("pk_file_facets")),
        sqlite_with_rowid=False,
    )
    op.add_column("files", sa.Column("facet_ids", sa.String()))
    op.add_column("files", sa.Column("fingerprint", sa.String(64), server_default=""))
    _convert(["packed"], "facet_ids", _unpack)
    bind = op.get_bind()
    for file_id, packed in bind.execute(sa.text("SELECT id, facet_ids FROM files")).all():
        if packed:
            bind.execute(
                sa.text("INSERT INTO file_facets (value_id, file_id) VALUES (:v, :f)"),
                [{"v": int(v), "f": file_id} for v in packed.split(",")],
            )
    op.execute(
        "UPDATE facet_values SET count = "
        "(SELECT count(*) FROM file_facets f WHERE f.value_id = facet_values.id)"
    )
    with op.batch_alter_table("files") as batch:
        batch.alter_column("facet_ids", existing_type=sa.String(), nullable=False)
        batch.alter_column("fingerprint", existing_type=sa.String(64), nullable=False)
        batch.drop_column("packed")
    with op.batch_alter_table("changes") as batch:
        batch.drop_column("file_id")
