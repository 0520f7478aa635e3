"""The built-in ``clarify`` tool: the model asks the user a question and waits for the answer."""

from __future__ import annotations

from tether.tools.base import Tool
from tether.tools.context import ToolContext

CLARIFY = "clarify"


def clarify(name: str = CLARIFY) -> Tool:
    """A tool that suspends the run with the model's question (an interrupt named
    ``clarify`` whose reason is the question: a question in the approvals inbox); the
    answer given to ``agent.resume({id: answer})`` is the tool's result. Opt-in:
    ``Agent(tools=[..., clarify()])``."""

    def ask(question: str, context: ToolContext) -> str:
        """Ask the user a question when the task is ambiguous; returns their answer.

        Args:
            question: One clear question for the user.
        """
        answer = context.interrupt(CLARIFY, question)
        return answer if isinstance(answer, str) else str(answer)

    return Tool(ask, name=name, interactive=True, idempotent=True)
