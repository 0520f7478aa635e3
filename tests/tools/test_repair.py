import pytest

from tether.tools.repair import describe_available, repair_tool_name

TOOLS = ["read_file", "write_file", "list_dir", "search", "rm"]


def test_exact_match() -> None:
    assert repair_tool_name("read_file", TOOLS) == "read_file"


def test_case_insensitive() -> None:
    assert repair_tool_name("Search", TOOLS) == "search"


def test_case_insensitive_ambiguity() -> None:
    assert repair_tool_name("FETCH", ["Fetch", "fetch"]) is None


@pytest.mark.parametrize("name", ["readFile", "read-file", "READ_FILE", "Read File", "ReadFile"])
def test_separators_and_camel_case(name: str) -> None:
    assert repair_tool_name(name, TOOLS) == "read_file"


@pytest.mark.parametrize(
    "name",
    [
        "functions.read_file",
        "function.read_file",
        "tools.read_file",
        "tool.read_file",
        "default_api.read_file",
        "mcp__filesystem__read_file",
        "read_file_tool",
        "tool_read_file",
        "functions.readFile",
    ],
)
def test_namespace_prefixes_and_suffixes(name: str) -> None:
    assert repair_tool_name(name, TOOLS) == "read_file"


def test_namespace_on_the_available_side() -> None:
    assert repair_tool_name("read_file", ["mcp__fs__read_file", "mcp__fs__write_file"]) == (
        "mcp__fs__read_file"
    )
    assert repair_tool_name("functions.read_file", ["mcp__fs__read_file"]) == "mcp__fs__read_file"


def test_stripping_prefers_the_bare_name() -> None:
    assert repair_tool_name("tools.search", ["search", "search_tool"]) == "search"


def test_stripping_ambiguity() -> None:
    assert repair_tool_name("read", ["mcp__a__read", "mcp__b__read"]) is None


def test_typos_within_distance_two() -> None:
    assert repair_tool_name("raed_file", TOOLS) == "read_file"  # transposition
    assert repair_tool_name("read_fil", TOOLS) == "read_file"
    assert repair_tool_name("serch", TOOLS) == "search"
    assert repair_tool_name("functions.reed_file", TOOLS) == "read_file"


def test_typo_distance_limits() -> None:
    assert repair_tool_name("rread_filee_", TOOLS) == "read_file"  # normalized: 2 edits
    assert repair_tool_name("reaad_fiiile", TOOLS) is None  # 3 edits
    assert repair_tool_name("rn", TOOLS) == "rm"  # short names: 1 edit
    assert repair_tool_name("mv", ["rm"]) is None  # short names: not 2


def test_typo_ambiguity() -> None:
    assert repair_tool_name("xead_file", ["read_file", "head_file"]) is None


def test_no_match() -> None:
    assert repair_tool_name("delete_everything", TOOLS) is None
    assert repair_tool_name("anything", []) is None


def test_describe_available() -> None:
    assert describe_available("x", ["c", "a", "b"]) == "Unknown tool 'x'. Available tools: a, b, c."
    assert describe_available("x", []) == "Unknown tool 'x'. No tools are available."
