"""Workflows: agents, workflows and functions composed in sequence, in parallel and in
loops, each node a durable, governed run (docs/design.md section 16)."""

from tether.workflows.conductor import Call, Progress
from tether.workflows.graph import Graph
from tether.workflows.loop import Loop
from tether.workflows.parallel import Parallel, json_list
from tether.workflows.sequential import Sequential
from tether.workflows.steps import StepContext, Update
from tether.workflows.swarm import Swarm, text_history
from tether.workflows.workflow import Workflow

__all__ = [
    "Call",
    "Graph",
    "Loop",
    "Parallel",
    "Progress",
    "Sequential",
    "StepContext",
    "Swarm",
    "Update",
    "Workflow",
    "json_list",
    "text_history",
]
