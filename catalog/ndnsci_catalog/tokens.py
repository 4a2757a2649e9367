"""Publish tokens: random bearer secrets, stored only as SHA-256 hashes, optionally expiring.

Times are stored as the fixed-width UTC text of :func:`ndnsci_catalog.ingest.now`, so they
compare as text on both backends.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from ndnsci_catalog.ingest import now
from ndnsci_catalog.models import Token, table

PREFIX = "ndnsci_"
_DURATION = re.compile(r"(\d{1,6})([hdw])\Z")
_UNITS = {"h": dt.timedelta(hours=1), "d": dt.timedelta(days=1), "w": dt.timedelta(weeks=1)}


class TokenRefused(Exception):
    """The token is unknown or expired (``str()`` says which)."""


@dataclass(frozen=True)
class TokenInfo:
    name: str
    created_at: str
    expires_at: str | None

    def expired(self, at: str | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (at or now())

    def to_dict(self) -> dict[str, str | bool | None]:
        return {"name": self.name, "created_at": self.created_at,
                "expires_at": self.expires_at, "expired": self.expired()}  # fmt: skip


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def expiry(text: str, start: dt.datetime | None = None) -> str:
    """``'90d'``, ``'12h'``, ``'2w'`` from now, or a date ``'2027-01-31'`` (UTC midnight), as
    stored; ValueError saying what is accepted otherwise."""
    start = start or dt.datetime.now(dt.UTC)
    duration = _DURATION.match(text.strip())
    if duration:
        when = start + int(duration[1]) * _UNITS[duration[2]]
    else:
        try:
            when = dt.datetime.combine(dt.date.fromisoformat(text.strip()), dt.time(), dt.UTC)
        except ValueError:
            raise ValueError(
                f"expiry {text!r} is neither a duration such as 90d, 12h or 2w nor a date "
                "such as 2027-01-31"
            ) from None
    if when <= start:
        raise ValueError(f"expiry {text!r} is in the past")
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def create_token(session: Session, name: str, expires_at: str | None = None) -> str:
    """A new token called ``name`` (shown once; the caller commits)."""
    token = PREFIX + secrets.token_urlsafe(32)
    session.execute(
        insert(table(Token)).values(
            name=name, token_hash=_hash(token), created_at=now(), expires_at=expires_at
        )
    )
    return token


def token_name(session: Session, token: str) -> str:
    """The name of a valid token; raises TokenRefused (unknown, or expired)."""
    if not token.startswith(PREFIX) or len(token) > 200:
        raise TokenRefused("invalid token")
    row = session.execute(
        select(Token.name, Token.expires_at).where(Token.token_hash == _hash(token))
    ).first()
    if row is None:
        raise TokenRefused("invalid token")
    if row.expires_at is not None and row.expires_at <= now():
        raise TokenRefused(f"the token {row.name!r} expired at {row.expires_at}")
    return str(row.name)


def list_tokens(session: Session) -> list[TokenInfo]:
    rows = session.execute(
        select(Token.name, Token.created_at, Token.expires_at).order_by(Token.name)
    )
    return [TokenInfo(name, created, expires) for name, created, expires in rows]


def revoke_token(session: Session, name: str) -> bool:
    """Delete the token called ``name`` (False: there is none; the caller commits)."""
    result: Any = session.execute(delete(Token).where(Token.name == name))
    return bool(result.rowcount)
