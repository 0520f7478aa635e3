"""What a server sends is bounded: list_changed floods, image results, tool listings."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from typing import Any

import mcp_types
import pytest

from tether.errors import ConfigurationError
from tether.mcp import MCPConnectionError, MCPServer
from tether.mcp.results import result_text
from tether.tools.media import ToolOutput, sniff

from .conftest import fixture_args

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)
ECHO = {"name": "echo", "inputSchema": {"type": "object"}}


def raw_server(spec: dict[str, Any], **options: Any) -> MCPServer:
    env = {"FIXTURE_RAW": json.dumps(spec)}
    return MCPServer.stdio(sys.executable, fixture_args("raw"), env=env, name="raw", **options)


def call(server: MCPServer, name: str = "echo") -> Any:
    tool = next(t for t in server.tools() if t.name == name)
    return asyncio.run(tool.invoke({}))


def image(mime: str, raw: bytes) -> mcp_types.ImageContent:
    return mcp_types.ImageContent(type="image", mimeType=mime, data=base64.b64encode(raw).decode())


def mapped(*blocks: Any, max_chars: int = 200_000) -> str | ToolOutput:
    return result_text(mcp_types.CallToolResult(content=list(blocks)), "pics", max_chars)


def test_a_flood_of_list_changed_is_one_listing_plus_one_queued():
    with raw_server({"tools": [ECHO], "notify": 2000}) as server:
        started = time.monotonic()
        first = json.loads(call(server))
        second = json.loads(call(server))
        took = time.monotonic() - started
    assert first["lists"] == 1  # the listing at connect
    # 2,000 notifications: the listing they start, and one more queued behind it.
    assert second["lists"] <= 3
    assert took < 10


def test_images_together_are_bounded_by_max_result_chars():
    size = 300_000  # 400,000 characters of base64 each
    with raw_server(
        {"tools": [ECHO], "images": [12, "image/png", size]}, max_result_chars=1_000_000
    ) as server:
        output = call(server)
    assert isinstance(output, ToolOutput)
    assert len(output.images) == 2
    assert sum(len(i.data) for i in output.images) <= 1_000_000
    lines = output.text.splitlines()
    assert lines[1:3] == [
        f"[image 1 (image/png, {size:,} bytes) attached]",
        f"[image 2 (image/png, {size:,} bytes) attached]",
    ]
    assert (
        lines[3:]
        == [
            f"[image (image/png, {size:,} bytes) not shown: the result's images would pass "
            "max_result_chars=1,000,000 (counted as base64 characters); raise max_result_chars "
            "on the MCPServer]"
        ]
        * 10
    )


def test_an_image_whose_bytes_are_not_its_claimed_type_is_left_out():
    with raw_server({"tools": [ECHO], "images": [1, "image/png", 1000, "fake"]}) as server:
        output = call(server)
    assert isinstance(output, str)  # nothing attached
    assert output.splitlines()[1] == (
        "[image (image/png, 1,000 bytes) not shown: it claims to be image/png, but its bytes "
        "are not an image tether knows]"
    )
    text = mapped(image("image/jpeg", PNG), image("image/png", PNG))
    assert isinstance(text, ToolOutput)
    assert text.text.splitlines() == [
        "[image (image/jpeg, 70 bytes) not shown: it claims to be image/jpeg, but its bytes are "
        "image/png]",
        "[image 1 (image/png, 70 bytes) attached]",
    ]


def test_sniff_knows_the_four_provider_types():
    assert sniff(PNG) == "image/png"
    assert sniff(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert sniff(b"GIF89a...") == "image/gif"
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff(b"<svg/>") is None


def test_an_oversized_image_is_not_even_decoded():
    huge = mapped(image("image/png", PNG * 80_000), max_chars=100_000_000)
    assert huge == (
        "[image (image/png, 7,466,668 characters of base64) not shown: larger than 5,242,880 bytes]"
    )


def test_more_tools_than_max_tools_fail_clearly_and_the_bound_can_be_raised():
    started = time.monotonic()
    with raw_server({"many": 20_000}) as server, pytest.raises(MCPConnectionError) as info:
        server.tools()
    assert time.monotonic() - started < 20
    assert str(info.value) == (
        "MCP server 'raw' lists more than 500 tools (max_tools=500): tether does not take them "
        "up; raise max_tools on the MCPServer if the server really needs that many"
    )
    with raw_server({"many": 501}, max_tools=501) as server:
        assert len(server.tools()) == 501


def test_max_tools_must_be_positive():
    with pytest.raises(ConfigurationError) as info:
        raw_server({}, max_tools=0)
    assert str(info.value) == "MCP server 'raw': max_tools must be >= 1, got 0"
