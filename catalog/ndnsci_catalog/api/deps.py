"""Dependencies shared by the routes: the session and the publish token."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ndnsci_catalog.database import SessionDep
from ndnsci_catalog.errors import InvalidInputError
from ndnsci_catalog.schemas import ErrorResponse
from ndnsci_catalog.tokens import TokenRefused, token_name

_bearer = HTTPBearer(auto_error=False, description="a token from `ndnsci catalog token create`")


def require_token(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    """The name of the caller's valid token; 401 otherwise."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "a bearer token is required (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    try:
        return token_name(session, credentials.credentials)
    except TokenRefused as refused:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            str(refused),
            headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
        ) from None


TokenDep = Annotated[str, Depends(require_token)]


async def reject_nul(request: Request) -> None:
    """No text column can hold NUL (PostgreSQL refuses it): a clear 422 instead of a 500."""
    for key, value in request.query_params.multi_items():
        if "\x00" in key or "\x00" in value:
            raise InvalidInputError(f"query parameter {key!r} contains a NUL character")


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the error codes a route can answer."""
    return {code: {"model": ErrorResponse} for code in codes}
