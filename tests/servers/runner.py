"""Start servers on 127.0.0.1 for tests: the fault server and llm-katan (subprocess or in-process)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from servers import (
    anthropic_routes,
    bedrock_routes,
    gemini_routes,
    openai_routes,
    responses_routes,
)
from servers.plan import Recorder


def fault_app() -> Starlette:
    """The provider-shaped fault server (see servers/plan.py for how requests are planned)."""
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", openai_routes.chat_completions, methods=["POST"]),
            Route("/v1/responses", responses_routes.responses, methods=["POST"]),
            Route("/v1/messages", anthropic_routes.messages, methods=["POST"]),
            Route("/model/{model_id:path}/converse", bedrock_routes.converse, methods=["POST"]),
            Route(
                "/model/{model_id:path}/converse-stream", bedrock_routes.converse, methods=["POST"]
            ),
            Route("/v1beta/models/{target:path}", gemini_routes.generate, methods=["POST"]),
            Route("/v1/models/{target:path}", gemini_routes.generate, methods=["POST"]),
        ]
    )
    app.state.recorder = Recorder()
    return app


class ThreadServer:
    """Runs an ASGI app with uvicorn in a daemon thread on a free 127.0.0.1 port."""

    def __init__(self, app: Any) -> None:
        self.app = app
        config = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="critical", lifespan="auto"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self.port = 0

    def start(self) -> ThreadServer:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start within 20 s")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class KatanProcess:
    """``llm-katan --backend echo`` as a subprocess on a free port."""

    def __init__(self, *extra: str) -> None:
        self.port = free_port()
        exe = Path(sys.executable).with_name("llm-katan")
        self.args = [
            str(exe), "--model", "echo-model", "--backend", "echo",
            "--host", "127.0.0.1", "--port", str(self.port),
            "--providers", "openai,anthropic,bedrock",
            "--stats-file", "", "--disable-dashboard", "--log-level", "warning", *extra,
        ]  # fmt: skip
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> KatanProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self._proc = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode() if self._proc.stderr else ""
                raise RuntimeError(f"llm-katan exited early: {err[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("llm-katan did not answer /health within 30 s")

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def katan_app(**settings: Any) -> Any:
    """llm-katan's own ASGI app (echo backend) with failure settings, to run in-process."""
    from llm_katan.config import ServerConfig
    from llm_katan.server import create_app

    config = ServerConfig(
        model_name="echo-model",
        backend="echo",
        host="127.0.0.1",
        providers=["openai", "anthropic", "bedrock"],
        stats_file="",
        dashboard_enabled=False,
        **settings,
    )
    return create_app(config)
