"""Interventions: policy handlers that return actions at the loop's decision points.

A handler overrides only the points it cares about (``before_invocation``,
``before_model_call``, ``after_model_call``, ``before_tool_call``,
``after_tool_call``, ``before_output``, ``before_context_compression``) and returns an action: ``Proceed`` (or None), ``Deny``,
``Guide``, ``Confirm`` or ``Transform``. Handlers run in the order given; the
first Deny (or refused Confirm) ends the evaluation; Guides from several
handlers become one message naming each handler; a Transform applies at once,
so later handlers see its output. They run as hooks at
``HookOrder.INTERVENTION_INPUT`` (before_*) and ``INTERVENTION_OUTPUT`` (after_*).
"""

from tether.control.interventions.edit_check import recheck_edit
from tether.control.interventions.handler import (
    Action,
    Confirm,
    ConfirmCallback,
    ConfirmRequest,
    Deny,
    Guide,
    InterventionHandler,
    OnError,
    Point,
    Proceed,
    Transform,
)
from tether.control.interventions.runner import InterventionRunner

__all__ = [
    "Action",
    "Confirm",
    "ConfirmCallback",
    "ConfirmRequest",
    "Deny",
    "Guide",
    "InterventionHandler",
    "InterventionRunner",
    "OnError",
    "Point",
    "Proceed",
    "Transform",
    "recheck_edit",
]
