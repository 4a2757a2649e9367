"""Types of a publish's compiled per-row work (catalog/ndnsci_catalog/_prepare.c)."""

from collections.abc import Mapping
from typing import Any

def tree_rows(parents: Mapping[str, int], /) -> list[tuple[str, str, int, int]] | None: ...
def new_rows(
    rows: list[tuple[Any, ...]],
    codes: list[tuple[int, int, int]],
    facet_ids: bytes,
    offsets: list[int],
    site_ref: bytes,
    first_id: int,
    first_seq: int,
    stamp: str,
    site: str | None,
    /,
) -> list[tuple[Any, ...]] | None: ...
def document(
    name: str,
    facets: dict[str, str | None],
    original: str | None,
    original_path: str | None,
    /,
) -> str | None: ...
