"""tether on Temporal (``pip install 'tether[temporal]'``): an agent run as a workflow.

``TetherPlugin(app="module:factory", store=...)`` on a temporalio Worker serves
:class:`AgentWorkflow`; start a run with ``client.start_workflow(AgentWorkflow.run,
prompt, id=..., task_queue=...)``. Every model call and tool call is an activity, the
journal, approval rows and audit chain are tether's store's, interrupts wait for the
:data:`ANSWER_UPDATE` Update (sent from code, or by the worker when the inbox decides).
See docs/design.md, Temporal.
"""

from __future__ import annotations

from tether.temporal.plugin import TetherPlugin
from tether.temporal.workflow import ANSWER_UPDATE, PROGRESS_QUERY, AgentWorkflow

__all__ = ["ANSWER_UPDATE", "PROGRESS_QUERY", "AgentWorkflow", "TetherPlugin"]
