"""The prize pool and its split (Art. 26), and the end of the tournament.

The pool is the admitted players' buy-ins (the fee is the house's). Place ``i >= 2`` gets
``pool * prizes[i-1] // 100`` (rounded down to the cent); the first place gets the rest:
the cents the rounding left, and the share of any prize place nobody fills. So the prizes
always add up to the pool exactly, and a better place never gets less.

>>> split(49_995, [60, 25, 15], 7)
[29998, 12498, 7499]
>>> split(10_000, [60, 25, 15], 2)
[7500, 2500]
"""

from __future__ import annotations

from collections.abc import Sequence

from blackjack.tournament.events import Event, Finished, PoolForfeited, PrizePaid
from blackjack.tournament.ranking import final_standings, stage_order
from blackjack.tournament.state import TournamentState


def split(pool: int, percents: Sequence[int], players: int) -> list[int]:
    """The prizes of places 1, 2, ... for ``players`` players who can be paid."""
    places = min(len(percents), players)
    if places <= 0:
        return []
    rest = [pool * p // 100 for p in percents[1:places]]
    return [pool - sum(rest), *rest]


def finish(s: TournamentState, out: list[Event]) -> None:
    """Art. 26: pay the prize places of the last stage played (the final table's; the
    elimination's when nobody was left for a final), the expelled never; if every player
    there was expelled, the best-placed others; if everyone was, the pool is forfeited to
    the house (Art. 21: the Direzione's call; a pool is never left unpaid). Then the end."""
    standings = final_standings(s)
    payable = [p for p in stage_order(s, s.stages[-1]) if p not in s.expelled]
    if not payable:  # every finalist expelled: the best-placed players not expelled (Art. 21)
        payable = [st.player for st in standings if st.player not in s.expelled]
    amounts = split(s.pool, s.spec.prizes, len(payable))
    if not amounts and s.pool:  # nobody may be paid (all expelled): the pool goes to the house
        out.append(PoolForfeited(amount=s.pool, reason="every player was expelled"))
    prizes: dict[str, int] = {}
    for place, (player, amount) in enumerate(zip(payable, amounts, strict=False), 1):
        if amount > 0:  # a zero prize moves no money
            prizes[player] = amount
            out.append(PrizePaid(player=player, place=place, amount=amount))
    s.status, s.standings, s.prizes = "finished", standings, prizes
    out.append(Finished(standings=standings, prizes=dict(prizes)))
