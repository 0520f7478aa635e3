"""ToolOutput: a tool's text with images, for providers that accept images in tool results."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable
from dataclasses import dataclass

from tether.errors import InputError
from tether.messages import Image

MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""What OpenAI, Anthropic and Bedrock all accept."""
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff(data: bytes) -> str | None:
    """The media type of :data:`MEDIA_TYPES` that ``data`` starts with (its magic bytes),
    or None: what an image claims to be is checked against this, not trusted."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """Return this from a tool to give the model ``text`` and ``images``.

    The result's ``content`` is ``text`` (name the images there too: text-only views and
    models see only it); the images reach the provider in the form it accepts (see
    docs/design.md, MCP). Each image is an :class:`tether.messages.Image` (media type in
    :data:`MEDIA_TYPES`, base64 data); anything else raises InputError when built.
    """

    text: str
    images: tuple[Image, ...] = ()

    def __init__(self, text: str, images: Iterable[Image] = ()) -> None:
        checked = tuple(images)
        for image in checked:
            _check(image)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "images", checked)


def _check(image: object) -> None:
    if not isinstance(image, Image):
        raise InputError(
            f"ToolOutput images must be tether.messages.Image objects, got {type(image).__name__}"
        )
    if image.media_type not in MEDIA_TYPES:
        raise InputError(
            f"image media type {image.media_type!r} is not one the providers accept; "
            f"use one of {', '.join(sorted(MEDIA_TYPES))}"
        )
    try:
        base64.b64decode(image.data, validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"the {image.media_type} image's data is not valid base64") from None
