"""Durable sessions: the append-only journal and its stores (memory, SQLite, PostgreSQL).

Importing this package loads neither sqlite3 nor psycopg; each store imports its
driver when first used.
"""

from typing import TYPE_CHECKING, Any

from tether.durable.entries import ENTRY_SCHEMA, JOURNAL_KINDS, Entry, JournalKind, encode_json
from tether.durable.errors import (
    AuditHeadCorrupt,
    CorruptEntry,
    LeaseLost,
    NotSerializable,
    SchemaTooNew,
    SchemaTooOld,
    SessionBusy,
    SessionConflict,
    SessionNotFound,
    StoreBusy,
    StoreError,
    StoreFull,
    StoreUnavailable,
)

if TYPE_CHECKING:
    from tether.durable.approvals import (
        Approval,
        ApprovalConflict,
        ApprovalError,
        ApprovalNotFound,
        ApprovalStale,
        Redactor,
        args_sha256,
    )
    from tether.durable.approvers import Approver, ApproverExists, IssuedToken
    from tether.durable.audit import AuditEvent, AuditRecord, VerifyReport
    from tether.durable.memory import MemoryStore
    from tether.durable.postgres import PostgresStore
    from tether.durable.sqlite import SQLiteStore
    from tether.durable.store import (
        SESSION_STATUSES,
        STORE_SCHEMA,
        Lease,
        SessionRecord,
        SessionStatus,
        SessionSummary,
        Store,
    )

    def _conforms(m: MemoryStore, s: SQLiteStore, p: PostgresStore) -> tuple[Store, Store, Store]:
        return m, s, p  # mypy proves each store satisfies the protocol


# Stores, approvals and audit load on first use, so `import tether` stays fast.
_LAZY = {
    "tether.durable.approvals": (
        "Approval",
        "ApprovalConflict",
        "ApprovalError",
        "ApprovalNotFound",
        "ApprovalStale",
        "Redactor",
        "args_sha256",
    ),
    "tether.durable.approvers": ("Approver", "ApproverExists", "IssuedToken"),
    "tether.durable.audit": ("AuditEvent", "AuditRecord", "VerifyReport"),
    "tether.durable.memory": ("MemoryStore",),
    "tether.durable.postgres": ("PostgresStore",),
    "tether.durable.sqlite": ("SQLiteStore",),
    "tether.durable.store": (
        "SESSION_STATUSES",
        "STORE_SCHEMA",
        "Lease",
        "SessionRecord",
        "SessionStatus",
        "SessionSummary",
        "Store",
    ),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    import importlib

    if name == "redact_secrets":  # governance now: an alias for one release
        import warnings

        warnings.warn(
            "tether.durable.redact_secrets moved to tether.governance.masks; this alias "
            "leaves in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module("tether.governance.masks").redact_secrets
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.durable' has no attribute {name!r}")

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ENTRY_SCHEMA",
    "JOURNAL_KINDS",
    "SESSION_STATUSES",
    "STORE_SCHEMA",
    "Approval",
    "ApprovalConflict",
    "ApprovalError",
    "ApprovalNotFound",
    "ApprovalStale",
    "Approver",
    "ApproverExists",
    "AuditEvent",
    "AuditHeadCorrupt",
    "AuditRecord",
    "CorruptEntry",
    "Entry",
    "IssuedToken",
    "JournalKind",
    "Lease",
    "LeaseLost",
    "MemoryStore",
    "NotSerializable",
    "PostgresStore",
    "Redactor",
    "SQLiteStore",
    "SchemaTooNew",
    "SchemaTooOld",
    "SessionBusy",
    "SessionConflict",
    "SessionNotFound",
    "SessionRecord",
    "SessionStatus",
    "SessionSummary",
    "Store",
    "StoreBusy",
    "StoreError",
    "StoreFull",
    "StoreUnavailable",
    "VerifyReport",
    "args_sha256",
    "encode_json",
]
