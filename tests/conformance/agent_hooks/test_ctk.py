"""Every AGENT-HOOKS-0.1 CTK vector (run, skipped or asserted by the kit's own engine)."""


def test_conformance(agent_hooks_assert: None) -> None:
    """The kit's fixture runs the vector against the harness and asserts or skips."""
