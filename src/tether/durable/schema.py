"""Table definitions per dialect, as ordered migrations (index i upgrades version i to i+1).

Version 1: sessions and entries. Version 2: approvals, the audit chain (audit + audit_head)
and approvers. Version 3: approvals.server (the MCP server, or other source, of the tool).
Version 4 (memory): memory_entries, the long-term memory of ``tether.tools.memory``.
Version 5: the full-text index of session search (:mod:`tether.durable.session_search`),
backfilled from the entries already stored. STORE_SCHEMA grows with each migration.
"""

from __future__ import annotations

from typing import Final

_GENESIS: Final = "0" * 64

SESSION_COLS: Final = (
    "version, status, created_at, updated_at, metadata, snapshot_seq, "
    "lease_token, lease_holder, lease_host, lease_pid, lease_expires"
)
"""The session row's columns a store's ``load`` reads (both dialects)."""
ENTRY_COLS: Final = "seq, kind, data, at, schema"
"""An entry row's columns, in :func:`~tether.durable.entries.decode_entry`'s order."""


def _ops_tables(real: str, bigint: str) -> tuple[str, ...]:
    """Migration 2 (both dialects): approvals, the hash-chained audit log, approvers."""
    return (
        f"""CREATE TABLE approvals (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            interrupt_id TEXT NOT NULL,
            source TEXT NOT NULL,
            name TEXT NOT NULL,
            tool TEXT,
            arguments TEXT NOT NULL,
            args_sha256 TEXT,
            reason TEXT NOT NULL,
            requested_at {real} NOT NULL,
            expires_at {real},
            on_expiry TEXT NOT NULL,
            status TEXT NOT NULL,
            decided_by TEXT,
            decided_at {real},
            decision TEXT,
            edited_args TEXT,
            response TEXT,
            note TEXT
        )""",
        # at most one pending approval per (session, interrupt): request() is idempotent
        "CREATE UNIQUE INDEX approvals_one_pending ON approvals (session_id, interrupt_id) "
        "WHERE status = 'pending'",
        "CREATE INDEX approvals_by_status ON approvals (status, requested_at, id)",
        "CREATE INDEX approvals_by_session ON approvals (session_id, requested_at)",
        f"""CREATE TABLE audit (
            seq {bigint} PRIMARY KEY,
            at {real} NOT NULL,
            event TEXT NOT NULL,
            session_id TEXT,
            body TEXT NOT NULL,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        )""",
        "CREATE INDEX audit_by_session ON audit (session_id, seq)",
        f"""CREATE TABLE audit_head (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            seq {bigint} NOT NULL,
            hash TEXT NOT NULL
        )""",
        f"INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '{_GENESIS}')",
        f"""CREATE TABLE approvers (
            key_id TEXT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            roles TEXT NOT NULL,
            secret_sha256 TEXT NOT NULL,
            created_at {real} NOT NULL
        )""",
    )


def _memory_tables(real: str) -> tuple[str, ...]:
    """The memory migration (both dialects): memory_entries, keyed by (scope, id)."""
    return (
        f"""CREATE TABLE memory_entries (
            scope TEXT NOT NULL,
            id TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL,
            PRIMARY KEY (scope, id)
        )""",
    )


# Session search (migration 5). The backfill computes in SQL what
# tether.durable.session_search.entry_text computes for new entries: the text blocks and
# tool results of user, assistant and tool messages, joined by a space, cut at 32768
# characters. An entry whose JSON cannot be read is left out of the index.
_BLOCK_TEXT: Final = (
    "CASE WHEN b.type = 'object' THEN CASE json_extract(b.value, '$.type') "
    "WHEN 'text' THEN json_extract(b.value, '$.text') "
    "WHEN 'tool_result' THEN json_extract(b.value, '$.content') END END"
)
_SQLITE_SEARCH: Final = (
    """CREATE TABLE search_rows (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL,
        at REAL NOT NULL
    )""",
    "CREATE INDEX search_rows_by_session ON search_rows (session_id, seq)",
    "CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')",
    # CASE: SQLite may evaluate the conditions of a WHERE in any order
    "INSERT INTO search_rows (session_id, seq, role, at) SELECT session_id, seq, role, at "
    "FROM (SELECT session_id, seq, at, CASE WHEN json_valid(data) AND "
    "json_type(data, '$.message.content') = 'array' THEN json_extract(data, '$.message.role') "
    "END AS role FROM entries WHERE kind = 'message') "
    "WHERE role IN ('user', 'assistant', 'tool') ORDER BY session_id, seq",
    "INSERT INTO search_text (rowid, body) SELECT id, body FROM (SELECT r.id, substr(("
    f"SELECT group_concat({_BLOCK_TEXT}, ' ') FROM json_each(e.data, '$.message.content') b "
    f"WHERE b.type = 'object' AND typeof({_BLOCK_TEXT}) = 'text'), 1, 32768) AS body "
    "FROM search_rows r JOIN entries e ON e.session_id = r.session_id AND e.seq = r.seq) "
    "WHERE body <> ''",
    "DELETE FROM search_rows WHERE id NOT IN (SELECT rowid FROM search_text)",
)
_POSTGRES_SEARCH: Final = (
    """CREATE TABLE search_text (
        session_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        role TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        body TEXT NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
        PRIMARY KEY (session_id, seq)
    )""",
    "CREATE INDEX search_text_tsv ON search_text USING GIN (tsv)",
    # one entry at a time, so that an unreadable one (invalid JSON, a \u0000 escape that
    # text cannot hold) is skipped instead of failing the migration
    """DO $$
    DECLARE r record; m json; body text;
    BEGIN
      FOR r IN SELECT session_id, seq, at, data FROM entries WHERE kind = 'message' LOOP
        BEGIN
          m := r.data::json -> 'message';
          IF m ->> 'role' IN ('user', 'assistant', 'tool')
             AND json_typeof(m -> 'content') = 'array' THEN
            SELECT string_agg(CASE b ->> 'type' WHEN 'text' THEN b ->> 'text'
                                                ELSE b ->> 'content' END, ' ' ORDER BY n)
              INTO body
              FROM json_array_elements(m -> 'content') WITH ORDINALITY AS x(b, n)
              WHERE json_typeof(b) = 'object'
                AND json_typeof(CASE b ->> 'type' WHEN 'text' THEN b -> 'text'
                                WHEN 'tool_result' THEN b -> 'content' END) = 'string';
            IF coalesce(body, '') <> '' THEN
              INSERT INTO search_text (session_id, seq, role, at, body)
                VALUES (r.session_id, r.seq, m ->> 'role', r.at, left(body, 32768));
            END IF;
          END IF;
        EXCEPTION WHEN others THEN NULL;
        END;
      END LOOP;
    END $$""",
)

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
    _ops_tables("REAL", "INTEGER"),
    ("ALTER TABLE approvals ADD COLUMN server TEXT",),
    _memory_tables("REAL"),
    _SQLITE_SEARCH,
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
    _ops_tables("DOUBLE PRECISION", "BIGINT"),
    ("ALTER TABLE approvals ADD COLUMN server TEXT",),
    _memory_tables("DOUBLE PRECISION"),
    _POSTGRES_SEARCH,
)
