"""The card's skills given by hand: ``tether serve --a2a-skills skills.json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tether import Agent
from tether.a2a.skills import load_skills
from tether.durable import SQLiteStore
from tether.errors import ConfigurationError
from tether.models import ScriptedModel
from tether.ops.server import create_app

SKILLS = [
    {"id": "refunds", "name": "Refunds", "description": "Refunds an order.", "tags": ["billing"]},
    {"id": "status", "name": "Order status", "description": "Says where an order is.",
     "examples": ["where is order 7?"]},
]  # fmt: skip


def test_given_skills_replace_the_ones_made_from_the_tools(tmp_path: Path) -> None:
    path = tmp_path / "skills.json"
    path.write_text(json.dumps(SKILLS))

    def make_agent(session_id: str) -> Agent:
        return Agent(model=ScriptedModel(["hi"]), store=SQLiteStore(tmp_path / "t.db"),
                     session_id=session_id)  # fmt: skip

    app = create_app(SQLiteStore(tmp_path / "t.db"), app_factory=make_agent,
                     a2a_skills=load_skills(path))  # fmt: skip
    with TestClient(app) as client:
        card = client.get("/.well-known/agent-card.json").json()
    assert [s["id"] for s in card["skills"]] == ["refunds", "status"]
    assert card["skills"][0]["tags"] == ["billing"]
    assert card["skills"][1]["examples"] == ["where is order 7?"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ("[]", "a JSON list of 1 to 100 skills"),
        ('[{"id": "a", "name": "A"}]', "skill 0: 'description' must be a non-empty string"),
        ('[{"id": "a", "name": "A", "description": "d", "tags": "x"}]', "'tags' must be a list"),
        ('[{"id": "a", "name": "A", "description": "d", "url": "x"}]', "unknown field(s) url"),
    ],
)
def test_a_bad_skills_file_is_refused_naming_the_skill_and_field(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "skills.json"
    path.write_text(content)
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_skills(path)


def test_tether_serve_refuses_a_bad_skills_file_before_it_starts(tmp_path: Path) -> None:
    path = tmp_path / "skills.json"
    path.write_text("[1]")
    tether = str(Path(sys.executable).with_name("tether"))
    done = subprocess.run(
        [tether, "serve", "--store", str(tmp_path / "t.db"), "--a2a-skills", str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "skill 0 is not an object" in done.stderr
    assert not (tmp_path / "t.db").exists()  # nothing started, nothing created
