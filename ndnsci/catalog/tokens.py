"""Publish tokens: random bearer secrets, stored only as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from ndnsci.catalog.ingest import now
from ndnsci.catalog.models import Token, table

PREFIX = "ndnsci_"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def create_token(session: Session, name: str) -> str:
    """A new token called ``name`` (shown once; the caller commits)."""
    token = PREFIX + secrets.token_urlsafe(32)
    session.execute(
        insert(table(Token)).values(name=name, token_hash=_hash(token), created_at=now())
    )
    return token


def token_name(session: Session, token: str) -> str | None:
    """The name of a valid token, or None."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    return session.scalar(select(Token.name).where(Token.token_hash == _hash(token)))
