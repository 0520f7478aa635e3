"""The control plane: hooks, middleware, interventions, interrupts and the audit trail."""

from typing import TYPE_CHECKING, Any

from tether.control.events import (
    AfterInvocation,
    AfterMessageAdded,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeContextCompression,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
    HookEvent,
    PolicyVerdict,
)
from tether.control.interventions import (
    Action,
    Confirm,
    ConfirmRequest,
    Deny,
    Guide,
    InterventionHandler,
    Proceed,
    Transform,
)
from tether.control.middleware import ModelMiddleware, ToolMiddleware, ToolRequest
from tether.control.registry import HookOrder, HookProvider, HookRegistry

if TYPE_CHECKING:
    from tether.control.audit import ApprovalPolicy


def __getattr__(name: str) -> Any:
    if name == "ApprovalPolicy":  # loads the durable layer: only on first use
        from tether.control.audit import ApprovalPolicy

        return ApprovalPolicy
    raise AttributeError(f"module 'tether.control' has no attribute {name!r}")


__all__ = [
    "Action",
    "AfterInvocation",
    "AfterMessageAdded",
    "AfterModelCall",
    "AfterToolCall",
    "AgentInitialized",
    "ApprovalPolicy",
    "BeforeContextCompression",
    "BeforeInvocation",
    "BeforeModelCall",
    "BeforeOutput",
    "BeforeToolCall",
    "Confirm",
    "ConfirmRequest",
    "Deny",
    "Guide",
    "HookEvent",
    "HookOrder",
    "HookProvider",
    "HookRegistry",
    "InterventionHandler",
    "ModelMiddleware",
    "PolicyVerdict",
    "Proceed",
    "ToolMiddleware",
    "ToolRequest",
    "Transform",
]
