"""Turn an MCP CallToolResult into what tether gives the model: text, and images."""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

from tether.mcp.errors import MCPResultTooLarge, MCPToolError
from tether.messages import Image
from tether.tools.media import MEDIA_TYPES, ToolOutput, sniff

if TYPE_CHECKING:
    import mcp_types

MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""A larger image is left out (named in the text): the smallest provider limit per image."""


def result_text(result: mcp_types.CallToolResult, tool: str, max_chars: int) -> str | ToolOutput:
    """What the model gets for ``result``; raises MCPToolError for ``isError`` results.

    ``structuredContent`` is preferred when present (as compact JSON); otherwise the
    content blocks in order: text as is, embedded text resources with their URI,
    images (and image resources) of a type the providers accept whose bytes are of that
    type, up to 5 MiB each and ``max_chars`` of base64 data together, as images attached
    to the result (a ToolOutput) and named in the text, and a bracketed stand-in for
    other images, audio, binary resources and resource links. More than ``max_chars``
    characters of text raises MCPResultTooLarge.
    """
    images = _Images(max_chars)
    if result.structured_content is not None and not result.is_error:
        text = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    else:
        text = "\n".join(_block_text(block, images) for block in result.content)
    if len(text) > max_chars:
        raise MCPResultTooLarge(
            f"tool {tool!r} returned {len(text):,} characters, more than max_result_chars="
            f"{max_chars:,}; ask for less (narrow the arguments), or raise max_result_chars "
            "on the MCPServer"
        )
    if result.is_error:
        raise MCPToolError(text or f"tool {tool!r} reported an error without a message")
    return ToolOutput(text, images.attached) if images.attached else text


class _Images:
    """The images attached so far and the base64 characters they may still take."""

    def __init__(self, max_chars: int) -> None:
        self.attached: list[Image] = []
        self.left = max_chars
        self.max_chars = max_chars


def _block_text(block: Any, images: _Images) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "image":
        return _image(str(block.mime_type), block.data, "", images)
    if kind == "audio":
        return (
            f"[audio ({block.mime_type}, {_decoded_size(block.data)}) not shown: "
            "tether passes no audio to the model]"
        )
    if kind == "resource":
        resource = block.resource
        mime = f", {resource.mime_type}" if resource.mime_type else ""
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri}{mime}]\n{text}"
        if resource.mime_type in MEDIA_TYPES:
            return _image(
                str(resource.mime_type), resource.blob, f" from resource {resource.uri}", images
            )
        return (
            f"[binary resource {resource.uri}{mime}, {_decoded_size(resource.blob)}, "
            "not shown: tether passes tool results to the model as text]"
        )
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link {block.uri}: {block.name}{mime}]"
    return f"[a {kind or 'content'} block tether does not know how to show]"


def _image(mime: str, data: str, origin: str, images: _Images) -> str:
    """Attach an image the providers accept and name it; otherwise a stand-in saying why not."""
    if len(data) > MAX_IMAGE_BYTES * 4 // 3 + 4:  # not even decoded: it cannot be attached
        return f"[image{origin} ({mime}, {len(data):,} characters of base64) not shown: larger than {MAX_IMAGE_BYTES:,} bytes]"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"[image{origin} ({mime}) not shown: its data is not valid base64]"
    size = len(raw)
    actual = sniff(raw)
    if mime not in MEDIA_TYPES:
        why = f"the providers take only {', '.join(sorted(MEDIA_TYPES))}"
    elif actual != mime:
        found = f"its bytes are {actual}" if actual else "its bytes are not an image tether knows"
        why = f"it claims to be {mime}, but {found}"
    elif size > MAX_IMAGE_BYTES:
        why = f"larger than {MAX_IMAGE_BYTES:,} bytes"
    elif len(data) > images.left:
        why = (
            f"the result's images would pass max_result_chars={images.max_chars:,} "
            "(counted as base64 characters); raise max_result_chars on the MCPServer"
        )
    else:
        images.left -= len(data)
        images.attached.append(Image(mime, data))
        return f"[image {len(images.attached)}{origin} ({mime}, {size:,} bytes) attached]"
    return f"[image{origin} ({mime}, {size:,} bytes) not shown: {why}]"


def _decoded_size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return "data that is not valid base64"
    return f"{size:,} bytes"
