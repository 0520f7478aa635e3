"""execute_code: a model's program calls tools in the pydantic-monty sandbox, each call
through the agent's full tool path; a Confirm inside suspends the program durably."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether import Agent, IterationBudget
from tether.control import BeforeToolCall, Confirm, Deny, InterventionHandler
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError, TetherError
from tether.journal_fold import fold
from tether.models import ScriptedModel
from tether.tools import execute_code, tool
from tether.tools.execute_code import CODE_KEY
from tether.tools.sandbox import CodeError, CodeLimits


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def program_agent(program: str, *tools: Any, **options: Any) -> Agent:
    """An agent that runs ``program`` once as call ``c1``, then answers with its result."""

    def turn(messages: list[Any], specs: list[Any]) -> Any:
        if messages[-1].role == "tool":
            return messages[-1].tool_results[0].content
        return {"tool_calls": [{"id": "c1", "name": "execute_code", "args": {"code": program}}]}

    limits = options.pop("limits", None)
    return Agent(
        model=ScriptedModel(turn),
        tools=[execute_code(tools=list(tools or (add, shout)), limits=limits)],
        **options,
    )


THREE = (
    "x = add(1, 2)\ny = add(x, b=10)\nprint('y is', y)\nz = shout('hi')\n{'x': x, 'y': y, 'z': z}"
)


async def test_three_tool_calls_run_through_the_tool_path_and_are_journaled(stores) -> None:  # type: ignore[no-untyped-def]
    store = stores()
    agent = program_agent(THREE, store=store, session_id="three")
    seen: list[tuple[str, str]] = []
    agent.on(BeforeToolCall)(lambda e: seen.append((e.tool_call.id, e.tool_call.name)))
    try:
        result = await agent.invoke_async("go")
    finally:
        agent.close()
    assert result.text == 'y is 13\n{"x":3,"y":13,"z":"HI"}'
    assert seen == [("c1", "execute_code"), ("c1/1", "add"), ("c1/2", "add"), ("c1/3", "shout")]
    assert CODE_KEY not in agent.state  # the record goes when the program ends
    record = await stores().load("three")
    inner = [e.data["result"] for e in record.entries if e.kind == "tool_result"]
    assert [(r["tool_call_id"], r["content"]) for r in inner[:3]] == [
        ("c1/1", "3"),
        ("c1/2", "13"),
        ("c1/3", "HI"),
    ]
    intents = [e.data["call_id"] for e in record.entries if e.kind == "tool_intent"]
    assert intents == ["c1", "c1/1", "c1/2", "c1/3"]
    audit = await stores().audit.records(session_id="three")
    executed = [(r.data["tool"], r.data["status"]) for r in audit if r.event == "tool.executed"]
    assert sorted(executed) == sorted(
        [("add", "ok"), ("add", "ok"), ("shout", "ok"), ("execute_code", "ok")]
    )


def test_a_deny_policy_on_an_inner_tool_applies_and_the_error_names_the_line() -> None:
    class NoAdding(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("no adding") if event.tool_call.name == "add" else None

    ran: list[int] = []

    @tool
    def count(n: int) -> int:
        """Count."""
        ran.append(n)
        return n

    program = "count(1)\nadd(1, 2)\ncount(2)"
    with program_agent(program, count, add, interventions=[NoAdding()]) as agent:
        result = agent("go")
    assert result.text.startswith("Error: CodeError: line 2: RuntimeError: Denied: ")
    assert "no adding" in result.text
    assert "add(1, 2)" in result.text
    assert ran == [1]  # the program stopped at the denied call


@pytest.mark.parametrize(
    ("program", "line", "what"),
    [
        ("open('/etc/passwd').read()", 1, "PermissionError: execute_code programs have no"),
        ("import os\nprint(os.listdir('/'))", 2, "PermissionError: execute_code programs have no"),
        ("import os\nos.environ['HOME']", 2, "PermissionError: execute_code programs have no"),
        ("x = 1\nimport socket", 2, "PermissionError: execute_code programs have no"),
        ("import subprocess", 1, "PermissionError: execute_code programs have no"),
    ],
)
def test_files_the_os_and_sockets_are_refused_with_a_clear_tool_error(
    program: str, line: int, what: str
) -> None:
    with program_agent(program) as agent:
        result = agent("go")
    [message] = [m for m in agent.messages if m.role == "tool"]
    [error] = message.tool_results
    assert error.is_error
    assert error.content.startswith(f"Error: CodeError: line {line}: {what}")
    assert "filesystem, network, environment or process access" in error.content
    assert result.text == error.content


async def test_a_program_that_loops_forever_is_stopped_and_the_loop_keeps_ticking() -> None:
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    agent = program_agent("n = 0\nwhile True:\n    n += 1", limits=CodeLimits(time=0.5))
    ticking = asyncio.create_task(ticker())
    try:
        started = asyncio.get_running_loop().time()
        result = await agent.invoke_async("go")
        took = asyncio.get_running_loop().time() - started
    finally:
        stop.set()
        await ticking
        agent.close()
    assert result.text == (
        "Error: CodeError: the program ran past its time limit of 0.5 s of interpreter time "
        "(CodeLimits(time=...)) and was stopped"
    )
    assert 0.5 <= took < 5
    assert ticks >= 20  # ~0.5 s at 10 ms a tick: the event loop was never blocked


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ("x = 1\ndef f(:\n    pass", "Error: CodeError: line 2: SyntaxError: "),
        ("x = 1\ny = x / 0", "Error: CodeError: line 2: ZeroDivisionError: division by zero"),
        ("add(1, 2)\nlookup('x')", "Error: CodeError: line 2: NameError: name 'lookup' is"),
        ("add(1, 2, 3)", "Error: CodeError: line 1: TypeError: add() takes at most 2 positional"),
    ],
)
def test_a_sandbox_error_is_a_tool_error_naming_the_line(program: str, expected: str) -> None:
    with program_agent(program) as agent:
        assert agent("go").text.startswith(expected)


def test_printed_output_is_bounded_and_a_program_over_its_call_limit_stops() -> None:
    with program_agent("print('x' * 50000)", limits=CodeLimits(output=100)) as agent:
        text = agent("go").text
    assert text == "x" * 100 + "\n[tether: output cut at 100 characters]"
    with program_agent("for i in range(10):\n    add(i, 1)", limits=CodeLimits(calls=3)) as agent:
        assert agent("go").text == (
            "Error: CodeError: line 2: more than 3 tool calls in one program "
            "(CodeLimits(calls=...))"
        )


def test_a_program_only_turn_refunds_the_iteration_budget() -> None:
    budget = IterationBudget(10, refund_cheap=True)
    with program_agent("add(1, 2)", budget=budget) as agent:
        agent("go")
    assert budget.remaining == 10 - 1  # the execute_code turn was given back


def test_bad_configuration_is_refused_with_a_message() -> None:
    with pytest.raises(ConfigurationError, match="takes a non-empty list of the tools"):
        execute_code(tools=[])
    with pytest.raises(ConfigurationError, match="tool names must be unique"):
        execute_code(tools=[add, "add"])
    with pytest.raises(ConfigurationError, match=r"CodeLimits\(time=...\) must be a positive"):
        CodeLimits(time=0)
    with pytest.raises(ConfigurationError, match=r"CodeLimits\(calls=...\) must be an int"):
        CodeLimits(calls=2.5)  # type: ignore[arg-type]
    assert issubclass(CodeError, TetherError)


# -- a Confirm inside the program, answered in another process; a crash mid-program ------

APP = Path(__file__).parents[1] / "support" / "code_app.py"


def app(db: Path, log: Path, mode: str, *extra: str, crash: bool = False) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    if crash:
        env["TETHER_TEST_CRASH"] = "1"
    child = subprocess.run(
        [sys.executable, str(APP), str(db), str(log), mode, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert child.returncode == (9 if crash else 0), child.stderr
    return child.stdout.splitlines()


def test_a_confirm_inside_the_program_is_answered_in_another_process_without_repeats(
    tmp_path: Path,
) -> None:
    from code_app import build

    db, log = tmp_path / "c.db", tmp_path / "log.txt"
    with build(str(db), str(log)) as first:
        result = first("go")
    assert result.stop_reason == "interrupt"
    [asked] = result.interrupts
    assert asked.reason == "append c?"
    assert asked.tool_call is not None
    assert (asked.tool_call.id, asked.tool_call.name) == ("c1/3", "append")
    assert log.read_text() == "a\nb\n"
    assert first.state[CODE_KEY]  # the record of the finished calls, kept with the session
    assert app(db, log, "resume", asked.id) == ["end_turn", "3"]
    assert log.read_text() == "a\nb\nc\n"  # a and b were answered from the record, not re-run
    view = fold(asyncio.run(SQLiteStore(db).load("code")))
    assert view.status == "completed"
    assert CODE_KEY not in view.state  # the record went when the program ended


def test_a_call_a_crash_cut_off_is_not_run_again_and_the_program_is_told(tmp_path: Path) -> None:
    db, log = tmp_path / "c.db", tmp_path / "log.txt"
    assert app(db, log, "crash", crash=True) == []
    assert log.read_text() == "a\nb\n"
    [stop, *text] = app(db, log, "recover")
    assert stop == "end_turn"
    assert "\n".join(text) == (
        "Error: CodeError: line 2: RuntimeError: Error: a crash cut off call 2 (append) while "
        "it ran: it may or may not have happened, so it is not run again; check before "
        "calling it again\n    append('b')"
    )
    assert log.read_text() == "a\nb\n"  # a answered from the record; b not repeated; no c


def test_a_re_run_that_asks_for_other_calls_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"

    @tool
    def append(text: str) -> str:
        """Append a line."""
        with log.open("a") as f:
            f.write(text + "\n")
        return "ok"

    class AskBeforeC(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Confirm | None:
            return Confirm("c?") if event.tool_call.arguments.get("text") == "c" else None

    program = "import random\nappend(str(random.random()))\nappend('c')"
    with program_agent(program, append, interventions=[AskBeforeC()]) as agent:
        [asked] = agent("go").interrupts
        [first] = log.read_text().splitlines()
        text = agent.resume({asked.id: "approve"}).text
    assert text.startswith(
        "Error: CodeError: line 2: RuntimeError: call 1 of the re-run program is append(...), "
        "but the first run's call 1 was append(...) with other arguments"
    )
    assert log.read_text().splitlines() == [first]  # neither the new call 1 nor 'c' ran


def test_the_programs_calls_are_traced_as_tool_spans_of_the_run() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from tether.observe import instrument

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with program_agent("add(1, 2)\nshout('x')") as agent:
        instrument(agent, tracer_provider=provider, agent_name="coder")
        agent("go")
    provider.shutdown()
    tools = [
        (
            dict(s.attributes or {})["gen_ai.tool.name"],
            dict(s.attributes or {})["gen_ai.tool.call.id"],
        )
        for s in exporter.get_finished_spans()
        if s.name.startswith("execute_tool")
    ]
    assert sorted(tools) == [("add", "c1/1"), ("execute_code", "c1"), ("shout", "c1/2")]


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        (
            "add({1, 2}, 3)",
            "Error: CodeError: line 1: TypeError: add(): the arguments must be JSON values",
        ),
        (
            "x = 1\nshout('y' * 200)",
            "Error: CodeError: line 2: TypeError: shout(): the arguments take 210 characters "
            "as JSON; the limit is 100 (CodeLimits(arguments=...))",
        ),
    ],
)
def test_arguments_that_are_not_json_or_too_large_are_refused_before_the_tool(
    program: str, expected: str
) -> None:
    seen: list[str] = []
    with program_agent(program, limits=CodeLimits(arguments=100)) as agent:
        agent.on(BeforeToolCall)(lambda e: seen.append(e.tool_call.name))
        assert agent("go").text.startswith(expected)
    assert seen == ["execute_code"]  # no inner call reached the tool path


def test_the_programs_value_is_cut_at_the_output_limit() -> None:
    with program_agent("'z' * 5000", limits=CodeLimits(output=50)) as agent:
        assert agent("go").text == "z" * 50 + "\n[tether: output cut at 50 characters]"


async def test_each_finished_call_is_reported_live_as_progress_of_the_program() -> None:
    from tether.events import ToolFinished, ToolProgress

    seen: list[Any] = []
    with program_agent("add(1, 2)\nshout('x')") as agent:
        async for event in agent.stream("go"):
            if isinstance(event, ToolProgress | ToolFinished):
                seen.append(event)
    progress = [(e.call_id, e.progress, e.message) for e in seen if isinstance(e, ToolProgress)]
    assert progress == [("c1", 1, "c1/1 add: ok"), ("c1", 2, "c1/2 shout: ok")]
    assert isinstance(seen[-1], ToolFinished)  # every report before the call's end


async def test_a_deny_on_an_inner_call_is_in_the_audit_trail(stores) -> None:  # type: ignore[no-untyped-def]
    class NoShouting(InterventionHandler):
        def before_tool_call(self, event: BeforeToolCall) -> Deny | None:
            return Deny("quiet") if event.tool_call.name == "shout" else None

    store = stores()
    program = "try:\n    shout('x')\nexcept RuntimeError as e:\n    print('refused:', e)"
    with program_agent(program, interventions=[NoShouting()], store=store, session_id="d") as agent:
        result = await agent.invoke_async("go")
    assert result.text == "refused: Denied: denied by policy 'NoShouting': quiet"
    records = await stores().audit.records(session_id="d")
    [verdict] = [r.data for r in records if r.event == "policy.verdict"]
    assert (verdict["tool"], verdict["policy"], verdict["action"]) == (
        "shout",
        "NoShouting",
        "Deny",
    )
    executed = sorted(
        (r.data["tool"], r.data["status"]) for r in records if r.event == "tool.executed"
    )
    assert executed == [("execute_code", "ok"), ("shout", "denied")]


def test_a_question_asked_by_a_tool_inside_the_program_resumes_it() -> None:
    from tether.tools.clarify import clarify

    program = "colour = clarify('which colour?')\nprint('painting', colour)"
    with program_agent(program, clarify(), add) as agent:
        [asked] = agent("go").interrupts
        assert (asked.name, asked.reason) == ("clarify", "which colour?")
        assert agent.resume({asked.id: "blue"}).text == "painting blue"


async def test_cancelling_the_run_stops_a_program_without_waiting_for_its_limit() -> None:
    agent = program_agent("while True:\n    pass", limits=CodeLimits(time=4.0))
    loop = asyncio.get_running_loop()
    loop.call_later(0.3, agent.cancel)
    started = loop.time()
    try:
        result = await agent.invoke_async("go")
    finally:
        agent.close()
    assert result.stop_reason == "cancelled"
    assert loop.time() - started < 2.0


def test_a_malformed_record_is_a_tool_error_and_left_as_it_is() -> None:
    ran: list[int] = []

    @tool
    def count(n: int) -> int:
        """Count."""
        ran.append(n)
        return n

    bad = {CODE_KEY: {"1:c1": {"done": "nope"}}}
    with program_agent("count(1)", count, state=bad) as agent:
        text = agent("go").text
        assert agent.state[CODE_KEY] == {"1:c1": {"done": "nope"}}
    assert text == (
        "Error: CodeError: the session state's '__tether_execute_code__' entry for call "
        "'1:c1' is not a record of finished calls; the program did not run (remove the entry "
        "to run it afresh)"
    )
    assert ran == []


def test_without_pydantic_monty_execute_code_is_refused_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)  # what an absent package does
    with pytest.raises(ConfigurationError, match=r"pip install 'tether\[code\]'"):
        execute_code(tools=[add])


async def test_more_programs_at_once_than_workers_wait_their_turn_and_close_restarts() -> None:
    from tether.tools.sandbox import HostCall, Sandbox

    sandbox = Sandbox(CodeLimits(), workers=2)

    async def host(call: HostCall) -> Any:
        await asyncio.sleep(0.05)  # each program holds its worker across a slow call
        return {"return_value": call.args[0] + 100}

    async def six() -> list[str | None]:
        runs = [sandbox.run(f"f({i})", host) for i in range(6)]
        return [finished.value for finished in await asyncio.gather(*runs)]

    try:
        started = asyncio.get_running_loop().time()
        assert await six() == ["100", "101", "102", "103", "104", "105"]
        assert asyncio.get_running_loop().time() - started >= 0.14  # 3 rounds of 2, not 1 of 6
        sandbox.close()  # stops the workers; the next program starts them again
        assert await six() == ["100", "101", "102", "103", "104", "105"]
    finally:
        sandbox.close()
