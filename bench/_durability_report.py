"""Tables, ratios (tether / LangGraph) and targets of the durability benchmark."""

from __future__ import annotations

from typing import Any

from _report import _table

PERSIST_P50_MS = 0.25
RESUME_MS = 5.0
RESUME_RATIO = 0.5
BYTES_RATIO = 0.10
HEADERS = ["measure", "tether", "LangGraph", "tether/LangGraph", "target", "verdict"]


def _ratio(mine: float, theirs: float) -> float:
    return mine / theirs if theirs else float("inf")


def _verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "FAIL")


def _persist(t: dict[str, Any], lg: dict[str, Any], checks: dict[str, Any]) -> list[list[str]]:
    """(a): one row per pairing of a tether measure with the LangGraph measure it matches."""
    pairs = (
        ("per step, loop, idempotent tool | LG NORMAL", "loop-idempotent", "normal", True),
        ("per step, loop, default tool (1 fsync) | LG FULL", "loop-default", "full", False),
        ("raw append, ~300 B message, NORMAL | LG NORMAL", "raw-normal", "normal", True),
        ("raw append, durable=True (FULL) | LG FULL", "raw-full", "full", False),
    )
    rows = []
    for label, mine, theirs, targeted in pairs:
        a, b = t[mine], lg[theirs]
        ratio = _ratio(a["p50_ms"], b["p50_ms"])
        ok = a["p50_ms"] <= PERSIST_P50_MS if targeted else None
        if ok is not None:
            checks[f"a/{mine}/p50_ms"] = {"value": a["p50_ms"], "target": PERSIST_P50_MS, "ok": ok}
        checks[f"a/{mine}/ratio_p50"] = {"value": ratio, "vs": f"langgraph {theirs}"}
        target = f"p50 <= {PERSIST_P50_MS:g} ms" if targeted else ""
        cells = [f"{a['p50_ms']:.3f} / {a['p99_ms']:.3f}", f"{b['p50_ms']:.3f} / {b['p99_ms']:.3f}"]
        rows.append([label, *cells, f"{ratio:.2f}", target, _verdict(ok)])
    return rows


def _resume(t: dict[str, Any], lg: dict[str, Any], checks: dict[str, Any]) -> list[list[str]]:
    rows = []
    for mine, theirs, label, targeted in (
        ("resume", "resume", "-> tool/node running again (default tool)", True),
        ("resume-idempotent", "resume", "-> tool/node running again (idempotent tool)", True),
        ("confirm", "resume", "at a Confirm -> tool runs (default tool)", True),
        ("confirm-idempotent", "resume", "at a Confirm -> tool runs (idempotent tool)", True),
        ("load", "load", "-> suspended state loaded (no resume)", False),
    ):
        a, b = t[mine]["median_ms"], lg[theirs]["median_ms"]
        ok = a <= RESUME_MS and _ratio(a, b) <= RESUME_RATIO if targeted else None
        checks[f"b/{mine}"] = {"value": a, "langgraph": b, "ratio": _ratio(a, b)}
        if ok is not None:
            checks[f"b/{mine}"].update(target=RESUME_MS, target_ratio=RESUME_RATIO, ok=ok)
        target = f"<= {RESUME_MS:g} ms, ratio <= {RESUME_RATIO:g}" if targeted else ""
        cells = [f"{a:.2f}", f"{b:.2f}", f"{_ratio(a, b):.2f}", target, _verdict(ok)]
        if "fsyncs_before_tool" in t[mine]:
            w, f = t[mine]["writes_before_tool"], t[mine]["fsyncs_before_tool"]
            label += f"; before it: writes {'/'.join(map(str, w))}, fsyncs {'/'.join(map(str, f))}"
        rows.append([f"fresh store {label}", *cells])
    return rows


def _bytes(t: dict[str, Any], lg: dict[str, Any], checks: dict[str, Any]) -> list[list[str]]:
    rows = []
    modes = (
        ("messages", "messages", "conversation (LG: dicts, operator.add)"),
        ("messages", "lc", "conversation (LG: ToolMessage, add_messages)"),
        ("state", "state", "state dict / str field"),
    )
    for mode, theirs, what in modes:
        for field, how in (("payload_per_step", "payload"), ("file_per_step", "file")):
            a, b = t[mode][field], lg[theirs][field]
            ratio = _ratio(a, b)
            ok = ratio <= BYTES_RATIO if field == "payload_per_step" else None
            key = f"c/{mode}-vs-{theirs}/{field}"
            checks[key] = {"value": a, "langgraph": b, "ratio": ratio}
            if ok is not None:
                checks[key].update(target=BYTES_RATIO, ok=ok)
            target = f"ratio <= {BYTES_RATIO:g}" if ok is not None else ""
            label = f"{what} grows, {how}"
            rows.append([label, f"{a:,.0f}", f"{b:,.0f}", f"{ratio:.3f}", target, _verdict(ok)])
    return rows


def report(results: dict[str, dict[str, Any]], meta: dict[str, str]) -> dict[str, Any]:
    """Print the three tables; return {"targets": ...} for the JSON file."""
    t, lg = results["tether"], results["langgraph"]
    checks: dict[str, Any] = {}
    _table(
        f"(a) persist latency per step, ms p50 / p99 ({meta['a']})",
        HEADERS,
        _persist(t["a"], lg["a"], checks),
        "tether loop: sum of SQLiteStore.append wall time per model+tool step "
        f"({t['a']['loop-idempotent']['appends_per_step']:g} appends); LangGraph: sum of "
        f"SqliteSaver.put + put_writes per super-step; raw entry {t['a']['raw-normal']['entry_bytes']} B",
    )
    _table(
        f"(b) resume of a suspended session, same process, median ms ({meta['b']})",
        HEADERS,
        _resume(t["b"], lg["b"], checks),
        f"history: tether {t['b']['journal_entries']} journal entries "
        f"({t['b']['journal_bytes']:,} B), LangGraph {lg['b']['checkpoints']} checkpoints; "
        "tether writes before the tool: the lease and one commit of answer + intent "
        "(fsync'd for a non-idempotent tool); LangGraph commits nothing before the node "
        "runs again (its resume value is saved with the step's checkpoint)",
    )
    _table(
        f"(c) bytes stored per step, state grows {meta['grow']} ({meta['c']})",
        HEADERS,
        _bytes(t["c"], lg["c"], checks),
        "stored payload: sum(length(CAST(col AS BLOB))) of tether entries.data / LangGraph "
        "checkpoints.checkpoint+metadata and writes.value; file: after wal_checkpoint(TRUNCATE) "
        "+ VACUUM (includes pages, indexes, schema)",
    )
    return {"targets": checks}
