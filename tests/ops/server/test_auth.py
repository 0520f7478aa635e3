"""Every API route refuses requests without a valid token (401) and with the wrong role (403)."""

from __future__ import annotations

import re

import pytest
from live_server import ROUTES, call

from tether.ops.server import create_app
from tether.ops.server.auth import default_policy

DECISION = {"decision": "approve"}
INBOX = [r for r in ROUTES if r[1].startswith("/api/approvals")]
SESSIONS = [r for r in ROUTES if not r[1].startswith(("/api/approvals", "/api/audit"))]
AUDIT = [r for r in ROUTES if r[1].startswith("/api/audit")]
BAD_AUTH = {
    "missing": None,
    "empty bearer": "Bearer ",
    "not a token": "Bearer hunter2",
    "basic scheme": "Basic YWxpY2U6c2VjcmV0",
    "unknown key id": "Bearer tether_0123456789abcdef_" + "A" * 43,
}


def url_of(seeded, path: str) -> str:
    path = path.replace("{approval_id}", seeded.approval_id).replace("{session_id}", "pay-1")
    return seeded.url + path


def test_the_route_list_covers_every_route_of_the_app(tmp_path):
    from tether.durable import MemoryStore

    app = create_app(MemoryStore())
    served = {
        (m, re.sub(r":\w+}", "}", r.path))  # {session_id:path} is {session_id} in OpenAPI
        for r in app.routes
        for m in (r.methods or ())  # type: ignore[attr-defined]
        if m != "HEAD"
    }
    assert served - {("GET", "/"), ("GET", "/static/{name}")} == set(ROUTES)


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("how", BAD_AUTH)
def test_requests_without_a_valid_token_get_401(seeded_server, method, path, how):
    status, body = call(
        method,
        url_of(seeded_server, path),
        body=DECISION if method == "POST" else None,
        authorization=BAD_AUTH[how],
    )
    assert status == 401
    assert "bearer token" in body["error"]


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("which", ["removed approver", "wrong secret"])
def test_revoked_and_forged_tokens_get_401(seeded_server, method, path, which):
    token = seeded_server.tokens["removed" if which == "removed approver" else "admin"]
    if which == "wrong secret":
        token = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    body = DECISION if method == "POST" else None
    status, _ = call(method, url_of(seeded_server, path), token, body)
    assert status == 401


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_token_without_any_known_role_gets_403_everywhere(seeded_server, method, path):
    body = DECISION if method == "POST" else None
    status, answer = call(method, url_of(seeded_server, path), seeded_server.tokens["nobody"], body)
    assert status == 403
    assert "nobody" in answer["error"]


@pytest.mark.parametrize(("method", "path"), INBOX)
def test_auditors_do_not_read_the_inbox(seeded_server, method, path):
    body = DECISION if method == "POST" else None
    status, answer = call(
        method, url_of(seeded_server, path), seeded_server.tokens["auditor"], body
    )
    assert status == 403
    assert "viewer, approve:PATTERN or admin" in answer["error"]


@pytest.mark.parametrize(("method", "path"), SESSIONS)
@pytest.mark.parametrize("who", ["auditor", "viewer", "deleter", "admin"])
def test_every_known_role_reads_sessions_timelines_and_updates(seeded_server, method, path, who):
    """An auditor checks what the sessions did (the page's sessions, timeline and audit
    views); the inbox stays with the roles that read approvals."""
    path = path.replace("/api/events", "/api/events?wait=0")
    assert call(method, url_of(seeded_server, path), seeded_server.tokens[who])[0] == 200


def test_me_says_which_views_a_token_opens(seeded_server):
    got = {
        who: call("GET", seeded_server.url + "/api/me", seeded_server.tokens[who])[1]
        for who in ("auditor", "viewer", "admin")
    }
    assert got["auditor"] == {
        "name": "auditor",
        "roles": ["auditor"],
        "can": {"inbox": False, "sessions": True, "audit": True},
    }
    assert got["viewer"]["can"] == {"inbox": True, "sessions": True, "audit": False}
    assert got["admin"]["can"] == {"inbox": True, "sessions": True, "audit": True}


@pytest.mark.parametrize(("method", "path"), AUDIT)
@pytest.mark.parametrize("who", ["viewer", "alice", "deleter"])
def test_only_auditors_and_admins_read_the_audit_log(seeded_server, method, path, who):
    assert call(method, url_of(seeded_server, path), seeded_server.tokens[who])[0] == 403
    assert call(method, url_of(seeded_server, path), seeded_server.tokens["auditor"])[0] == 200
    assert call(method, url_of(seeded_server, path), seeded_server.tokens["admin"])[0] == 200


@pytest.mark.parametrize("who", ["viewer", "deleter", "auditor", "nobody"])
def test_deciding_needs_a_role_matching_the_tool(seeded_server, who):
    route = url_of(seeded_server, "/api/approvals/{approval_id}/decision")
    status, body = call("POST", route, seeded_server.tokens[who], {"decision": "deny"})
    assert status == 403
    assert who in body["error"]
    # nothing was decided; what the approver may do shows in the listing
    _, shown = call(
        "GET", url_of(seeded_server, "/api/approvals/{approval_id}"), seeded_server.tokens["alice"]
    )
    assert shown["status"] == "pending"
    assert shown["can_decide"] is True
    if who in ("viewer", "deleter"):
        _, theirs = call(
            "GET", url_of(seeded_server, "/api/approvals/{approval_id}"), seeded_server.tokens[who]
        )
        assert theirs["can_decide"] is False


def test_the_default_policy_matches_roles_against_tool_names():
    from tether.durable import Approval
    from tether.durable.approvers import Approver

    def approval(tool: str | None, name: str = "confirm:X") -> Approval:
        return Approval(
            "apr_1", "s", "i", "intervention", name, tool, {}, None, "", 0.0, None, "deny"
        )

    def who(*roles: str) -> Approver:
        return Approver("x", roles, "k", 0.0)

    assert default_policy(who("approve:*"), approval("transfer"))
    assert default_policy(who("admin"), approval(None))
    assert default_policy(who("viewer", "approve:delete_*"), approval("delete_file"))
    assert not default_policy(who("approve:delete_*"), approval("transfer"))
    assert not default_policy(who("approve:delete_*"), approval("Delete_file"))  # case-sensitive
    assert not default_policy(who("viewer", "auditor", "approve"), approval("transfer"))
    assert default_policy(who("approve:interrupt:*"), approval(None, "escalate"))
    assert not default_policy(who("approve:*x"), approval(None, "escalate"))


def test_a_broken_store_tells_a_caller_without_a_valid_token_nothing_about_it(tmp_path):
    from live_server import live_server

    from tether.durable import SQLiteStore

    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n" * 100)
    with live_server(create_app(SQLiteStore(junk), close_store=True)) as url:
        headers: dict[str, str] = {}
        status, body = call(
            "GET",
            url + "/api/approvals",
            authorization=BAD_AUTH["unknown key id"],
            headers_out=headers,
        )
    assert status == 503
    assert body == {"error": "the store cannot be read; the server log says why"}
    assert {k.lower(): v for k, v in headers.items()}["retry-after"] == "5"
