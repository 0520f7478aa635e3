"""Context management: keep a long conversation inside the model's context window.

- :mod:`.estimate`: token estimates of a request (heuristic, optional exact, calibrated);
- :mod:`.window`: context windows per model (override, family defaults, learned);
- :mod:`.policy`: the manager protocol, ``KeepAll`` and ``SlidingWindow``;
- :mod:`.summarise`: ``Summarizing`` (a model writes a summary of the middle);
- :mod:`.step`: the step the loop runs around each model call.

Give a manager with ``Agent(execution=Execution(context=...))``; the default
(None) is a ``Summarizing()`` manager using the agent's own model.
"""

from tether.context.compaction import Compaction
from tether.context.estimate import Estimator, estimate_tokens, tiktoken_counter
from tether.context.policy import ContextManager, ContextRequest, KeepAll, SlidingWindow
from tether.context.summarise import Summarizing
from tether.context.window import DEFAULT_WINDOW, context_window

__all__ = [
    "DEFAULT_WINDOW",
    "Compaction",
    "ContextManager",
    "ContextRequest",
    "Estimator",
    "KeepAll",
    "SlidingWindow",
    "Summarizing",
    "context_window",
    "estimate_tokens",
    "tiktoken_counter",
]
