"""Turn an MCP CallToolResult into the text tether gives the model."""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

from tether.mcp.errors import MCPResultTooLarge, MCPToolError

if TYPE_CHECKING:
    import mcp_types


def result_text(result: mcp_types.CallToolResult, tool: str, max_chars: int) -> str:
    """The model-facing text of ``result``; raises MCPToolError for ``isError`` results.

    ``structuredContent`` is preferred when present (as compact JSON); otherwise the
    content blocks in order: text as is, embedded text resources with their URI, and a
    bracketed stand-in for images, audio, binary resources and resource links (tether
    tool results are text). More than ``max_chars`` characters raises MCPResultTooLarge.
    """
    if result.structured_content is not None and not result.is_error:
        text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    else:
        text = "\n".join(_block_text(block) for block in result.content)
    if len(text) > max_chars:
        raise MCPResultTooLarge(
            f"tool {tool!r} returned {len(text):,} characters, more than max_result_chars="
            f"{max_chars:,}; ask for less (narrow the arguments), or raise max_result_chars "
            "on the MCPServer"
        )
    if result.is_error:
        raise MCPToolError(text or f"tool {tool!r} reported an error without a message")
    return text


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return (
            f"[{kind} ({block.mime_type}, {_decoded_size(block.data)}) not shown: "
            "tether passes tool results to the model as text]"
        )
    if kind == "resource":
        resource = block.resource
        mime = f", {resource.mime_type}" if resource.mime_type else ""
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri}{mime}]\n{text}"
        return (
            f"[binary resource {resource.uri}{mime}, {_decoded_size(resource.blob)}, "
            "not shown: tether passes tool results to the model as text]"
        )
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link {block.uri}: {block.name}{mime}]"
    return f"[a {kind or 'content'} block tether does not know how to show]"


def _decoded_size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "data that is not valid base64"
    return f"{size:,} bytes"
