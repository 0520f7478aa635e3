"""tether: a runtime for tool-using LLM agents with a governance-grade control plane."""

from tether.agent import Agent
from tether.control.interrupts import Interrupt
from tether.conversation import Conversation
from tether.errors import (
    AgentBusyError,
    AnswerError,
    ConfigurationError,
    HookError,
    InputError,
    MiddlewareError,
    ModelError,
    PersistenceError,
    ReadOnlyFieldError,
    RetryLimitError,
    RunError,
    SessionStateError,
    TetherError,
    ToolLoopError,
)
from tether.execution import Execution
from tether.limits import IterationBudget, Limits
from tether.messages import Message, ToolCall, ToolResult, Usage
from tether.result import Result, RunUsage, StopReason
from tether.tools import Tool, ToolContext, tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentBusyError",
    "AnswerError",
    "ConfigurationError",
    "Conversation",
    "Execution",
    "HookError",
    "InputError",
    "Interrupt",
    "IterationBudget",
    "Limits",
    "Message",
    "MiddlewareError",
    "ModelError",
    "PersistenceError",
    "ReadOnlyFieldError",
    "Result",
    "RetryLimitError",
    "RunError",
    "RunUsage",
    "SessionStateError",
    "StopReason",
    "TetherError",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolLoopError",
    "ToolResult",
    "Usage",
    "__version__",
    "tool",
]
