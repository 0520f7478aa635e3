"""``import tether`` must not load heavy dependencies (its time is measured in bench/)."""

import json
import subprocess
import sys

HEAVY = (
    "pydantic",
    "typer",
    "rich",
    "openai",
    "anthropic",
    "boto3",
    "google.genai",
    "httpx",
    "docstring_parser",
    "sqlite3",
    "psycopg",
    "agent_hooks",
    "starlette",
    "tether.durable.memory",
    "tether.mcp",
    "mcp",
    "mcp_types",
    "jsonschema",
    "anyio",
    "opentelemetry",
    "tether.observe",
    "genai_prices",
)


def test_import_tether_loads_no_heavy_dependency():
    code = f"import sys, json, tether;print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
