"""The official ``@ag-ui/client`` HttpAgent (npm) against ``POST /ag-ui``: text, tools,
an interrupt outcome, resume entries resolved and cancelled, front-end tools, the state
snapshot and sub-agent attribution, in one Node script (tests/support/ag_ui/client.cjs).

The package is installed once per test session with the machine's npm into the repo's
``.cache/ag-ui-client`` (kept between sessions, never under /tmp's rotated tree); without
node, npm or the registry the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ag_ui_app import SECRET

CLIENT = "@ag-ui/client"
VERSION = "1.0.0"
HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent / "support" / "ag_ui" / "client.cjs"
CACHE = HERE.parent.parent / ".cache" / "ag-ui-client"


def _installed() -> bool:
    manifest = CACHE / "node_modules" / "@ag-ui" / "client" / "package.json"
    try:
        return json.loads(manifest.read_text())["version"] == VERSION
    except (OSError, ValueError, KeyError):
        return False


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """Where ``@ag-ui/client`` is installed (installed now when missing)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run the @ag-ui/client HttpAgent")
    if not _installed():
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / "package.json").write_text('{"private": true}\n')
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", f"{CLIENT}@{VERSION}"],
                cwd=CACHE,
                capture_output=True,
                text=True,
                timeout=300,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {CLIENT}@{VERSION} took over 300 s (registry unreachable?)")
        if done.returncode != 0 or not _installed():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(f"npm could not install {CLIENT}@{VERSION}: {' / '.join(tail)}")
    return CACHE / "node_modules"


def test_the_official_http_agent_drives_every_feature(served, node_modules):
    env = {
        **os.environ,
        "NODE_PATH": str(node_modules),
        "CALLER_TOKEN": served.tokens["caller"],
        "BOSS_TOKEN": served.tokens["boss"],
        "SUFFIX": "n1",
    }
    done = subprocess.run(
        ["node", str(SCRIPT), served.url],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])

    text = out["text"]
    assert text["types"][0] == "RUN_STARTED"
    assert text["types"][-1] == "RUN_FINISHED"
    assert "REASONING_MESSAGE_CONTENT" in text["types"]
    assert "STEP_STARTED" in text["types"]
    assert text["assistant"] == ["hello, Ann"]
    assert text["result"]["text"] == "hello, Ann"

    tools = out["tools"]
    assert tools["state"] == {"notes": ["milk"]}
    assert tools["toolMessages"] == ["noted milk"]
    assert tools["result"]["text"] == "done: noted milk"

    pay = out["pay"]
    assert pay["outcome"] == "interrupt"
    assert [p["toolCallId"] for p in pay["pending"]] == ["t1", "t2"]
    assert pay["pending"][0]["message"] == "send 500 to bob?"
    assert pay["pending"][0]["arguments"]["api_token"] != SECRET
    assert pay["resumedOutcome"] == "success", pay
    assert pay["error"] is None
    assert dict(pay["results"])["t1"] == "sent 500 to bob"
    assert "denied" in dict(pay["results"])["t2"]
    assert pay["leftPending"] == 0
    assert served.ran == [{"to": "bob", "amount": 500}]  # once; the tree waits on kim

    front = out["front"]
    assert front["outcome"] == {"type": "success", "pendingToolCallIds": ["f1"]}
    assert front["call"] == {
        "id": "f1",
        "name": "pick_color",
        "arguments": {"options": ["red", "blue"]},
    }
    assert front["outcome2"] == "success"
    assert front["result"]["text"] == "the user chose: blue (tools: pick_color)"

    tree = out["tree"]
    assert tree["started"] == [["helper#p1", "helper", "p1"]]
    assert tree["attributed"] == [["helper#p1", "child working"]]
    assert tree["outcome"] == "interrupt"
    assert tree["interrupts"] == ["helper#p1"]
