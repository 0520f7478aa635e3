import dataclasses
import enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel

from tether.tools import ToolContext
from tether.tools.hints import accepts_text, is_choice, is_context, may_be_container


class Model(BaseModel):
    x: int


@dataclasses.dataclass
class Data:
    x: int


class Mode(enum.Enum):
    A = "a"


def test_is_context() -> None:
    assert is_context(ToolContext)
    assert is_context(ToolContext | None)
    assert is_context(Annotated[ToolContext, "meta"])
    assert not is_context(int)


def test_is_choice_ignores_none() -> None:
    assert is_choice(int | list[int])
    assert is_choice(int | str | None)
    assert not is_choice(int | None)
    assert not is_choice(int)


@pytest.mark.parametrize(
    "hint", [str, Any, object, Literal["a", "b"], Mode, str | list[int], Annotated[str, "m"]]
)
def test_accepts_text(hint: Any) -> None:
    assert accepts_text(hint)


@pytest.mark.parametrize("hint", [int, list[str], Literal[1, 2], Model | None])
def test_does_not_accept_text(hint: Any) -> None:
    assert not accepts_text(hint)


@pytest.mark.parametrize(
    "hint", [list[int], dict[str, int], tuple[int, str], set[int], Model, Data, int | list[int]]
)
def test_may_be_container(hint: Any) -> None:
    assert may_be_container(hint)


@pytest.mark.parametrize("hint", [int, str, bytes, float, Mode, Literal["a"], Any])
def test_is_not_container(hint: Any) -> None:
    assert not may_be_container(hint)
