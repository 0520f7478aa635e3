"""Table definitions per dialect, as ordered migrations (index i upgrades version i to i+1).

Later tables (approvals, audit) are added as new migrations; STORE_SCHEMA grows with them.
"""

from __future__ import annotations

from typing import Final

SQLITE_MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            metadata TEXT NOT NULL,
            snapshot_seq INTEGER NOT NULL DEFAULT 0,
            lease_token TEXT,
            lease_holder TEXT,
            lease_host TEXT,
            lease_pid INTEGER,
            lease_expires REAL
        )""",
        "CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, id)",
        "CREATE INDEX sessions_by_status ON sessions (status, updated_at DESC, id)",
        """CREATE TABLE entries (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            schema INTEGER NOT NULL,
            at REAL NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
    ),
)

# Entry data and metadata are canonical JSON *text*: jsonb would reject "\u0000" in strings
# and re-encode numbers, so a value would not round-trip identically on every store.
# Cast to jsonb in ad-hoc queries (data::jsonb) when needed.
POSTGRES_MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    (
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            version BIGINT NOT NULL,
            status TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            metadata TEXT NOT NULL,
            snapshot_seq BIGINT NOT NULL DEFAULT 0,
            lease_token TEXT,
            lease_holder TEXT,
            lease_host TEXT,
            lease_pid INTEGER,
            lease_expires DOUBLE PRECISION
        )""",
        "CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, id)",
        "CREATE INDEX sessions_by_status ON sessions (status, updated_at DESC, id)",
        """CREATE TABLE entries (
            session_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            kind TEXT NOT NULL,
            schema INTEGER NOT NULL,
            at DOUBLE PRECISION NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        )""",
    ),
)
