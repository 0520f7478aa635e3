"""tether: a runtime for tool-using LLM agents with a governance-grade control plane."""

from typing import Any

from tether.agent import Agent
from tether.agent_ref import AgentRef
from tether.control.interrupts import Interrupt
from tether.conversation import Conversation
from tether.durable.rules import install as _install_rules
from tether.errors import (
    AgentBusyError,
    AnswerError,
    ConfigurationError,
    ContextError,
    ContextOverflowError,
    HookError,
    InputError,
    InterceptorTimeout,
    MiddlewareError,
    ModelError,
    OutputValidationError,
    PersistenceError,
    ReadOnlyFieldError,
    RetryLimitError,
    RunError,
    ScriptExhaustedError,
    SessionStateError,
    SubAgentError,
    TetherError,
    ToolArgumentError,
    ToolLoopError,
)
from tether.execution import Execution
from tether.limits import IterationBudget, Limits
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.result import Result, RunUsage, StopReason
from tether.runtime import Runtime
from tether.tools import Tool, ToolContext, tool


# Every store applies governance's approval rules and redaction through this one seam:
# tether.durable never imports tether.governance (docs/design.md s. 8).
def _governance_rules() -> Any:
    from tether.governance.approvals import Rules

    return Rules()


_install_rules(factory=_governance_rules)  # made at a store's first approval or listing

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentBusyError",
    "AgentRef",
    "AnswerError",
    "ConfigurationError",
    "ContextError",
    "ContextOverflowError",
    "Conversation",
    "Execution",
    "HookError",
    "InputError",
    "InterceptorTimeout",
    "Interrupt",
    "IterationBudget",
    "Limits",
    "Message",
    "MiddlewareError",
    "ModelError",
    "OutputValidationError",
    "PersistenceError",
    "ReadOnlyFieldError",
    "Result",
    "RetryLimitError",
    "RunError",
    "RunUsage",
    "Runtime",
    "ScriptExhaustedError",
    "SessionStateError",
    "StopReason",
    "SubAgentError",
    "TetherError",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolContext",
    "ToolLoopError",
    "ToolResult",
    "Usage",
    "__version__",
    "tool",
]
