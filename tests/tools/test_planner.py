import os
from typing import Any

from tether.messages import ToolCall
from tether.tools import Tool, tool
from tether.tools.planner import plan_batches


@tool(read_only=True, path_params="path")
def read_file(path: str) -> str:
    return ""


@tool(path_params="path")
def write_file(path: str, text: str) -> None: ...


@tool(path_params=("src", "dst"))
def move(src: str, dst: str) -> None: ...


@tool(read_only=True, path_params="paths")
def read_many(paths: list[str]) -> str:
    return ""


@tool(read_only=True)
def search(query: str) -> str:
    return ""


@tool
def run_shell(command: str) -> str:
    return ""


@tool(read_only=True, interactive=True)
def ask_user(question: str) -> str:
    return ""


TOOLS: dict[str, Tool] = {
    t.name: t for t in [read_file, write_file, move, read_many, search, run_shell, ask_user]
}


def plan(*calls: tuple[str, dict[str, Any]]) -> list[list[int]]:
    batch = [ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(calls)]
    return plan_batches(batch, TOOLS)


def test_read_only_calls_run_together() -> None:
    assert plan(("search", {}), ("read_file", {"path": "/a"}), ("search", {})) == [[0, 1, 2]]


def test_writes_to_disjoint_paths_run_together() -> None:
    calls = [("write_file", {"path": "/tmp/a"}), ("write_file", {"path": "/tmp/b"})]
    assert plan(*calls) == [[0, 1]]


def test_same_path_conflicts() -> None:
    assert plan(("read_file", {"path": "/a/x"}), ("write_file", {"path": "/a/./x"})) == [[0], [1]]


def test_ancestor_directory_conflicts() -> None:
    assert plan(("move", {"src": "/a", "dst": "/b"}), ("read_file", {"path": "/a/x"})) == [
        [0],
        [1],
    ]
    assert plan(("write_file", {"path": "/"}), ("write_file", {"path": "/etc"})) == [[0], [1]]


def test_sibling_with_common_prefix_does_not_conflict() -> None:
    assert plan(("write_file", {"path": "/a/b"}), ("write_file", {"path": "/a/bc"})) == [[0, 1]]


def test_relative_and_absolute_paths_are_compared() -> None:
    absolute = os.path.join(os.getcwd(), "notes.txt")
    assert plan(("write_file", {"path": "notes.txt"}), ("read_file", {"path": absolute})) == [
        [0],
        [1],
    ]


def test_missing_or_non_string_paths_overlap_everything() -> None:
    assert plan(("write_file", {"path": "/a"}), ("write_file", {"path": 5})) == [[0], [1]]
    assert plan(("write_file", {"path": "/a"}), ("write_file", {})) == [[0], [1]]


def test_lists_of_paths() -> None:
    assert plan(("write_file", {"path": "/a"}), ("read_many", {"paths": ["/b", "/c"]})) == [[0, 1]]
    assert plan(("write_file", {"path": "/a"}), ("read_many", {"paths": ["/b", "/a"]})) == [
        [0],
        [1],
    ]


def test_write_without_path_params_conflicts() -> None:
    assert plan(("search", {}), ("run_shell", {}), ("search", {})) == [[0], [1], [2]]
    assert plan(("read_file", {"path": "/a"}), ("run_shell", {})) == [[0], [1]]


def test_interactive_runs_alone() -> None:
    assert plan(("search", {}), ("ask_user", {}), ("search", {})) == [[0], [1], [2]]


def test_unknown_tool_runs_alone() -> None:
    assert plan(("search", {}), ("nope", {}), ("search", {}), ("search", {})) == [[0], [1], [2, 3]]


def test_order_is_preserved() -> None:
    calls = [
        ("write_file", {"path": "/a"}),
        ("read_file", {"path": "/b"}),
        ("read_file", {"path": "/a"}),  # must wait for the write before it
        ("read_file", {"path": "/c"}),  # could have joined the first group, but stays after
    ]
    assert plan(*calls) == [[0, 1], [2, 3]]
    flat = [i for group in plan(*calls) for i in group]
    assert flat == sorted(flat)
