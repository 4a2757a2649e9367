"""Errors the service turns into clear HTTP answers (never a 500 for bad input).

CatalogError            400 and friends, with a message and optional extra fields
├── UnknownFacetError   400, lists the valid facets
├── NotFoundError       404
├── InvalidInputError   422 (a parameter that passed its type check but makes no sense)
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


class InvalidInputError(CatalogError):
    status = 422


class UnavailableError(CatalogError):
    status = 503

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after
