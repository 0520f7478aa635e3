"""A case of a dataset: an input, what is expected of the run, and free metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.errors import ConfigurationError
from tether.messages import Message

MAX_NAME = 200
MAX_VALUES = 1_000_000  # values in one case (YAML aliases can make a small file huge)
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """A tool call a case expects: the tool's ``name`` and, unless None, its ``args``."""

    name: str
    args: dict[str, Any] | None = None

    def to_data(self) -> str | dict[str, Any]:
        return self.name if self.args is None else {"name": self.name, "args": self.args}


@dataclass(frozen=True)
class Case:
    """One input to run and what the evaluators may check it against.

    ``input`` is a prompt (a str or a list of Messages); ``expected_output`` any JSON
    value; ``expected_tools`` the expected tool calls (a tool name, ``{"name", "args"}``
    or an :class:`ExpectedCall` each); ``metadata`` free JSON; ``output_type`` (code, not
    data: never saved to a file) the structured output this case's run asks for.
    """

    name: str
    input: str | list[Message]
    expected_output: Any = None
    expected_tools: list[ExpectedCall] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    output_type: Any = None

    def __post_init__(self) -> None:
        where = f"case {self.name!r}" if isinstance(self.name, str) else "a case"
        if not isinstance(self.name, str) or not self.name.strip() or len(self.name) > MAX_NAME:
            raise ConfigurationError(
                f"{where}: name must be a non-empty str of at most {MAX_NAME} characters, "
                f"got {self.name!r:.80}"
            )
        object.__setattr__(self, "input", _prompt(self.input, where))
        check_json(self.expected_output, f"{where}: expected_output")
        if self.expected_tools is not None:
            object.__setattr__(self, "expected_tools", expected_calls(self.expected_tools, where))
        if not isinstance(self.metadata, dict):
            raise ConfigurationError(
                f"{where}: metadata must be a mapping, got {type(self.metadata).__name__}"
            )
        check_json(self.metadata, f"{where}: metadata")

    def to_data(self) -> dict[str, Any]:
        """The case as JSON data (what a dataset file holds)."""
        if self.output_type is not None:
            raise ConfigurationError(
                f"case {self.name!r}: output_type is code and cannot be saved to a file; "
                "pass output_type= to dataset.evaluate(...) instead"
            )
        data: dict[str, Any] = {"name": self.name}
        data["input"] = (
            self.input if isinstance(self.input, str) else [m.to_dict() for m in self.input]
        )
        if self.expected_output is not None:
            data["expected_output"] = self.expected_output
        if self.expected_tools is not None:
            data["expected_tools"] = [c.to_data() for c in self.expected_tools]
        if self.metadata:
            data["metadata"] = self.metadata
        return data


def _prompt(value: Any, where: str) -> str | list[Message]:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        messages: list[Message] = []
        for i, item in enumerate(value):
            if isinstance(item, Message):
                messages.append(item)
                continue
            try:
                messages.append(Message.from_dict(item))
            except Exception as exc:  # a message dict of the wrong form
                raise ConfigurationError(
                    f"{where}: input[{i}] is not a message ({type(exc).__name__}: {exc})"
                ) from None
        return messages
    raise ConfigurationError(
        f"{where}: input must be a str or a non-empty list of messages, got {type(value).__name__}"
    )


def expected_calls(value: Any, where: str) -> list[ExpectedCall]:
    """``value`` (tool names, ``{"name", "args"}`` mappings, ExpectedCalls) checked."""
    if not isinstance(value, list | tuple):
        raise ConfigurationError(
            f"{where}: expected_tools must be a list of tool calls, got {type(value).__name__}"
        )
    calls: list[ExpectedCall] = []
    for i, item in enumerate(value):
        at = f"{where}: expected_tools[{i}]"
        if isinstance(item, ExpectedCall):
            calls.append(item)
        elif isinstance(item, str) and item:
            calls.append(ExpectedCall(item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
            extra = sorted(set(item) - {"name", "args"})
            if extra:
                raise ConfigurationError(f"{at}: unknown field {extra[0]!r} (name, args)")
            args = item.get("args")
            if args is not None and not isinstance(args, dict):
                raise ConfigurationError(f"{at}: args must be a mapping, got {type(args).__name__}")
            check_json(args, f"{at}.args")
            calls.append(ExpectedCall(item["name"], args))
        else:
            raise ConfigurationError(
                f"{at}: a tool call is a tool name or {{name, args}}, got {item!r:.80}"
            )
    return calls


def check_json(value: Any, where: str) -> None:
    """Refuse what is not plain JSON data (str keys; no dates, sets, or cycles), bounded."""
    seen = 0
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        seen += 1
        if seen > MAX_VALUES or depth > MAX_DEPTH:
            raise ConfigurationError(
                f"{where}: more than {MAX_VALUES} values or {MAX_DEPTH} levels (a YAML alias loop?)"
            )
        if item is None or isinstance(item, str | bool | int | float):
            continue
        if isinstance(item, dict):
            for key, inner in item.items():
                if not isinstance(key, str):
                    raise ConfigurationError(f"{where}{path}: key {key!r:.40} is not a string")
                stack.append((inner, depth + 1, f"{path}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((inner, depth + 1, f"{path}[{i}]") for i, inner in enumerate(item))
        else:
            raise ConfigurationError(
                f"{where}{path}: {type(item).__name__} is not JSON data (str, number, bool, "
                "null, list, mapping)"
            )
