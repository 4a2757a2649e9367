"""Errors the service turns into clear HTTP answers (never a 500 for bad input).

CatalogError            400 and friends, with a message and optional extra fields
├── UnknownFacetError   400, lists the valid facets
├── NotFoundError       404
├── ConflictError       409 (a name another site of the federation holds)
├── InvalidInputError   422 (a parameter that passed its type check but makes no sense)
├── InvalidInputError   422 (a parameter that passed its type check but makes no sense)
├── BatchTooLargeError  413 ``batch-too-large``: a publish request over the stated limits
└── UnavailableError    503 with Retry-After (too busy now, or the database does not answer)
"""

from __future__ import annotations

from typing import Any


class CatalogError(Exception):
    status = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        return {"detail": self.message, **self.extra}


class UnknownFacetError(CatalogError):
    def __init__(self, key: str, valid: list[str]) -> None:
        super().__init__(
            f"unknown facet or parameter {key!r}; valid facets: {', '.join(valid) or '(none yet)'}",
            valid_facets=valid,
        )


class NotFoundError(CatalogError):
    status = 404


class ConflictError(CatalogError):
    """A site claims a name another site holds (docs/federation.md): refused, never merged."""

    status = 409

    def __init__(self, name: str, held_by: str | None, claimed_by: str | None) -> None:
        super().__init__(
            f"{name} is held by site {held_by!r}; site {claimed_by!r} cannot replace or retract "
            "it (a conflict: see GET /api/v1/conflicts)",
            held_by=held_by,
        )
        self.name = name
        self.held_by = held_by
        self.claimed_by = claimed_by


class InvalidInputError(CatalogError):
    status = 422


class BatchTooLargeError(CatalogError):
    """A publish request above the limits ``GET /limits`` states: not a bad record. The answer
    says the limits again (``max_records``, ``max_bytes``) so the publisher sends smaller
    batches of the same records."""

    status = 413

    def __init__(self, message: str, *, max_records: int, max_bytes: int) -> None:
        super().__init__(
            message, code="batch-too-large", max_records=max_records, max_bytes=max_bytes
        )


class UnavailableError(CatalogError):
    status = 503

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after
