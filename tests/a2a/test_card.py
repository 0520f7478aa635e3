"""The agent card at /.well-known/agent-card.json."""

from __future__ import annotations

from a2a_serve import Served
from live_server import call


def test_the_card_names_the_agent_its_tools_the_rpc_url_streaming_and_bearer(server: Served):
    status, card = call("GET", server.url + "/.well-known/agent-card.json")
    assert status == 200
    assert card["name"] == "appender"
    assert card["description"] == "A test agent that appends lines to a file."
    assert {s["id"] for s in card["skills"]} == {"append_line", "nap", "clarify", "helper"}
    rpc, rest = card["supportedInterfaces"]
    assert rpc["url"] == server.url + "/a2a"
    assert rpc["protocolBinding"] == "JSONRPC"
    assert rpc["protocolVersion"] == "1.0"
    assert rest["url"] == server.url + "/a2a/rest"
    assert rest["protocolBinding"] == "HTTP+JSON"
    assert card["capabilities"]["streaming"] is True
    scheme = card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]
    assert scheme["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
