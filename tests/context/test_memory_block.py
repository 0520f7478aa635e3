"""The memory block in the system prompt: unchanged by a compression and by a resume on
another store object; echoed blocks stripped from user input."""

from __future__ import annotations

import asyncio

from tether import Agent, Execution
from tether.context import Summarizing
from tether.context.memory_block import REMOVED, strip_memory_blocks
from tether.durable import MemoryStore
from tether.messages import Message, TextBlock, ToolResult
from tether.models import ScriptedModel
from tether.tools import memory
from tether.tools.memory import BLOCK_END, BLOCK_START
from tether.tools.memory_provider import StoreMemory

from .long_run import long_script, lookup


def test_a_compression_leaves_the_block_in_every_request() -> None:
    store = MemoryStore()
    asyncio.run(store.memory_entries.add("user:1", "likes tea", memory("x").caps))
    model = ScriptedModel(
        long_script(60), context_window=4_000, overflow_at=4_000, record_requests=True
    )
    summariser = ScriptedModel(lambda messages, specs: "summary", name="summariser")
    agent = Agent(
        model,
        tools=[memory("user:1", provider=StoreMemory(store)), lookup],
        execution=Execution(context=Summarizing(summariser)),
        system_prompt="Look things up.",
        limits=None,
    )
    result = agent("look up the records")
    assert result.usage.compressions >= 1
    [prompt] = {r.system_prompt for r in model.requests}
    assert prompt is not None
    assert prompt.startswith(f"Look things up.\n\n{BLOCK_START}\n")
    assert prompt.endswith(f"] likes tea\n{BLOCK_END}")


def test_stripping_keeps_other_blocks_and_other_roles() -> None:
    echoed = f"before {BLOCK_START}\nold\n{BLOCK_END} after {BLOCK_END}"
    user = Message("user", [TextBlock(echoed), TextBlock("kept")])
    tool = Message("tool", [ToolResult("c1", "t", echoed)])
    assistant = Message.assistant(echoed)
    out = strip_memory_blocks([user, tool, assistant])
    assert [b.text for b in out[0].content if isinstance(b, TextBlock)] == [
        "before  after",
        "kept",
    ]
    assert out[1] is tool
    assert out[2] is assistant
    plain = Message.user("no markers here")
    assert strip_memory_blocks([plain])[0] is plain
    [emptied] = strip_memory_blocks([Message.user(f"{BLOCK_START}x{BLOCK_END}  ")])
    assert emptied.text == REMOVED
