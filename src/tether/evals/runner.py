"""Running a dataset: a fresh agent per case from the caller's factory, every case
``repeat`` times, at most ``concurrency`` at once; each run scored by every evaluator.

The factory is called with no arguments, or with ``session_id=`` (and ``store=``) when
it takes them; an agent built without the evaluation's store is cloned onto it. An
interrupt is answered by ``answers(interrupt)`` (sync or async; None leaves it) through
``agent.resume_async``, else the case ends ``interrupted``. A factory, run or answers
function that raises makes an error row: kept, never scored, never a crash.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tether.errors import ConfigurationError, RunError
from tether.evals.progress import progress_bar
from tether.evals.report import Report, RunRow
from tether.evals.run import CaseRun
from tether.governance.masks import Masker
from tether.messages import add_cost
from tether.ops.app_loader import AppFactory, Factory

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.control.interrupts import Interrupt
    from tether.durable.store import Store
    from tether.evals.case import Case
    from tether.evals.dataset import Dataset
    from tether.result import Result

MAX_CONCURRENCY = 256
MAX_REPEAT = 1000
MAX_ROUNDS = 100
"""Interrupt rounds answered in one run before the case ends ``interrupted``."""


async def evaluate(
    dataset: Dataset,
    factory: Factory,
    *,
    concurrency: int,
    repeat: int,
    answers: Callable[[Interrupt], Any] | None,
    store: Store | None,
    output_type: Any,
    progress: Any = False,
) -> Report:
    for label, value, top in (("concurrency", concurrency, MAX_CONCURRENCY),
                              ("repeat", repeat, MAX_REPEAT)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise ConfigurationError(
                f"dataset.evaluate({label}=...) takes an int from 1 to {top}, got {value!r}"
            )
    if not callable(factory) and not isinstance(factory, AppFactory):
        raise ConfigurationError(f"dataset.evaluate(factory) takes a callable, got {factory!r:.80}")
    app = AppFactory.of(factory, "the eval factory")
    if answers is not None and not callable(answers):
        raise ConfigurationError(
            f"dataset.evaluate(answers=...) takes a callable, got {answers!r:.80}"
        )
    takes = _keywords(app.factory)
    run_id = os.urandom(4).hex()
    bar = progress_bar(progress, run_id, len(dataset.cases) * repeat)
    gate = asyncio.Semaphore(concurrency)
    started = time.time()

    async def one(index: int, case: Case, rep: int) -> RunRow:
        async with gate:
            session_id = f"eval-{run_id}-{index:04d}-{rep}"
            run, masker = await _run(case, rep, app, takes, session_id, store, answers, output_type)
            if run.status == "error":
                row = RunRow.of(run, {}, masker)
            else:
                scores = {e.name: await e.score(run) for e in dataset.evaluators}
                row = RunRow.of(run, scores, masker)
            if bar is not None:
                bar.done(passed=row.passed, error=row.status == "error")
            return row

    try:
        rows = await asyncio.gather(
            *(one(i, case, rep) for i, case in enumerate(dataset.cases) for rep in range(repeat))
        )
    finally:
        if bar is not None:
            bar.stop()
    return Report(
        list(rows), [e.name for e in dataset.evaluators], run_id=run_id, started=started,
        repeat=repeat,
    )  # fmt: skip


async def _run(
    case: Case, rep: int, factory: AppFactory, takes: set[str], session_id: str,
    store: Store | None, answers: Callable[[Interrupt], Any] | None, output_type: Any,
) -> tuple[CaseRun, Masker]:  # fmt: skip
    wanted = case.output_type if case.output_type is not None else output_type
    run = CaseRun(case, rep, output_type=wanted)
    begun = time.perf_counter()
    agent: Agent | None = None
    masker = Masker(None, {})
    try:
        agent = await _build(factory, takes, session_id, store)
        run.session_id = agent.session_id
        result = await _invoke(agent, case, wanted, run)
        rounds = 0
        while result.stop_reason == "interrupt":
            known = {it.id for it in run.interrupts}
            run.interrupts += [it for it in result.interrupts if it.id not in known]
            responses = None if rounds >= MAX_ROUNDS else await _answer(answers, result.interrupts)
            rounds += 1
            if responses is None:
                run.status = "interrupted"
                break
            result = await _resume(agent, responses, wanted, run)
    except _Failed:
        run.status = "error"
    except Exception as exc:  # the factory's or the answers function's: an error row
        run.status = "error"
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        run.latency = time.perf_counter() - begun
        if agent is not None:
            run.messages = list(agent.messages)
            masker = _masker(agent, run)
            agent.close()
    return run, masker


def _masker(agent: Agent, run: CaseRun) -> Masker:
    """The redaction of what the report shows of this run: the agent's redactor, its tree's
    hidden strings and model keys, and every secret its tool calls' arguments hold."""
    from tether.governance.masks import model_keys
    from tether.governance.redaction import redactor_of

    hidden = set(agent.runtime.hidden) | model_keys(agent.runtime.model)
    try:
        return _learned(Masker(redactor_of(agent), {}, set(hidden)), run)
    except Exception:  # the agent's own redactor raised: the default masks still apply
        return _learned(Masker(None, {}, hidden), run)


def _learned(masker: Masker, run: CaseRun) -> Masker:
    for call in run.tool_calls:
        masker.learn(call.name, dict(call.arguments))
    for it in run.interrupts:
        masker.interrupt(it)
    return masker


class _Failed(Exception):
    """A run raised; ``run.error`` and ``run.result`` hold what it left."""


async def _invoke(agent: Agent, case: Case, wanted: Any, run: CaseRun) -> Result:
    return await _step(agent.invoke_async(case.input, output_type=wanted), run)


async def _resume(agent: Agent, responses: dict[str, Any], wanted: Any, run: CaseRun) -> Result:
    return await _step(agent.resume_async(responses, output_type=wanted), run)


async def _step(call: Any, run: CaseRun) -> Result:
    try:
        result: Result = await call
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, RunError) and exc.result is not None:
            _account(run, exc.result)
        raise _Failed from exc
    _account(run, result)
    return result


def _account(run: CaseRun, result: Result) -> None:
    run.result = result
    run.input_tokens += result.usage.input_tokens
    run.output_tokens += result.usage.output_tokens
    run.cost = add_cost(run.cost, result.usage.cost)
    run.session_id = result.session_id


async def _answer(
    answers: Callable[[Interrupt], Any] | None, pending: list[Interrupt]
) -> dict[str, Any] | None:
    if answers is None or not pending:
        return None
    responses: dict[str, Any] = {}
    for it in pending:
        answer = answers(it)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer is None:
            return None
        responses[it.id] = answer
    return responses


async def _build(
    factory: AppFactory, takes: set[str], session_id: str, store: Store | None
) -> Agent:
    kwargs: dict[str, Any] = {}
    if "session_id" in takes:
        kwargs["session_id"] = session_id
    if store is not None and "store" in takes:
        kwargs["store"] = store
    agent = await factory.build_async(**kwargs)
    if store is not None and agent.store is not store:
        agent = agent.clone(store=store, session_id=kwargs.get("session_id", session_id))
    return agent


def _keywords(factory: Callable[..., Any]) -> set[str]:
    """Of ``session_id`` and ``store``, the keywords ``factory`` accepts."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return set()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return {"session_id", "store"}
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name in ("session_id", "store")}  # fmt: skip
