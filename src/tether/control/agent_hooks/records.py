"""Where InterceptionRecords go: the caller's ``record_sink`` and the session's audit trail."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_hooks import InterceptionRecord

from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from tether.session import SessionJournal

RecordSink = Callable[[InterceptionRecord], None]


class RecordTrail:
    """The emitter's record sink: forwards each (payload-free) record to the caller's
    sink and queues it for the journal, which :meth:`flush` hands over as ``audit`` entries.

    The emitter calls sinks synchronously and swallows their exceptions (audit
    delivery never decides an emission); journal writes are async, so they are
    flushed by the host right after each emission.
    """

    __slots__ = ("journal", "pending", "sink")

    def __init__(self, sink: RecordSink | None) -> None:
        if sink is not None and not callable(sink):
            raise ConfigurationError(f"record_sink must be callable, got {sink!r}")
        self.sink = sink
        self.journal: SessionJournal | None = None
        self.pending: list[InterceptionRecord] = []

    def __call__(self, record: InterceptionRecord) -> None:
        if self.journal is not None:
            self.pending.append(record)
        if self.sink is not None:
            self.sink(record)

    async def flush(self) -> None:
        """Queue the records on the session journal (kind ``audit``): they commit with the
        run's next append, in the same transaction as the step they describe."""
        journal = self.journal
        if not self.pending or journal is None:
            return
        for record in self.pending:
            journal.defer("audit", {"agent_hooks": record.to_wire()})
        self.pending.clear()
