"""``tether serve --app a2a_app:agent_factory`` in a subprocess, and a2a-sdk clients for it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest, TaskState
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value
from live_server import call

from tether.durable import SQLiteStore

TETHER = str(Path(sys.executable).with_name("tether"))
SUPPORT = str(Path(__file__).parent)
SOURCE = os.environ.get("PYTHONPATH")
ROLES = {
    "caller": ["invoke"],
    "other": ["invoke"],
    "approver": ["approve:append_line"],
    "admin": ["admin"],
    "viewer": ["viewer"],
    "nobody": ["deploy-bot"],
}


@dataclass
class Served:
    url: str
    db: Path
    out: Path
    tokens: dict[str, str]
    proc: subprocess.Popen[str]

    def lines(self) -> list[str]:
        return self.out.read_text().splitlines() if self.out.exists() else []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def add_tokens(db: Path) -> dict[str, str]:
    store = SQLiteStore(db)
    try:
        return {n: (await store.approvers.add(n, roles)).token for n, roles in ROLES.items()}
    finally:
        await store.close()


def start_server(db: Path, out: Path, port: int | None = None) -> subprocess.Popen[str]:
    port = port or free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [SUPPORT, SOURCE])),
        "TETHER_A2A_STORE": str(db),
        "TETHER_A2A_OUT": str(out),
    }
    args = [TETHER, "serve", "--store", str(db), "--port", str(port)]
    proc = subprocess.Popen(
        [*args, "--app", "a2a_app:agent_factory"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            call("GET", url + "/.well-known/agent-card.json", timeout=5)
            break
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stdout.read() if proc.stdout else "server died") from None
            assert time.monotonic() < deadline, "tether serve did not start"
            time.sleep(0.1)
    proc.url = url  # type: ignore[attr-defined]
    return proc


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGINT) -> str:
    if proc.poll() is None:
        proc.send_signal(sig)
    out, _ = proc.communicate(timeout=30)
    return out


@contextmanager
def served(tmp: Path) -> Iterator[Served]:
    db, out = tmp / "a2a.db", tmp / "out.txt"
    tokens = asyncio.run(add_tokens(db))
    proc = start_server(db, out)
    try:
        yield Served(proc.url, db, out, tokens, proc)  # type: ignore[attr-defined]
    finally:
        stop(proc)


@asynccontextmanager
async def client(
    url: str, token: str | None, *, streaming: bool = False, binding: str = "JSONRPC"
) -> AsyncIterator[Client]:
    """An a2a-sdk client of the server at ``url`` with a bearer token (``binding``:
    JSONRPC or HTTP+JSON)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=60, trust_env=False) as http:
        config = ClientConfig(
            httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding]
        )
        a2a = await ClientFactory(config).create_from_url(url)
        try:
            yield a2a
        finally:
            await a2a.close()


def text_message(text: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(
        message_id=os.urandom(8).hex(),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    return SendMessageRequest(message=message)


def answer_message(task_id: str, answers: dict[str, Any]) -> SendMessageRequest:
    value = Value()
    ParseDict(answers, value)
    message = Message(
        message_id=os.urandom(8).hex(),
        role=Role.ROLE_USER,
        parts=[Part(data=value)],
        task_id=task_id,
    )
    return SendMessageRequest(message=message)


async def send(a2a: Client, request: SendMessageRequest) -> list[Any]:
    """Every StreamResponse of one send (one, the final Task, when not streaming)."""
    return [event async for event in a2a.send_message(request)]


def rpc(
    url: str,
    token: str | None,
    body: Any,
    *,
    raw: bytes | None = None,
    version: str | None = "1.0",
) -> tuple[int, Any]:
    """One raw JSON-RPC POST to ``url``/a2a: (HTTP status, parsed JSON body or text)."""
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if version is not None:
        headers["A2A-Version"] = version
    content = raw if raw is not None else json.dumps(body).encode()
    with httpx.Client(timeout=60, trust_env=False) as http:
        response = http.post(url + "/a2a", content=content, headers=headers)
    try:
        return response.status_code, response.json()
    except ValueError:
        return response.status_code, response.text


def interrupts_of(task: Any) -> list[dict[str, Any]]:
    """The interrupt data parts of a task's status message."""
    parts = task.status.message.parts
    return [MessageToDict(p.data) for p in parts if p.HasField("data")]


async def waiting(server: Served, text: str, token: str = "caller") -> tuple[Any, dict[str, Any]]:
    """A new task on ``text`` that stops at one interrupt: (the Task, its data part)."""
    async with client(server.url, server.tokens[token]) as a2a:
        [final] = await send(a2a, text_message(text))
    assert final.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, final
    [interrupt] = interrupts_of(final.task)
    return final.task, interrupt
