"""CTK harness: each vector's scripted model turns and mock tools on tether's real Agent loop.

The interceptors, resolver, composition and identity provider reach the agent
through the same constructors users call: ``AgentHooksHost(...)`` (what
``Agent(agent_hooks=[...], ...)`` builds) for field-based vectors and
``AgentHooksHost.from_declaration`` (the SDK loader,
``InterceptionEmitter.from_declaration_value``) for declaration vectors.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Executor
from typing import Any, ClassVar

from agent_hooks import (
    AgentContext,
    ApprovalResolver,
    CompositionConfig,
    EnforcementMode,
    HostRegistry,
    HostSurface,
    IdentityProvider,
    InterceptionRecord,
    Interceptor,
)
from agent_hooks.ctk import Capability, RunOutcome, RunRecord, Scenario, redact_paths
from agent_hooks.ctk.harness import ToolSpec

from tether import Agent, Limits, Message
from tether.control.agent_hooks import AgentHooksHost, tether_surface
from tether.control.agent_hooks.translate import text_of
from tether.errors import RunError
from tether.messages import TextBlock
from tether.models import ScriptedModel
from tether.tools import Tool, ToolContext

_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_OUTCOME = {"end_turn": RunOutcome.COMPLETED, "blocked": RunOutcome.BLOCKED}


def _nothing() -> None:
    """A mock tool (its schema is replaced by an open object)."""


class MockTool(Tool):
    """A vector's mock tool: any JSON arguments, the first matching behavior's value."""

    def __init__(self, spec: ToolSpec, log: list[dict[str, Any]]) -> None:
        super().__init__(_nothing, name=spec.name, description=f"mock tool {spec.name}")
        self.mock = spec
        self.log = log
        self.input_schema = {"type": "object", "additionalProperties": True}
        self._spec = {**self._spec, "input_schema": self.input_schema}

    def prepare(self, arguments: dict[str, Any] | str) -> dict[str, Any]:
        return dict(json.loads(arguments) if isinstance(arguments, str) else arguments)

    async def invoke(
        self,
        kwargs: dict[str, Any],
        context: ToolContext | None = None,
        executor: Executor | None = None,
    ) -> Any:
        self.log.append({"name": self.name, "args": dict(kwargs)})
        value, is_error = self.mock.invoke(dict(kwargs))
        if is_error:
            raise RuntimeError(value if isinstance(value, str) else json.dumps(value))
        return value


def _raising_provider(_ctx: AgentContext) -> str:
    raise RuntimeError("ctk scripted provider fault")


class TetherHarness:
    name = "tether"
    capabilities: ClassVar[frozenset[Capability]] = frozenset(
        {
            Capability.MODEL_CALLS,
            Capability.TOOL_CALLS,
            Capability.INT64_JSON,
            Capability.BIGINT_JSON,
            Capability.HOST_DECLARATION,
        }
    )
    # tether fails closed: a host error at the tool seam stops the run (AgentHooksHost's
    # default); TETHER_CTK_POSTURE=continue runs the kit against the other posture.
    tool_seam_host_error = os.environ.get("TETHER_CTK_POSTURE", "terminate")

    def __init__(self) -> None:
        self.agent: Agent | None = None
        self.scenario: Scenario | None = None
        self.records: list[InterceptionRecord] = []
        self.tool_log: list[dict[str, Any]] = []

    def host_surface(self) -> HostSurface:
        # The surface declarations resolve against: a declared host follows the posture its
        # declaration states, and the kit's declaration documents state `continue`.
        return tether_surface("continue")

    def setup(
        self,
        scenario: Scenario,
        interceptors: list[Interceptor],
        resolver: ApprovalResolver | None,
        mode: EnforcementMode,
        composition: CompositionConfig,
        identity_provider: str | None,
        redact_for_approval: list[str] | None = None,
    ) -> None:
        provider: str | IdentityProvider | None = identity_provider
        if identity_provider == "ctk-fault":
            provider = IdentityProvider("ctk-fault", _raising_provider)
        host = AgentHooksHost(
            interceptors,
            mode=mode.value,
            composition=composition,
            approval_resolver=resolver,
            identity_provider=provider,
            record_sink=self.records.append,
            tool_seam_host_error=self.tool_seam_host_error,
        )
        paths = list(redact_for_approval or [])
        if paths:
            host.emitter.set_approval_redactor(lambda ctx: redact_paths(ctx, paths))
        self._start(scenario, host)

    def setup_declared(
        self, scenario: Scenario, document: dict[str, Any], registry: HostRegistry
    ) -> None:
        # The loader's DeclarationError propagates: the runner records the refusal.
        host = AgentHooksHost.from_declaration(document, registry, record_sink=self.records.append)
        self._start(scenario, host)

    def _start(self, scenario: Scenario, host: AgentHooksHost) -> None:
        self.scenario = scenario
        turns: list[Any] = [
            {
                "text": r.content if isinstance(r.content, str) else "",
                "tool_calls": [
                    {"id": c["id"], "name": c["name"], "args": c.get("args", {})}
                    for c in r.tool_calls
                ],
                "stop_reason": _STOP.get(r.finish_reason, "end_turn"),
            }
            for r in scenario.model_script
        ]
        tools = [MockTool(spec, self.tool_log) for spec in scenario.tools.values()]
        self.agent = Agent(
            model=ScriptedModel(turns),
            tools=tools,
            agent_hooks=host,
            store=None,
            limits=Limits(turns=max(1, len(turns))),
        )

    async def run(self) -> RunRecord:
        assert self.agent is not None
        assert self.scenario is not None
        given = self.scenario.input
        content = given["content"]
        text = content if isinstance(content, str) else json.dumps(content)
        prompt = Message(given.get("role", "user"), [TextBlock(text)])
        error: str | None = None
        try:
            result = await self.agent.invoke_async(prompt)
        except RunError as exc:
            if exc.result is None:
                raise
            result, error = exc.result, str(exc)
        stop = result.stop_reason
        outcome = _OUTCOME.get(stop, RunOutcome.COMPLETED)
        if stop == "error":
            outcome = RunOutcome.ERROR
        elif stop == "interrupt":
            outcome = RunOutcome.SUSPENDED
        final = text_of(result.message) if stop == "end_turn" and result.message else None
        return RunRecord(
            outcome=outcome,
            final_output=final,
            tool_invocations=list(self.tool_log),
            error=error,
            identities=[(r.input_identity, r.enforced_identity) for r in self.records],
            records=[r.to_wire() for r in self.records],
        )

    def teardown(self) -> None:
        if self.agent is not None:
            self.agent.close()
        self.agent = None
