"""A real tracing backend for the tests: Arize Phoenix (``phoenix serve``) on 127.0.0.1.

Phoenix's dependencies clash with the project's pins, so it lives in its own venv,
``.venv-phoenix`` at the repository root (``make phoenix``, which ``make test`` runs;
``TETHER_PHOENIX_VENV`` points elsewhere). :func:`phoenix_server` starts it on free ports
with its working directory (its SQLite database) in a temporary folder, waits until it
answers, and stops it. Spans go in over OTLP/HTTP (``{url}/v1/traces``) and are read back
through Phoenix's REST API (``/v1/projects/{project}/spans``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PIN = "arize-phoenix==20.26.1"
"""Keep equal to PHOENIX_PIN in the Makefile."""
READY_TIMEOUT_S = 180.0


def venv() -> Path:
    return Path(os.environ.get("TETHER_PHOENIX_VENV", ROOT / ".venv-phoenix"))


def executable() -> Path | None:
    """The ``phoenix`` command, or None when the venv is missing."""
    found = venv() / "bin" / "phoenix"
    return found if found.exists() else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Phoenix:
    url: str
    started_in_s: float
    """How long ``phoenix serve`` took to answer its health check."""

    @property
    def traces_endpoint(self) -> str:
        return f"{self.url}/v1/traces"

    def get(self, path: str, **query: Any) -> Any:
        full = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(full, timeout=30) as reply:
            return json.loads(reply.read())

    def spans(self, project: str) -> list[dict[str, Any]]:
        """Every span Phoenix holds for ``project`` (all pages); [] for an unknown project."""
        names = {p["name"] for p in self.get("/v1/projects")["data"]}
        if project not in names:
            return []
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            query: dict[str, Any] = {"limit": 1000}
            if cursor:
                query["cursor"] = cursor
            page = self.get(f"/v1/projects/{urllib.parse.quote(project)}/spans", **query)
            found.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def wait_for_spans(self, project: str, count: int, timeout: float = 30) -> list[dict[str, Any]]:
        """Phoenix ingests in the background: poll until ``count`` spans are in."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.spans(project)
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


@contextmanager
def phoenix_server(workdir: Path, command: Path) -> Iterator[Phoenix]:
    port = _free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    for name in list(env):  # the tests' own OTel settings are not Phoenix's
        if name.startswith("OTEL_"):
            del env[name]
    log = (workdir / "phoenix.log").open("w", encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(command), "serve"],
        cwd=workdir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    server = Phoenix(url, 0.0)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"phoenix serve exited {proc.returncode}: {_tail(workdir)}")
            if time.monotonic() - started > READY_TIMEOUT_S:
                raise RuntimeError(
                    f"phoenix serve did not answer {url}/healthz within {READY_TIMEOUT_S:.0f} s: "
                    f"{_tail(workdir)}"
                )
            try:
                opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
                with opener.open(url + "/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            time.sleep(0.2)
        server.started_in_s = time.monotonic() - started
        yield server
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        log.close()


def _tail(workdir: Path) -> str:
    text = (workdir / "phoenix.log").read_text(encoding="utf-8", errors="replace")
    return "\n".join(text.splitlines()[-15:])
