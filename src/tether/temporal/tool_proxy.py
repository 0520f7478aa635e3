"""The tools a workflow's agent calls: each run is one activity on the real tool.

Only the body of a call moves: the loop in the workflow validates the arguments with the
real tool's schema, applies every policy, journals the intent and reads the result as it
does for any tool. What may repeat follows tether's rule: an idempotent tool's activity
is retried when its worker is lost; a non-idempotent one's is not, and a call whose
worker was lost *may have run*: the workflow ends the run there (:class:`MayHaveRun`) and
recovers the session like a crashed process, so the call goes to a human (in doubt).
"""

from __future__ import annotations

import json
import re
from concurrent.futures import Executor
from datetime import timedelta
from typing import Any, Final

from tether.errors import ConfigurationError, TetherError
from tether.temporal.wire import decode, encode
from tether.tools.base import Tool
from tether.tools.context import ToolContext
from tether.tools.media import ToolOutput

TOOL_ACTIVITY: Final = "tether.tool"
DEFAULT_TIMEOUT: Final = 300.0
"""An activity's limit for a tool without ``timeout`` (seconds)."""
HEARTBEAT: Final = timedelta(seconds=10)
"""A tool's activity heartbeats while it runs; a worker silent this long is lost."""
_COPIED: Final = (
    "name", "description", "input_schema", "read_only", "path_params", "interactive",
    "idempotent", "reconcile", "timeout", "cheap", "untrusted_schema", "is_async", "fn",
    "__wrapped__", "__doc__",
)  # fmt: skip
_ERROR_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class MayHaveRun(BaseException):
    """A non-idempotent tool's activity was lost with its worker: the tool may have run.

    A BaseException, so the loop does not turn it into a tool result: the run stops
    with the intent journaled and no result, which is exactly a crashed process."""

    def __init__(self, call_id: str, name: str, detail: str) -> None:
        self.call_id = call_id
        self.name = name
        super().__init__(f"tool {name!r} (call {call_id}) may have run: {detail}")


class ActivityTool(Tool):
    """``original``'s schema, flags and validation; its body runs in an activity."""

    def __init__(self, original: Tool, session_id: str, path: tuple[str, ...] = ()) -> None:
        if original.takes_context:
            raise ConfigurationError(
                f"tool {original.name!r} takes a ToolContext, which a Temporal activity "
                "cannot give it yet; run this agent with tether's own workers"
            )
        for attribute in _COPIED:
            setattr(self, attribute, getattr(original, attribute))
        self.takes_context = False
        self._original = original
        self._session_id = session_id
        self._path = path
        self._spec = original.spec()

    def prepare(self, arguments: dict[str, Any] | str) -> dict[str, Any]:
        return self._original.prepare(arguments)

    def check_edit(self, arguments: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
        return self._original.check_edit(arguments, edited)

    async def invoke(
        self,
        kwargs: dict[str, Any],
        context: ToolContext | None = None,
        executor: Executor | None = None,
    ) -> Any:
        from temporalio import workflow
        from temporalio.common import RetryPolicy
        from temporalio.exceptions import ActivityError, ApplicationError

        if context is None:
            raise ConfigurationError(f"tool {self.name!r}: an activity tool needs its call")
        call = context.tool_call
        limit = self.timeout if self.timeout is not None else DEFAULT_TIMEOUT
        payload = {"session_id": self._session_id, "path": list(self._path), "call": encode(call)}
        try:
            answer: dict[str, Any] = await workflow.execute_activity(
                TOOL_ACTIVITY,
                payload,
                start_to_close_timeout=timedelta(seconds=limit + 30),
                heartbeat_timeout=HEARTBEAT,
                retry_policy=RetryPolicy(maximum_attempts=3 if self.idempotent else 1),
            )
        except ActivityError as exc:
            cause = exc.cause
            if isinstance(cause, ApplicationError) or self.idempotent:
                raise
            raise MayHaveRun(call.id, call.name, str(cause or exc)) from None
        if "raised" in answer:
            raise remote_error(answer["raised"])
        if answer.get("timeout"):
            raise TimeoutError(f"tool {self.name!r} timed out")
        value = decode(answer.get("value"))
        if isinstance(value, dict) and "images" in value:
            return ToolOutput(value["text"], tuple(value["images"]))
        return value


class ToolRaised(TetherError):
    """What a tool's body raised in its activity, under the same class name (the model
    reads ``Error: TypeName: message``, as from a tool run in this process)."""


class SpecTool(ActivityTool):
    """A tool a source offers (an MCP server's), from its listing on the worker: its name,
    schema and flags here, its validation and body there (the worker's tool prepares the
    arguments when it runs, so a call that does not fit is a tool error then)."""

    def __init__(self, spec: dict[str, Any], session_id: str, path: tuple[str, ...] = ()) -> None:
        self.name = str(spec["name"])
        self.description = str(spec.get("description") or "")
        self.input_schema = dict(spec.get("input_schema") or {"type": "object"})
        self.read_only = bool(spec.get("read_only", False))
        self.idempotent = bool(spec.get("idempotent", False))
        self.cheap = bool(spec.get("cheap", False))
        timeout = spec.get("timeout")
        self.timeout = float(timeout) if isinstance(timeout, (int, float)) else None
        self.path_params = ()
        self.interactive = False
        self.reconcile = None
        self.untrusted_schema = False  # nothing to validate here: the worker's tool does
        self.is_async = True
        self.takes_context = False
        self._session_id = session_id
        self._path = path
        self._spec = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def prepare(self, arguments: dict[str, Any] | str) -> dict[str, Any]:
        from tether.errors import ToolArgumentError

        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError as exc:
                raise ToolArgumentError(f"tool {self.name!r}: arguments are not JSON") from exc
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"tool {self.name!r}: arguments must be a JSON object")
        return dict(arguments)

    def check_edit(self, arguments: dict[str, Any], edited: dict[str, Any]) -> dict[str, Any]:
        return self.prepare({**arguments, **edited})


def spec_of(tool: Tool) -> dict[str, Any]:
    """What :class:`SpecTool` is built from (the worker lists its sources' tools so)."""
    return {
        **tool.spec(),
        "read_only": tool.read_only,
        "idempotent": tool.idempotent,
        "cheap": tool.cheap,
        "timeout": tool.timeout,
    }


def remote_error(data: Any) -> ToolRaised:
    """The tool's exception as the model will read it (``TypeName: message``)."""
    info = data if isinstance(data, dict) else {}
    name = str(info.get("type", "Exception"))
    name = name if _ERROR_NAME.fullmatch(name) else "Exception"
    raised: ToolRaised = type(name, (ToolRaised,), {})(str(info.get("message", "")))
    return raised
