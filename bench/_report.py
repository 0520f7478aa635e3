"""Summaries, ratios, targets and tables (rich when importable, else plain text)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from _runs import Row

MEDIAN_TARGET_US = 60.0
RATIO_TARGETS = (("maf", "MAF", 0.16), ("strands", "Strands", 0.08))
HOOKS_TARGET = ("tether-hooks", "maf-hooks", 0.5)
"""tether + AGENT-HOOKS over MAF + AGENT-HOOKS (one allow-all interceptor each)."""
TRACED = (
    ("sdk-noop", "tether-otel-noop", "strands-otel-noop", "maf-otel-noop"),
    ("sdk-batch", "tether-otel-batch", "strands-otel-batch", "maf-otel-batch"),
)
"""Traced rows side by side: (variant, tether, Strands, MAF), all on one shared exporter."""
UNTRACED = {"tether-otel": "tether-otel-off", "strands-otel": "strands", "maf-otel": "maf"}
"""The untraced row each traced row's cost of tracing is measured against."""
MEMORY_TARGET_B = 1.0
"""Below this many bytes per invocation counts as "no growth" for tether."""
TOOL_NOTE = (
    "tool: `async def add(a: int, b: int) -> int` in every row, except "
    "'tether (sync tool)': `def add` (tether runs it in a thread pool)"
)


def summarize(result: dict[str, Any]) -> dict[str, float]:
    """Median over repeats of the per-repeat median and p99 (microseconds)."""
    reps = result["repeats"]
    return {
        "median_us": statistics.median(r["median_us"] for r in reps),
        "p99_us": statistics.median(r["p99_us"] for r in reps),
    }


def _table(title: str, headers: Sequence[str], rows: list[list[str]], caption: str = "") -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

        def line(cells: Sequence[str]) -> str:
            cols = enumerate(zip(cells, widths, strict=True))
            return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in cols)

        print(f"\n{title}")
        print(line(headers))
        print(line(["-" * w for w in widths]))
        for r in rows:
            print(line(r))
        if caption:
            print(caption)
        return
    table = Table(title=title, caption=caption, caption_justify="left")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i < 2 else "right")
    for r in rows:
        table.add_row(*r)
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 120))
    console.print(table)


def _errors(rows: list[Row], errors: dict[str, str]) -> None:
    for row in rows:
        if row.key in errors:
            print(f"not run: {row.label}: {errors[row.key]}")


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def timing(rows: list[Row], results: dict[str, dict[str, Any]], meta: str) -> dict[str, Any]:
    """Print the overhead table, ratios and targets; return the summary for JSON."""
    summary = {k: summarize(v) for k, v in results.items() if "error" not in v}
    base = summary.get("tether", {}).get("median_us")
    table_rows = []
    for row in rows:
        res = results[row.key]
        if "error" in res:
            table_rows.append([row.label, row.tool, "-", "-", "-", "not run (below)"])
            continue
        s = summary[row.key]
        rel = f"{s['median_us'] / base:.2f}" if base else "-"
        reps = " / ".join(f"{r['median_us']:.1f}" for r in res["repeats"])
        med, p99 = f"{s['median_us']:.1f}", f"{s['p99_us']:.1f}"
        table_rows.append([row.label, row.tool, med, p99, rel, reps])
    headers = [
        "framework",
        "tool",
        "median us",
        "p99 us",
        "ratio to tether (async)",
        "per-repeat medians",
    ]
    _table(f"Per-invocation overhead: {meta}", headers, table_rows, TOOL_NOTE)
    _errors(rows, {k: v["error"] for k, v in results.items() if "error" in v})

    checks: dict[str, Any] = {}
    if base is not None:
        ok = base <= MEDIAN_TARGET_US
        checks["tether_median_us"] = {"value": base, "target": MEDIAN_TARGET_US, "ok": ok}
        wanted = f"(target <= {MEDIAN_TARGET_US:g} us)"
        print(f"tether median       {base:8.1f} us  {wanted}  {_verdict(ok)}")
        for key, name, limit in RATIO_TARGETS:
            if key in summary:
                ratio = base / summary[key]["median_us"]
                ok = ratio <= limit
                checks[f"tether/{name}"] = {"value": ratio, "target": limit, "ok": ok}
                print(f"tether/{name:<12} {ratio:8.3f}     (target <= {limit:g})  {_verdict(ok)}")
    _tracing(summary, results)
    mine, theirs, limit = HOOKS_TARGET
    if mine in summary and theirs in summary:
        ratio = summary[mine]["median_us"] / summary[theirs]["median_us"]
        ok = ratio <= limit
        checks["tether-hooks/MAF-hooks"] = {"value": ratio, "target": limit, "ok": ok}
        print(f"AGENT-HOOKS tether/MAF {ratio:6.3f}  (target <= {limit:g})  {_verdict(ok)}")
    return {"summary": summary, "targets": checks}


