"""``games.commands.checked_actor``: the engines' check of who acts, remembered for valid
actors only; an invalid one gets the engine's own refusal every time."""

from __future__ import annotations

import pytest

from games.commands import Actor, checked_actor
from games.validation import validated
from roulette import commands as RC


def test_a_valid_actor_comes_back_equal_and_is_remembered():
    a = Actor("p17", "croupier")
    assert checked_actor(a) == a
    assert checked_actor(Actor("p17", "croupier")) is checked_actor(a)  # (the first answer, kept)


class Name(str):
    pass


@pytest.mark.parametrize("bad", [Actor(""), Actor("p1", "king"), Actor("p\x00"), Actor(["p1"]),  # type: ignore[arg-type]
                                 Actor(Name("p1"))])  # (equal to a remembered actor, and refused)
@pytest.mark.parametrize("check", [validated, RC.bounded])  # blackjack's check, roulette's
def test_an_invalid_actor_is_refused_every_time_as_its_check_refuses_it(bad, check):
    checked_actor(Actor("p1"))  # a valid one remembered first changes nothing for the others
    for _ in range(2):
        assert _refusal(lambda: checked_actor(bad, check)) == _refusal(lambda: check(bad))


def _refusal(call) -> tuple[type, str]:
    with pytest.raises(Exception) as refused:
        call()
    return type(refused.value), getattr(refused.value, "code", "")
