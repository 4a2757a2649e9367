"""The name tree: autocomplete (ndn-atmos style) and browsing, from ``tree_nodes`` and ``files``.

A directory-like node knows how many files are under it and how many directly under it
(``leaves``); files directly under a node are read from the ``files`` name index only when
``leaves`` says there are some.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from ndnsci_catalog.errors import InvalidInputError, NotFoundError
from ndnsci_catalog.models import File, TreeNode

_HIGHEST = "\U0010ffff"


def _check_prefix(prefix: str, label: str) -> None:
    if not prefix.startswith("/"):
        raise InvalidInputError(f"{label} must start with '/', got {prefix!r}")
    if any(ord(c) < 32 for c in prefix):
        raise InvalidInputError(f"{label} must not contain control characters")


def autocomplete(session: Session, prefix: str, limit: int) -> list[dict[str, Any]]:
    """Next components under ``prefix`` (which may end inside a component), with counts."""
    _check_prefix(prefix, "prefix")
    parent, _, partial = prefix.rpartition("/")
    nodes = session.execute(
        select(TreeNode.component, TreeNode.files)
        .where(
            TreeNode.parent == parent,
            TreeNode.component >= partial,
            TreeNode.component < partial + _HIGHEST,
        )
        .order_by(TreeNode.component)
        .limit(limit)
    ).all()
    completions = [
        {"component": c, "name": f"{parent}/{c}", "count": n, "leaf": False} for c, n in nodes
    ]
    if len(completions) < limit and _has_leaves(session, parent):
        completions += _leaves(session, parent, partial, limit - len(completions), 0)
        completions.sort(key=lambda c: str(c["component"]))
    return completions


def browse(session: Session, path: str, limit: int, offset: int) -> dict[str, Any]:
    """One level of the tree: the node's count and a page of its children (directories first)."""
    _check_prefix(path, "path")
    path = path.rstrip("/")
    if path:
        node = _node(session, path)
        if node is None:
            raise NotFoundError(f"no names under {path!r}")
        count = node.files
    else:
        count = int(
            session.scalar(select(func.sum(TreeNode.files)).where(TreeNode.parent == "")) or 0
        )
    n_dirs = int(session.scalar(select(func.count()).where(TreeNode.parent == path)) or 0)
    children = [
        {"component": c, "name": f"{path}/{c}", "count": n, "leaf": False}
        for c, n in session.execute(
            select(TreeNode.component, TreeNode.files)
            .where(TreeNode.parent == path)
            .order_by(TreeNode.component)
            .limit(limit)
            .offset(offset)
        )
    ]
    if len(children) < limit and _has_leaves(session, path):
        children += _leaves(session, path, "", limit - len(children), max(0, offset - n_dirs))
    return {"path": path or "/", "count": count, "children": children}


def _node(session: Session, path: str) -> TreeNode | None:
    parent, _, component = path.rpartition("/")
    return session.get(TreeNode, (parent, component))


def _has_leaves(session: Session, path: str) -> bool:
    if not path:
        return False
    node = _node(session, path)
    return node is not None and node.leaves > 0


def _leaves(
    session: Session, parent: str, partial: str, limit: int, offset: int
) -> list[dict[str, Any]]:
    low = f"{parent}/{partial}"
    deeper = parent.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%/%"
    rows = session.scalars(
        select(File.name)
        .where(
            and_(File.name >= low, File.name < low + _HIGHEST),
            File.name.not_like(deeper, escape="\\"),
        )
        .order_by(File.name)
        .limit(limit)
        .offset(offset)
    )
    return [
        {"component": name.rsplit("/", 1)[1], "name": name, "count": 1, "leaf": True}
        for name in rows
    ]
