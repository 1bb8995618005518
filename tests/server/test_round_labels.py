"""Which round recall (GET /tables/{id}/rounds/{round}) files each blackjack event under: a
round's end and what that end brings in the same command (the button, the shoe's end and
the server's reveal of its order) belong to the round that ended; round_opened starts the next."""

from __future__ import annotations

from blackjack import events as E
from server.kinds.blackjack import KIND, ShoeRevealed

REVEAL = ShoeRevealed(commitment="c0ffee", salt="00" * 16, order=[0, 1, 2])


def test_the_shoe_reveal_after_a_shoes_last_round_is_filed_under_that_round():
    events = [E.RoundSettled(round=7, last_of_shoe=True), E.ButtonMoved(box=3),
              E.ShoeEnded(cut_entitled=""), REVEAL]
    assert KIND.label_rounds(events, "round-7", "round-8") == ["round-7"] * 4


def test_a_round_ending_mid_shoe_leaves_the_next_round_its_opening():
    events = [E.RoundSettled(round=7, last_of_shoe=False), E.ButtonMoved(box=3),
              E.RoundOpened(round=8, min_bet=1_000, max_bet=10_000, button=3)]
    assert KIND.label_rounds(events, "round-7", "round-8") == ["round-7", "round-7", "round-8"]


def test_a_whole_round_voided_at_the_shoes_end_keeps_the_reveal():
    events = [E.RoundVoided(round=4, by="chef", reason="misdeal", boxes=[]), E.ShoeEnded(cut_entitled=""),
              REVEAL]
    assert KIND.label_rounds(events, "round-4", "round-5") == ["round-4"] * 3


def test_a_shoe_ended_between_rounds_stays_with_the_round_in_betting():
    # A reshuffle with no round played: nothing ends, the round id does not change.
    events = [E.ShoeEnded(cut_entitled=""), REVEAL]
    assert KIND.label_rounds(events, "round-9", "round-9") == ["round-9", "round-9"]


def test_a_partial_void_is_not_the_rounds_end():
    events = [E.RoundVoided(round=4, by="chef", reason="box 2 left", boxes=[2])]
    assert KIND.label_rounds(events, "round-4", "round-4") == ["round-4"]
