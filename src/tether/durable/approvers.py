"""Approvers: people (or systems) allowed to decide approvals, with bearer tokens.

A token is ``tether_<key id>_<secret>``; only ``sha256(secret)`` is stored. Verifying
looks the row up by key id and compares the hashes in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Final, Protocol

from tether.durable.errors import StoreError
from tether.errors import ConfigurationError

TOKEN_PREFIX: Final = "tether_"
_TOKEN = re.compile(r"^tether_([0-9a-f]{16})_([A-Za-z0-9_-]{20,128})$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,99}$")


class ApproverExists(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"an approver named {name!r} already exists; remove it first "
            f"(tether approvers remove {name!r}) to issue a new token"
        )


@dataclass(frozen=True, slots=True)
class Approver:
    """A verified approver: their name and roles (what the server's policy checks)."""

    name: str
    roles: tuple[str, ...]
    key_id: str
    created_at: float


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """Returned once by :meth:`Approvers.add`: the bearer token is not stored anywhere."""

    approver: Approver
    token: str


def new_token() -> tuple[str, str, str]:
    """(token, key id, sha256 of the secret)."""
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    return f"{TOKEN_PREFIX}{key_id}_{secret}", key_id, secret_hash(secret)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_token(token: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed token, else None."""
    match = _TOKEN.match(token.strip()) if isinstance(token, str) else None
    return None if match is None else (match.group(1), match.group(2))


def matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(secret_hash(secret).encode(), stored_hash.encode())


def check_approver(name: str, roles: tuple[str, ...]) -> None:
    if not _NAME.match(name):
        raise ConfigurationError(
            f"approver name {name!r}: use 1-100 letters, digits, spaces or . _ @ - "
            "(starting with a letter or digit)"
        )
    if not roles or any(not r or "," in r or r != r.strip() for r in roles):
        raise ConfigurationError(
            f"give at least one role without commas or padding, got {list(roles)}"
        )


class Approvers(Protocol):
    """``store.approvers``."""

    async def add(self, name: str, roles: tuple[str, ...] | list[str]) -> IssuedToken: ...
    async def verify(self, token: str) -> Approver | None: ...
    async def all(self) -> list[Approver]: ...
    async def remove(self, name: str) -> bool: ...
