"""Errors raised by session stores. Each message says what happened and what to do."""

from __future__ import annotations

import time

from tether.errors import TetherError


class StoreError(TetherError):
    """A session store operation failed."""


class StoreUnavailable(StoreError):
    """The database cannot be opened or reached (unwritable file, server down)."""


class StoreBusy(StoreError):
    """Another connection holds the database's write lock longer than the busy timeout;
    nothing was written. Retry in a moment."""

    retry_after: float = 1.0


class StoreFull(StoreError):
    """The disk (or the database's size limit) is full: the transaction was rolled back
    and nothing was written. Retry once space is freed."""

    retry_after: float = 30.0


class SessionConflict(StoreError):
    """Compare-and-set failed: another writer appended since ``expected_version``."""

    def __init__(self, session_id: str, expected_version: int, actual_version: int) -> None:
        self.session_id = session_id
        self.expected_version = expected_version
        self.actual_version = actual_version
        super().__init__(
            f"session {session_id!r} is at version {actual_version}, not {expected_version}: "
            "another writer appended to it. Reload the session (or resume it again) and retry."
        )


class SessionBusy(StoreError):
    """Another live holder has the session's lease."""

    def __init__(self, session_id: str, holder: str, expires_at: float) -> None:
        self.session_id = session_id
        self.holder = holder
        self.expires_at = expires_at
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(expires_at))
        super().__init__(
            f"session {session_id!r} is being run by {holder} (lease expires at {when}, "
            f"unix {expires_at:.3f}); wait for it to finish or for the lease to expire."
        )


class LeaseLost(StoreError):
    """The lease used for a write or renewal is no longer the session's live lease."""

    def __init__(self, session_id: str, detail: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"lease on session {session_id!r} was lost ({detail}); stop working on it and "
            "load the session again before continuing."
        )


class SchemaTooNew(StoreError):
    """The database was written by a newer tether than this one."""

    def __init__(self, where: str, found: int, known: int) -> None:
        self.found = found
        self.known = known
        super().__init__(
            f"{where} has store schema version {found}, but this tether knows only up to "
            f"version {known}; upgrade tether to open it."
        )


class CorruptEntry(StoreError):
    """A stored journal row cannot be decoded; other rows remain readable."""

    def __init__(self, session_id: str, seq: int, reason: str) -> None:
        self.session_id = session_id
        self.seq = seq
        self.reason = reason
        super().__init__(
            f"journal entry {seq} of session {session_id!r} is corrupt: {reason}. "
            f"Entries before {seq} can still be read (read_entries with until_seq={seq - 1})."
        )


class NotSerializable(StoreError, TypeError):
    """A value to be written is not plain JSON; nothing was written."""

    def __init__(self, message: str, *, path: str, what: str) -> None:
        self.path = path
        self.what = what
        super().__init__(message)


class SessionNotFound(StoreError, KeyError):
    """The session does not exist in the store."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"no session {session_id!r} in this store; create it first")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class AuditHeadCorrupt(StoreError):
    """The audit chain's head row (``audit_head``) is missing or unreadable.

    Nothing can be appended to the chain and it cannot be verified until the head is
    restored; the records themselves are untouched.
    """

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(
            f"the audit head (table audit_head, row id 1) is {problem}: the audit chain can "
            "neither be verified nor extended, and nothing was written. Restore the store from "
            "a backup (or compare `tether audit export` with an exported copy) before using it."
        )


class SchemaTooOld(StoreError):
    """A store opened read-only has an older schema than this tether reads; it is not
    upgraded, since a read-only open writes nothing."""

    def __init__(self, where: str, found: int, known: int) -> None:
        self.found = found
        self.known = known
        super().__init__(
            f"{where} has store schema version {found}, older than version {known} that this "
            "tether reads; it was opened read-only, so it is not upgraded. Open a writable copy "
            "once with a command that writes (an agent run, `tether serve` or `tether worker`) to "
            "upgrade it, or read it with the tether version that wrote it."
        )
