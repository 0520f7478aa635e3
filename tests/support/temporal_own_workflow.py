"""An application's own (sandboxed) workflow that runs a tether agent as its child."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():  # tether is not re-imported per run
    from tether.temporal import AgentWorkflow


@workflow.defn
class Onboarding:
    """A step of its own, then the agent (its child workflow), then its outcome."""

    @workflow.run
    async def run(self, user: str) -> str:
        await workflow.sleep(timedelta(milliseconds=10))  # the application's own step
        outcome: dict[str, Any] = await workflow.execute_child_workflow(
            AgentWorkflow.run, f"write to {user}", id=f"{workflow.info().workflow_id}-agent"
        )
        return f"{user}: {outcome['stop_reason']}: {outcome['text']}"
