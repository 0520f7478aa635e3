"""An MCP server written with the mcp SDK, for what the reference servers do not do.

Usage: python mcp_fixture_server.py stdio | http PORT | sse PORT | garbage | hang | badschema
| invalidschema | raw
``garbage`` writes a non-JSON line to stdout; ``hang`` never answers; ``badschema``
and ``invalidschema`` (hand-written JSON-RPC) list one tool whose input schema is not
an object / not a valid JSON schema. ``raw`` is a hand-written server shaped by the JSON
in ``FIXTURE_RAW`` (see :func:`raw_mode`): a hostile server's schemas, listings,
notifications and images.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import (
    EmbeddedResource,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)

server = MCPServer("fixture")


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool(structured_output=False)
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def square(n: int) -> dict[str, int]:
    """Structured output: n and its square."""
    return {"n": n, "square": n * n}


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def picture() -> list[Any]:
    """A caption, a PNG image and an embedded text resource."""
    return [
        TextContent(type="text", text="a red dot"),
        Image(data=PNG, format="png").to_image_content(),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///notes.txt", mime_type="text/plain", text="hi"
            ),
        ),
    ]


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def big(chars: int) -> str:
    """A text of ``chars`` characters."""
    return "x" * chars


@server.tool(
    annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False),
    structured_output=False,
)
def crash() -> str:
    """The server process exits in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await anyio.sleep(seconds)
    return "slept"


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
async def slow_read(name: str) -> str:
    """Sleep FIXTURE_SLEEP seconds, then read (safe to repeat)."""
    await anyio.sleep(float(os.environ.get("FIXTURE_SLEEP", "0")))
    return f"read {name}"


@server.tool(structured_output=False)
async def slow_write(path: str) -> str:
    """Sleep FIXTURE_SLEEP seconds, then append a line to ``path`` (not safe to repeat)."""
    await anyio.sleep(float(os.environ.get("FIXTURE_SLEEP", "0")))
    await anyio.Path(path).write_text("written\n", encoding="utf-8")
    return "written"


@server.tool(structured_output=False)
async def note(text: str, ctx: Context) -> str:
    """Send ``text`` as a warning log message to the client."""
    await ctx.warning(text)
    return "noted"


@server.tool(structured_output=False)
async def wait(path: str, seconds: float) -> str:
    """Sleep; if the client cancels the call, write "cancelled" to ``path``."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await anyio.Path(path).write_text("cancelled", encoding="utf-8")
        raise
    return "waited"


@server.tool(structured_output=False)
async def roots(ctx: Context) -> str:
    """The client's roots, comma-separated."""
    listed = await ctx.session.list_roots()
    return ", ".join(str(root.uri) for root in listed.roots)


@server.tool(structured_output=False)
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling) and return its answer."""
    answer = await ctx.session.create_message(
        [SamplingMessage(role="user", content=TextContent(type="text", text=question))],
        max_tokens=100,
        system_prompt="Answer in one word.",
    )
    return f"{answer.model} said: {answer.content.text}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
def header(name: str, ctx: Context) -> str:
    """The value of request header ``name`` (HTTP only), or "none"."""
    return (ctx.headers or {}).get(name.lower(), "none")


class Choice(BaseModel):
    ok: bool
    note: str = ""


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
async def ask_read(topic: str, ctx: Context) -> str:
    """Ask the user whether to read ``topic`` (elicitation), then say what they chose."""
    answer = await ctx.elicit(f"Read {topic}?", Choice)
    return f"{answer.action}: {answer.data if answer.action == 'accept' else ''}".strip()


@server.tool(structured_output=False)
async def ask_write(path: str, ctx: Context) -> str:
    """Append a line to ``path`` (not safe to repeat), then ask the user to confirm."""
    async with await anyio.open_file(path, "a", encoding="utf-8") as f:
        await f.write("written\n")
    answer = await ctx.elicit("Keep the line?", Choice)
    return answer.action


@server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
async def progress(steps: int, gate: str, ctx: Context) -> str:
    """Report ``steps`` progress notifications, then wait (at most 30 s) for the file ``gate``."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    deadline = anyio.current_time() + 30
    while not await anyio.Path(gate).exists():
        if anyio.current_time() > deadline:
            return "the gate never opened"
        await anyio.sleep(0.02)
    return "through the gate"


@server.tool(structured_output=False)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(structured_output=False)
async def grow(ctx: Context, remove: str = "fail") -> str:
    """Add the tool ``extra`` and remove ``remove``, then notify tools/list_changed."""

    def extra(word: str) -> str:
        """Added at run time."""
        return word.upper()

    server.add_tool(extra, name="extra")
    server.remove_tool(remove)
    await ctx.session.send_tool_list_changed()
    return "grown"


def raw_server(*tools: dict[str, Any]) -> None:
    """A hand-written stdio server (the SDK's own refuses to send bad listings)."""
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        if request["method"] == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        elif request["method"] == "tools/list":
            result = {"tools": list(tools)}
        else:
            result = {}
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)


def raw_mode(spec: dict[str, Any]) -> None:
    """A hand-written stdio server: ``tools`` (definitions as sent) plus ``many`` generated
    ones; every ``tools/call`` first sends ``notify`` ``tools/list_changed`` notifications,
    then answers with a JSON text ``{"arguments", "lists"}`` (the ``tools/list`` requests
    seen so far) and ``images``: ``[count, media type claimed, bytes]`` of PNG data (or of
    text, with a fourth item ``"fake"``)."""
    tools = list(spec.get("tools", []))
    tools += [
        {"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(spec.get("many", 0))
    ]
    lists = 0

    def send(message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue
        method = request["method"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "raw", "version": "1"},
            }
        elif method == "tools/list":
            lists += 1
            result = {"tools": tools}
        elif method == "tools/call":
            for _ in range(spec.get("notify", 0)):
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = json.dumps({"arguments": request["params"].get("arguments"), "lists": lists})
            content: list[dict[str, Any]] = [{"type": "text", "text": text}]
            if "images" in spec:
                count, mime, size, *fake = spec["images"]
                unit = b"not an image " if fake else PNG
                body = unit * (size // len(unit) + 1)
                data = base64.b64encode(body[:size]).decode()
                content += [{"type": "image", "mimeType": mime, "data": data}] * count
            result = {"content": content}
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})


def main() -> None:
    mode = sys.argv[1]
    if mode == "http":
        import uvicorn

        app = server.streamable_http_app()
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    elif mode == "sse":
        import uvicorn

        app = server.sse_app()
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    elif mode == "garbage":
        print("this is not JSON-RPC", flush=True)
        time.sleep(60)
    elif mode == "hang":
        time.sleep(60)
    elif mode == "badschema":
        raw_server({"name": "odd", "inputSchema": {"type": "string"}})
    elif mode == "invalidschema":
        raw_server(
            {"name": "odd", "inputSchema": {"type": "object", "properties": {"x": {"type": 42}}}}
        )
    elif mode == "raw":
        raw_mode(json.loads(os.environ["FIXTURE_RAW"]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
