"""The OpenAPI 3.1 document of the API (hand-written; served at ``/openapi.json``)."""

from __future__ import annotations

from typing import Any

from tether import __version__

JSON = "application/json"
NDJSON = "application/x-ndjson"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(kind: str | list[str]) -> dict[str, Any]:
    kinds = [kind] if isinstance(kind, str) else kind
    return {"type": [*kinds, "null"]}


def _query(name: str, schema: dict[str, Any], text: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": text}


def _path(name: str, text: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string"},
        "description": text,
    }


def _responses(ok: str, ok_text: str, *codes: int) -> dict[str, Any]:
    texts = {
        400: "Invalid parameters or body",
        401: "No valid bearer token",
        403: "The token's roles do not allow this",
        404: "Not found",
        409: "Already decided (first decision wins) or the session moved on",
        413: "The body is too large",
        422: "The session journal cannot be read",
        503: "The store is busy or unavailable (see Retry-After), or the app factory failed",
    }
    out: dict[str, Any] = {"200": {"description": ok_text, "content": {JSON: {"schema": _ref(ok)}}}}
    for code in (401, 403, *codes, 503):
        schema = _ref("Conflict" if code == 409 else "Error")
        out[str(code)] = {"description": texts[code], "content": {JSON: {"schema": schema}}}
    return out


_ANY: dict[str, Any] = {}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"type": "string"}},
    },
    "Conflict": {
        "type": "object",
        "required": ["error", "decided_by", "status"],
        "properties": {
            "error": {"type": "string"},
            "decided_by": _nullable("string"),
            "status": {"type": "string"},
            "decided_at": _nullable("number"),
        },
    },
    "Approval": {
        "type": "object",
        "required": [
            "id",
            "session_id",
            "interrupt_id",
            "source",
            "name",
            "tool",
            "arguments",
            "reason",
            "requested_at",
            "expires_at",
            "on_expiry",
            "status",
            "age_seconds",
            "can_decide",
            "takes_edits",
            "actions",
            "may_have_run",
        ],
        "properties": {
            "id": {"type": "string"},
            "session_id": {"type": "string"},
            "interrupt_id": {"type": "string"},
            "source": {"type": "string"},
            "name": {"type": "string"},
            "tool": _nullable("string"),
            "server": {
                **_nullable("string"),
                "description": "the MCP server (or other source) offering the tool",
            },
            "arguments": {"type": "object", "description": "as shown to approvers (redacted)"},
            "args_sha256": _nullable("string"),
            "reason": _ANY,
            "requested_at": {"type": "number"},
            "expires_at": _nullable("number"),
            "on_expiry": {"enum": ["deny", "approve"]},
            "status": {"enum": ["pending", "approved", "denied", "expired"]},
            "decided_by": _nullable("string"),
            "decided_at": _nullable("number"),
            "decision": _nullable("string"),
            "edited_args": _nullable("object"),
            "response": _ANY,
            "note": _nullable("string"),
            "age_seconds": {"type": "number"},
            "can_decide": {"type": "boolean", "description": "the caller may decide it now"},
            "takes_edits": {"type": "boolean"},
            "actions": {
                "type": "array",
                "items": {"enum": ["approve", "deny", "retry", "skip", "abort"]},
                "description": "the decisions it takes: approve/deny, or for a call a crash "
                "left in doubt retry/skip/abort",
            },
            "may_have_run": {
                "type": "boolean",
                "description": "a call a crash left in doubt: it started, its side effect "
                "may have happened",
            },
            "links": {
                "type": "object",
                "required": ["timeline", "page"],
                "description": "the session's timeline: its JSON endpoint and the web page",
                "properties": {"timeline": {"type": "string"}, "page": {"type": "string"}},
            },
        },
    },
    "ApprovalList": {
        "type": "object",
        "required": ["approvals"],
        "properties": {"approvals": {"type": "array", "items": _ref("Approval")}},
    },
    "Decision": {
        "oneOf": [
            {
                "type": "object",
                "required": ["decision"],
                "additionalProperties": False,
                "properties": {
                    "decision": {"const": "approve"},
                    "note": {"type": "string", "maxLength": 2000},
                    "edited_args": {
                        "type": "object",
                        "description": "merged over the real arguments and validated against "
                        "the tool's schema (400 when invalid; needs tether serve --app)",
                    },
                },
            },
            {
                "type": "object",
                "required": ["decision"],
                "additionalProperties": False,
                "properties": {
                    "decision": {"const": "deny"},
                    "note": {"type": "string", "maxLength": 2000},
                },
            },
            {
                "type": "object",
                "required": ["decision"],
                "additionalProperties": False,
                "description": "a call left in doubt: run it again (its side effect may "
                "happen twice) or stop the run",
                "properties": {
                    "decision": {"enum": ["retry", "abort"]},
                    "note": {"type": "string", "maxLength": 2000},
                },
            },
            {
                "type": "object",
                "required": ["decision", "result"],
                "additionalProperties": False,
                "description": "a call left in doubt that ran: the model gets 'result' as "
                "its result and it is not run again",
                "properties": {
                    "decision": {"const": "skip"},
                    "result": _ANY,
                    "note": {"type": "string", "maxLength": 2000},
                },
            },
        ]
    },
    "SessionSummary": {
        "type": "object",
        "required": [
            "session_id",
            "status",
            "version",
            "created_at",
            "updated_at",
            "age_seconds",
            "idle_seconds",
            "model_calls",
            "tool_calls",
            "input_tokens",
            "output_tokens",
            "total_tokens",
            "pending_approvals",
        ],
        "properties": {
            "session_id": {"type": "string"},
            "status": {"type": "string"},
            "version": {"type": "integer"},
            "created_at": {"type": "number"},
            "updated_at": {"type": "number"},
            "age_seconds": {"type": "number", "minimum": 0},
            "idle_seconds": {"type": "number", "minimum": 0},
            "model_calls": {"type": "integer", "minimum": 0},
            "tool_calls": {"type": "integer", "minimum": 0},
            "input_tokens": {"type": "integer", "minimum": 0},
            "output_tokens": {"type": "integer", "minimum": 0},
            "total_tokens": {"type": "integer", "minimum": 0},
            "cost": {"type": ["string", "null"], "description": "USD, a decimal string"},
            "pending_approvals": {"type": "integer", "minimum": 0},
            "first_prompt": {"type": ["string", "null"], "maxLength": 120},
        },
    },
    "SessionList": {
        "type": "object",
        "required": ["sessions", "total", "offset", "limit"],
        "properties": {
            "sessions": {"type": "array", "items": _ref("SessionSummary")},
            "total": {"type": "integer", "minimum": 0},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1},
            "matches": {"type": "array", "maxItems": 20, "items": _ref("SearchHit")},
        },
    },
    "SearchHit": {
        "type": "object",
        "required": ["session_id", "seq", "at", "time", "role", "snippet", "rank"],
        "properties": {
            "session_id": {"type": "string"},
            "seq": {"type": "integer", "minimum": 1},
            "at": {"type": "number"},
            "time": {"type": "string"},
            "role": {"enum": ["user", "assistant", "tool"]},
            "snippet": {"type": "string", "maxLength": 240},
            "rank": {"type": "number"},
        },
    },
    "TimelineStep": {
        "type": "object",
        "required": [
            "index",
            "depth",
            "parent",
            "session_id",
            "kind",
            "title",
            "seq",
            "start",
            "end",
            "duration",
            "status",
            "failed",
            "call_id",
            "approval_id",
            "interrupt_id",
            "audit_seqs",
            "detail",
        ],
        "properties": {
            "index": {"type": "integer"},
            "depth": {
                "type": "integer",
                "minimum": 0,
                "description": "0 for the session's own rows; a sub-agent's rows are one deeper "
                "than the tool call that ran it",
            },
            "parent": _nullable("integer"),
            "session_id": {"type": "string", "description": "the session this row belongs to"},
            "kind": {
                "enum": [
                    "run",
                    "input",
                    "model",
                    "compaction",
                    "tool",
                    "verdict",
                    "hook",
                    "interrupt",
                    "suspend",
                    "wait",
                    "end",
                ]
            },
            "title": {"type": "string"},
            "seq": _nullable("integer"),
            "start": {"type": "number"},
            "end": {"type": "number"},
            "duration": {"type": "number", "minimum": 0},
            "status": {"type": "string"},
            "failed": {"type": "boolean"},
            "call_id": _nullable("string"),
            "approval_id": _nullable("string"),
            "interrupt_id": _nullable("string"),
            "audit_seqs": {"type": "array", "items": {"type": "integer"}},
            "detail": {"type": "object"},
        },
    },
    "Timeline": {
        "type": "object",
        "required": [
            "session_id",
            "status",
            "steps",
            "axis",
            "usage",
            "time_split",
            "lease_holder",
            "unreadable_entries",
        ],
        "properties": {
            "session_id": {"type": "string"},
            "status": {"type": "string"},
            "created_at": {"type": "number"},
            "updated_at": {"type": "number"},
            "start": {"type": "number"},
            "end": {"type": "number"},
            "lease_holder": _nullable("string"),
            "steps": {"type": "array", "items": _ref("TimelineStep")},
            "axis": {
                "type": "object",
                "required": ["places", "length"],
                "properties": {
                    "places": {
                        "type": "array",
                        "items": {"type": "object", "required": ["x", "w"]},
                    },
                    "length": {"type": "number"},
                },
            },
            "usage": {
                "type": "object",
                "required": ["calls", "total_tokens"],
                "properties": {
                    "calls": {"type": "array", "items": {"type": "object"}},
                    "total_tokens": {"type": "integer"},
                    "cost": {"type": ["string", "null"], "description": "USD, a decimal string"},
                },
            },
            "time_split": {
                "type": "object",
                "required": ["model", "tools", "waiting", "tether", "total"],
                "properties": {
                    k: {"type": "number", "minimum": 0}
                    for k in ("model", "tools", "waiting", "tether", "total")
                },
            },
            "unreadable_entries": {"type": "array", "items": {"type": "integer"}},
            "notes": {"type": "array", "items": {"type": "string"}},
        },
    },
    "Session": {
        "type": "object",
        "required": [
            "session_id",
            "status",
            "version",
            "waiting_for",
            "messages",
            "messages_total",
            "open_batch",
        ],
        "properties": {
            "session_id": {"type": "string"},
            "status": {"type": "string"},
            "version": {"type": "integer"},
            "created_at": {"type": "number"},
            "updated_at": {"type": "number"},
            "lease_holder": _nullable("string"),
            "waiting_for": {"type": "array", "items": {"type": "object"}},
            "messages_total": {"type": "integer"},
            "messages": {"type": "array", "items": {"type": "object"}},
            "open_batch": _nullable("array"),
        },
    },
    "AuditList": {
        "type": "object",
        "required": ["records"],
        "properties": {
            "records": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["seq", "at", "event", "data", "prev_hash", "hash"],
                    "properties": {
                        "seq": {"type": "integer"},
                        "at": {"type": "number"},
                        "event": {"type": "string"},
                        "session_id": _nullable("string"),
                        "data": {"type": "object"},
                        "prev_hash": {"type": "string"},
                        "hash": {"type": "string"},
                    },
                },
            }
        },
    },
    "Verify": {
        "type": "object",
        "required": ["ok", "checked", "first_bad", "head"],
        "properties": {
            "ok": {"type": "boolean"},
            "checked": {"type": "integer"},
            "first_bad": _nullable("object"),
            "head": {"type": "object"},
        },
    },
    "Me": {
        "type": "object",
        "required": ["name", "roles", "can"],
        "properties": {
            "name": {"type": "string"},
            "roles": {"type": "array", "items": {"type": "string"}},
            "can": {
                "type": "object",
                "required": ["inbox", "sessions", "audit"],
                "properties": {
                    "inbox": {
                        "type": "boolean",
                        "description": "read (and maybe decide) approvals",
                    },
                    "sessions": {"type": "boolean", "description": "sessions and timelines"},
                    "audit": {"type": "boolean", "description": "the audit log and its export"},
                },
            },
        },
    },
    "Events": {
        "type": "object",
        "required": ["cursor", "changed"],
        "properties": {"cursor": {"type": "string"}, "changed": {"type": "boolean"}},
    },
}


