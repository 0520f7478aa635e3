"""The agent card: what ``/.well-known/agent-card.json`` says about the served agent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT

if TYPE_CHECKING:
    from tether.agent import Agent

RPC_PATH: Final = "/a2a"
REST_PATH: Final = "/a2a/rest"
SCHEME: Final = "bearer"
DESCRIPTION_MAX: Final = 1000


def build_card(
    agent: Agent, url: str, *, version: str, given: list[dict[str, Any]] | None = None
) -> AgentCard:
    """The card of ``agent`` served at ``url`` (the server's base URL): one skill per
    tool (one ``respond`` skill without tools), the JSON-RPC interface at ``url + /a2a``
    (first: preferred) and the HTTP+JSON one at ``url + /a2a/rest``, streaming, bearer
    tokens. ``given`` skills (checked by :func:`tether.a2a.skills.load_skills`) replaces the
    skills made from the tools."""
    name = agent.name or "tether agent"
    prompt = (agent.system_prompt or "").strip()
    description = prompt[:DESCRIPTION_MAX] or f"{name}: a governed tether agent"
    skills = []
    for spec in agent.tool_specs if given is None else ():
        tool_name = str(spec.get("name", ""))
        skills.append(
            AgentSkill(
                id=tool_name,
                name=tool_name,
                description=str(spec.get("description") or tool_name)[:DESCRIPTION_MAX],
                tags=["tool"],
            )
        )
    if given is not None:
        skills = [AgentSkill(**skill) for skill in given]
    if not skills:  # the card needs one skill: the agent's own answer
        skills.append(AgentSkill(id="respond", name=name, description=description, tags=["chat"]))
    requirement = SecurityRequirement()
    requirement.schemes[SCHEME]  # present with no scopes: the bearer scheme is required
    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(
                url=url.rstrip("/") + RPC_PATH,
                protocol_binding="JSONRPC",
                protocol_version=PROTOCOL_VERSION_CURRENT,
            ),
            AgentInterface(
                url=url.rstrip("/") + REST_PATH,
                protocol_binding="HTTP+JSON",
                protocol_version=PROTOCOL_VERSION_CURRENT,
            ),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        security_schemes={
            SCHEME: SecurityScheme(
                http_auth_security_scheme=HTTPAuthSecurityScheme(
                    scheme="Bearer",
                    bearer_format="tether_<key id>_<secret> (tether approvers add NAME --role invoke)",
                )
            )
        },
        security_requirements=[requirement],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=skills,
    )
