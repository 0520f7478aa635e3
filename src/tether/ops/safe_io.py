"""stdout and stderr that survive their reader going away (``tether worker``, ``serve``,
``mcp serve``).

Under systemd, Docker or a closed terminal, the reading end of a long-running command's
stdout or stderr can disappear while the command works on: the next log line then fails
with ``EPIPE`` (a closed pipe) or ``EIO`` (a hung-up terminal), and an exception from a
log line must not stop a worker in the middle of a session. :func:`protect_stdio` wraps
both streams in a :class:`SafeWriter`: the first such failure points the stream's file
descriptor at ``/dev/null`` (so what Python still has buffered, and every later line,
goes nowhere without an error) and the command keeps running. Other errors still raise.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from typing import Any, TextIO

GONE = frozenset({errno.EPIPE, errno.EIO})
"""The errors of a stream whose reader went away."""


class SafeWriter:
    """A text stream that drops its output once the reader is gone (see the module)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.broken = False
        """True once a write or flush failed with EPIPE or EIO."""

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._inner.write(text)
        except OSError as exc:
            self._gone(exc)
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._inner.flush()
        except OSError as exc:
            self._gone(exc)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def isatty(self) -> bool:
        if self.broken:
            return False
        try:
            return self._inner.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, buffer ...
        return getattr(self._inner, name)

    def _gone(self, exc: OSError) -> None:
        if exc.errno not in GONE:
            raise exc
        self.broken = True
        # Point the descriptor at /dev/null: the buffer Python still holds (and flushes
        # at exit) then goes nowhere instead of raising "Exception ignored ... BrokenPipe".
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._inner.fileno())
            finally:
                os.close(null)
        with contextlib.suppress(OSError, ValueError):
            self._inner.flush()


def protect_stdio(*, stdout: bool = True) -> None:
    """Wrap ``sys.stderr`` (and ``sys.stdout`` unless ``stdout=False``: ``mcp serve``'s
    stdout is its protocol channel) in a :class:`SafeWriter`, once."""
    names = ("stdout", "stderr") if stdout else ("stderr",)
    for name in names:
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, SafeWriter):
            setattr(sys, name, SafeWriter(stream))