def document() -> dict[str, Any]:
    """The OpenAPI document (every operation needs a bearer token)."""
    approval_id = _path("approval_id", "The approval id (apr_...)")
    paths: dict[str, Any] = {
        "/api/approvals": {"get": {
            "operationId": "listApprovals",
            "summary": "Approvals across all sessions, oldest first (pending by default)",
            "parameters": [
                _query("session", {"type": "string"}, "Only this session"),
                _query("tool", {"type": "string"}, "Only this tool"),
                _query("status", {"enum": ["pending", "approved", "denied", "expired", "any"]}, "Status"),
                _query("limit", _LIMIT, "At most this many"),
            ],
            "responses": _responses("ApprovalList", "The approvals", 400),
        }},
        "/api/approvals/{approval_id}": {"get": {
            "operationId": "getApproval",
            "summary": "One approval",
            "parameters": [approval_id],
            "responses": _responses("Approval", "The approval", 404),
        }},
        "/api/approvals/{approval_id}/decision": {"post": {
            "operationId": "decideApproval",
            "summary": "Approve (optionally with edited arguments) or deny; a call left in "
            "doubt: retry, skip (with its result) or abort; the first decision wins",
            "parameters": [approval_id],
            "requestBody": {"required": True, "content": {JSON: {"schema": _ref("Decision")}}},
            "responses": _responses("Approval", "The decided approval", 400, 404, 409, 413),
        }},
        "/api/sessions": {"get": {
            "operationId": "listSessions",
            "summary": "Sessions, most recently active first, with counts (paged)",
            "parameters": [
                _query("status", {"enum": ["idle", "running", "suspended", "ready", "completed", "failed", "cancelled"]}, "Status"),
                _query("q", {"type": "string", "maxLength": 200}, "Only ids containing this text (case-sensitive); also adds `matches`: the redacted full-text hits of its words in the sessions' messages, best first"),
                _query("offset", {"type": "integer", "minimum": 0, "maximum": 2**31}, "Skip this many"),
                _query("limit", _LIMIT, "At most this many"),
            ],
            "responses": _responses("SessionList", "A page of sessions with their counts", 400),
        }},
        "/api/timeline/{session_id}": {"get": {
            "operationId": "sessionTimeline",
            "summary": "A session's steps in order (redacted), its token usage and time split",
            "parameters": [
                _path("session_id", "The session id, percent-encoded (it may contain '/')"),
            ],
            "responses": _responses("Timeline", "The timeline", 404, 422),
        }},
        "/api/sessions/{session_id}": {"get": {
            "operationId": "getSession",
            "summary": "A session: status, waiting interrupts and the (redacted) transcript",
            "parameters": [
                _path("session_id", "The session id, percent-encoded (it may contain '/')"),
                _query("tail", {"type": "integer", "minimum": 0, "maximum": 10000}, "Last N messages"),
            ],
            "responses": _responses("Session", "The session", 400, 404, 422),
        }},
        "/api/audit": {"get": {
            "operationId": "auditRecords",
            "summary": "Audit records in chain order (role auditor or admin)",
            "parameters": [
                _query("session", {"type": "string"}, "Only this session"),
                _query("after", {"type": "integer", "minimum": 0, "maximum": 2**53}, "After this seq"),
                _query("limit", {"type": "integer", "minimum": 1, "maximum": 10000}, "At most this many"),
            ],
            "responses": _responses("AuditList", "The records", 400),
        }},
        "/api/audit/verify": {"get": {
            "operationId": "auditVerify",
            "summary": "Walk the hash chain and report the first broken link",
            "responses": _responses("Verify", "The verification report"),
        }},
        "/api/audit/export": {"get": {
            "operationId": "auditExport",
            "summary": "Export audit records as JSONL with the chain status (role auditor or admin)",
            "description": (
                "Streams `application/x-ndjson`. The first line is `{\"chain\": <Verify>, "
                "\"session_id\", \"exported_at\", \"through_seq\"}`: the whole chain was verified "
                "just before the export, up to record `through_seq`. Every further line is one "
                "record (`seq`, `at`, `event`, `session_id`, `data`, `prev_hash`, `hash`), in "
                "chain order, of the session when `session` is given, up to `through_seq`. "
                "The header `X-Tether-Audit-Chain` is `ok` or `broken`."
            ),
            "parameters": [_query("session", {"type": "string"}, "Only this session's records")],
            "responses": {
                "200": {
                    "description": "The chain status line, then one record a line",
                    "headers": {
                        "X-Tether-Audit-Chain": {
                            "schema": {"enum": ["ok", "broken"]},
                            "description": "The verification result",
                        }
                    },
                    "content": {NDJSON: {"schema": {"type": "string"}}},
                },
                **{k: v for k, v in _responses("Error", "-").items() if k != "200"},
            },
        }},
        "/api/me": {"get": {
            "operationId": "whoAmI",
            "summary": "The caller's name and roles, and the views they may open",
            "responses": _responses("Me", "Who the token belongs to"),
        }},
        "/api/events": {"get": {
            "operationId": "inboxEvents",
            "summary": "Long poll: returns when the inbox differs from cursor `since` (or after `wait` s)",
            "parameters": [
                _query("since", {"type": "string"}, "The cursor last seen"),
                _query("wait", {"type": "number", "minimum": 0, "maximum": 25}, "Seconds to wait"),
            ],
            "responses": _responses("Events", "The current cursor", 400),
        }},
        "/openapi.json": {"get": {
            "operationId": "openapi",
            "summary": "This document",
            "responses": {
                "200": {"description": "OpenAPI document", "content": {JSON: {"schema": {"type": "object"}}}},
                **{k: v for k, v in _responses("Error", "-").items() if k != "200"},
            },
        }},
    }  # fmt: skip
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tether approvals server",
            "version": __version__,
            "description": "Approvals inbox, sessions and audit log of a tether store.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "tether_<key id>_<secret> from `tether approvers add`",
                }
            },
        },
    }
