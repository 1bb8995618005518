"""The house's cut at an RNG blackjack table falls within the table's own shoe: a tournament
table's shoe may be smaller than its house's (the demo's Sit&Go plays one deck; the cut was
drawn over the house's six and refused ``cut_out_of_bounds`` until this was mended)."""

from __future__ import annotations

from blackjack.round.shoe_commands import cut_bounds
from server.kinds.base import TableInfo
from server.kinds.blackjack import BlackjackKind


def test_the_house_cuts_within_the_tables_own_shoe():
    kind = BlackjackKind()
    for decks in (1, 2, 6):
        table = TableInfo("t", "blackjack", "titano", "rng", "EUR", "t", {"decks": decks})
        profile = kind.new_engine(table).state.profile
        assert profile.cards == 52 * decks
        lo, hi = cut_bounds(profile, profile.cards)
        cuts = {kind._random_cut(table) for _ in range(300)}
        assert lo <= min(cuts) and max(cuts) <= hi, (decks, lo, hi, min(cuts), max(cuts))
