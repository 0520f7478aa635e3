"""tether session status -> A2A task state (docs/design.md section 15, the table)."""

from __future__ import annotations

from typing import Final

from a2a.types.a2a_pb2 import TaskState

STATE_OF_STATUS: Final[dict[str, int]] = {
    "idle": TaskState.TASK_STATE_SUBMITTED,
    "running": TaskState.TASK_STATE_WORKING,
    "ready": TaskState.TASK_STATE_WORKING,  # every answer given: it resumes
    "suspended": TaskState.TASK_STATE_INPUT_REQUIRED,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
    "cancelled": TaskState.TASK_STATE_CANCELED,
}
TERMINAL: Final = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)


def state_of(status: str) -> int:
    """The A2A task state of a session status (an unknown status reads as working)."""
    return STATE_OF_STATUS.get(status, TaskState.TASK_STATE_WORKING)
