"""The ``--app`` agent over AG-UI 1.0: ``POST /ag-ui`` on ``tether serve`` (section 15 of
docs/design.md). Needs ``pip install 'tether[ag-ui]'`` (the ``ag-ui-protocol`` models).

``events`` maps tether's stream events to AG-UI events, ``interrupts`` interrupts and
resume entries, ``input`` reads a RunAgentInput, ``frontend`` makes its tools,
``access`` checks callers, ``pump`` runs a run apart from its response, ``endpoint``
serves it all.
"""

from __future__ import annotations

from tether.ag_ui.endpoint import AgUiEndpoint

__all__ = ["AgUiEndpoint"]
