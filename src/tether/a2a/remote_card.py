"""A remote agent's card: fetched bounded (size, time), read as untrusted text.

Nothing in a card is run or followed except its JSON-RPC interface URL, and only when
that URL has the origin (scheme, host, port) of the URL the RemoteAgent was given.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tether.a2a.remote_errors import RemoteAgentError
from tether.errors import ConfigurationError

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard

CARD_PATH = "/.well-known/agent-card.json"
MAX_CARD_BYTES = 64 * 1024
CARD_TIMEOUT = 10.0
MAX_DESCRIPTION = 1000
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class RemoteCard:
    """What tether uses of a card: the parsed card, its JSON-RPC URL, and its words."""

    card: AgentCard
    rpc_url: str
    name: str
    description: str
    streaming: bool


def card_url(url: str) -> str:
    """The card's URL for a RemoteAgent ``url`` (the agent's base URL or the card itself)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(f"RemoteAgent url must be an http(s) URL, got {url!r}")
    if parts.path.endswith(".json"):
        return url
    return url.rstrip("/") + CARD_PATH


def read_card(body: bytes, url: str) -> RemoteCard:
    """Parse a fetched card (at most :data:`MAX_CARD_BYTES`) into a :class:`RemoteCard`."""
    from a2a.client.card_resolver import parse_agent_card
    from google.protobuf.json_format import ParseError

    try:
        data = json.loads(body)
        card = parse_agent_card(data)
    except (ValueError, ParseError) as exc:
        raise RemoteAgentError(f"the agent card at {url} is not a valid A2A card: {exc}") from None
    rpc = next((i.url for i in card.supported_interfaces if i.protocol_binding == "JSONRPC"), None)
    if rpc is None:
        raise RemoteAgentError(f"the agent card at {url} offers no JSONRPC interface")
    if _origin(rpc) != _origin(url):
        raise RemoteAgentError(
            f"the agent card at {url} points its JSONRPC interface at {clean(rpc, 200)!r}, "
            "another origin; tether only calls the host it was given"
        )
    return RemoteCard(card, rpc, tool_name(card.name), describe(card), card.capabilities.streaming)


def tool_name(name: str) -> str:
    """A valid tool name from a card's name (``remote_agent`` when nothing is left)."""
    return _NAME_CHARS.sub("_", name).strip("_")[:64] or "remote_agent"


def describe(card: AgentCard) -> str:
    """The tool description the model reads: the card's description and skills, bounded."""
    lines = [clean(card.description, MAX_DESCRIPTION)] if card.description else []
    for skill in list(card.skills)[:20]:
        lines.append(f"- {clean(skill.name, 80)}: {clean(skill.description, 200)}")
    text = "\n".join(line for line in lines if line)
    return clean(text, MAX_DESCRIPTION) or f"Hand a task to the remote agent {card.name!r}."


def clean(text: str, limit: int) -> str:
    """Remote text without control or bidi characters, cut at ``limit`` characters."""
    kept = "".join(
        ch for ch in text[: limit * 2] if ch in "\n\t" or unicodedata.category(ch)[0] != "C"
    )
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def fetch_card_sync(url: str, headers: dict[str, str]) -> RemoteCard:
    """Fetch the card now (at construction, for a name or description not given)."""
    import httpx

    where = card_url(url)
    try:
        with (
            httpx.Client(timeout=CARD_TIMEOUT, headers=headers, follow_redirects=False) as client,
            client.stream("GET", where) as response,
        ):
            return read_card(_bounded(response.status_code, response.iter_bytes(), where), where)
    except httpx.HTTPError as exc:
        raise RemoteAgentError(f"could not fetch the agent card at {where}: {exc}") from None


async def fetch_card(url: str, headers: dict[str, str]) -> RemoteCard:
    """Fetch the card on the event loop (bounded by :data:`CARD_TIMEOUT` and size)."""
    import httpx

    where = card_url(url)
    try:
        async with (
            httpx.AsyncClient(
                timeout=CARD_TIMEOUT, headers=headers, follow_redirects=False
            ) as client,
            client.stream("GET", where) as response,
        ):
            chunks = [chunk async for chunk in _limit(response.aiter_bytes(), where)]
            body = _bounded(response.status_code, iter(chunks), where)
    except httpx.HTTPError as exc:
        raise RemoteAgentError(f"could not fetch the agent card at {where}: {exc}") from None
    return read_card(body, where)


async def _limit(chunks: Any, where: str) -> Any:
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > MAX_CARD_BYTES:
            raise RemoteAgentError(f"the agent card at {where} is over {MAX_CARD_BYTES} bytes")
        yield chunk


def _bounded(status: int, chunks: Any, where: str) -> bytes:
    if status != 200:
        raise RemoteAgentError(f"the agent card at {where} answered HTTP {status}")
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > MAX_CARD_BYTES:
            raise RemoteAgentError(f"the agent card at {where} is over {MAX_CARD_BYTES} bytes")
    return bytes(body)
