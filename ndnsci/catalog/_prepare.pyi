"""Types of a publish's compiled preparing work (ndnsci/catalog/_prepare.c)."""

from collections.abc import Mapping

def tree_rows(parents: Mapping[str, int], /) -> list[tuple[str, str, int, int]] | None: ...