def _tracing(summary: dict[str, dict[str, float]], results: dict[str, Any]) -> None:
    """With tracing on: tether over each peer (same exporter) and each one's cost of tracing."""
    lines = []
    for variant, *keys in TRACED:
        here = [k for k in keys if k in summary]
        if not here:
            continue
        cells = []
        for key in here:
            med = summary[key]["median_us"]
            base = UNTRACED[key.rsplit("-", 1)[0]]
            cost = f", {med / summary[base]['median_us']:.2f}x untraced" if base in summary else ""
            spans = results[key].get("tracing", {}).get("spans_per_invocation")
            per = f", {spans:.0f} spans/inv" if spans is not None else ""
            cells.append(f"{key.split('-')[0]} {med:.1f} us{cost}{per}")
        ratios = [
            f"tether/{name} {summary[keys[0]]['median_us'] / summary[k]['median_us']:.3f}"
            for name, k in (("Strands", keys[1]), ("MAF", keys[2]))
            if keys[0] in summary and k in summary
        ]
        lines.append(f"tracing on ({variant}): " + "; ".join(cells))
        if ratios:
            lines.append(f"  traced ratios ({variant}): " + ", ".join(ratios))
    for line in lines:
        print(line)


def memory(rows: list[Row], results: dict[str, dict[str, Any]], meta: str) -> dict[str, Any]:
    """Print bytes of growth per invocation per framework; return the summary for JSON."""
    table_rows, summary = [], {}
    for row in rows:
        heap, rss = results[row.key]["heap"], results[row.key]["rss"]
        if "error" in heap or "error" in rss:
            table_rows.append([row.label, row.tool, "not run (below)", "-", "-"])
            continue
        end = rss["points"][str(rss["total"])]["rss"] / 2**20
        summary[row.key] = {
            "heap_b_per_inv": heap["bytes_per_inv"],
            "rss_b_per_inv": rss["bytes_per_inv"],
        }
        cells = [f"{heap['bytes_per_inv']:.1f}", f"{rss['bytes_per_inv']:.1f}", f"{end:.1f}"]
        table_rows.append([row.label, row.tool, *cells])
    headers = ["framework", "tool", "heap B/inv", "RSS B/inv", "RSS MiB at end"]
    caption = (
        "heap: tracemalloc current size after gc.collect(), (at N - at mark) / (N - mark); "
        "RSS: same, measured in a separate run without tracemalloc"
    )
    _table(f"Memory growth per invocation: {meta}", headers, table_rows, caption)
    errors = {k: v.get("error") for k, r in results.items() for v in r.values() if "error" in v}
    _errors(rows, {k: str(v) for k, v in errors.items()})
    checks: dict[str, Any] = {}
    if "tether" in summary:
        growth = summary["tether"]["heap_b_per_inv"]
        ok = growth < MEMORY_TARGET_B
        checks["tether_heap_b_per_inv"] = {"value": growth, "target": "~0", "ok": ok}
        print(f"tether heap growth  {growth:8.2f} B/invocation  (target ~0)  {_verdict(ok)}")
    return {"summary": summary, "targets": checks}
