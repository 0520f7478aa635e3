"""The control plane: hooks, middleware, interventions, interrupts and the audit trail."""

from tether.control.audit import ApprovalPolicy
from tether.control.events import (
    AfterInvocation,
    AfterModelCall,
    AfterToolCall,
    AgentInitialized,
    BeforeInvocation,
    BeforeModelCall,
    BeforeOutput,
    BeforeToolCall,
    HookEvent,
    MessageAdded,
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

__all__ = [
    "Action",
    "AfterInvocation",
    "AfterModelCall",
    "AfterToolCall",
    "AgentInitialized",
    "ApprovalPolicy",
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
    "MessageAdded",
    "ModelMiddleware",
    "Proceed",
    "ToolMiddleware",
    "ToolRequest",
    "Transform",
]
