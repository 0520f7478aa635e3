"""The one AGENT-HOOKS interceptor both hooks rows register (stdlib only, like _harness).

It allows everything and counts the points that match the plain rows' three
callbacks (pre_model_call twice, pre_tool_call, post_tool_call), so the
harness's workload check holds unchanged.
"""

from __future__ import annotations

from typing import Any

from _harness import COUNTS

_ALLOW = {"decision": "allow"}


class CountingAllowAll:
    """Allow-all interceptor (AGENT-HOOKS-0.1 ``intercept(context) -> verdict``)."""

    name = "allow-all"

    def intercept(self, context: dict[str, Any]) -> dict[str, str]:
        point = context["interception_point"]
        if point == "pre_model_call":
            COUNTS.before_model += 1
        elif point == "pre_tool_call":
            COUNTS.before_tool += 1
        elif point == "post_tool_call":
            COUNTS.after_tool += 1
        return _ALLOW
