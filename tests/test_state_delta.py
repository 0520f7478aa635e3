import pytest

from tether.state_delta import apply_delta, smaller, state_delta


@pytest.mark.parametrize(
    ("old", "new", "delta"),
    [
        ({}, {"a": 1}, {"set": {"a": 1}}),
        ({"a": 1}, {"a": 2}, {"set": {"a": 2}}),
        ({"log": "abc"}, {"log": "abcdef"}, {"extend": {"log": "def"}}),
        ({"xs": [1, 2]}, {"xs": [1, 2, 3]}, {"extend": {"xs": [3]}}),
        ({"xs": [1, 2]}, {"xs": [2, 3]}, {"set": {"xs": [2, 3]}}),
        ({"log": "abc"}, {"log": "ab"}, {"set": {"log": "ab"}}),
        ({"a": 1, "b": 2}, {"a": 1}, {"del": ["b"]}),
        ({"a": "1"}, {"a": ["1"]}, {"set": {"a": ["1"]}}),
        ({"a": 1}, {"a": 1}, {}),
    ],
)
def test_delta_and_apply_round_trip(old, new, delta):
    assert state_delta(old, new) == delta
    assert apply_delta(old, delta) == new


def test_a_growing_field_costs_only_its_growth():
    old = {"log": "x" * 10_000}
    new = {"log": "x" * 10_000 + "y" * 200}
    delta = state_delta(old, new)
    assert smaller(delta, new)
    assert len(str(delta)) < 300
