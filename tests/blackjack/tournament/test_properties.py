"""Properties: the ranking is a total order with the eliminated below everyone still in
(Art. 25); the prizes add up to the pool exactly and never grow with the place (Art. 26);
any tournament played to its end pays out its whole pool."""

from __future__ import annotations

import random

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from blackjack.tournament import commands as C
from blackjack.tournament.coordinator import Coordinator, in_play
from blackjack.tournament.prizes import split
from blackjack.tournament.ranking import key, ranked
from blackjack.tournament.state import Result, TournamentState


@st.composite
def results(draw):
    n = draw(st.integers(1, 25))
    out = []
    for i in range(n):
        kind = draw(st.sampled_from(["", "", "eliminated", "expelled"]))
        out.append(Result(player=f"q{i}", table="t", points=draw(st.integers(1, 6)) * 50 if kind == "" else 0,
                          out=kind, hand=draw(st.integers(1, 5)), stack_before=draw(st.integers(1, 3)) * 10))
    order = draw(st.permutations([r.player for r in out]))
    return out, {p: i for i, p in enumerate(order)}


@given(results(), st.randoms(use_true_random=False))
def test_ranking_is_a_total_order_with_the_eliminated_below(case, rnd):
    rs, draw = case
    keys = [key(r, draw) for r in rs]
    assert len(set(keys)) == len(keys)  # no two players ever rank equal
    shuffled = list(rs)
    rnd.shuffle(shuffled)
    order = ranked(rs, draw)
    assert [r.player for r in ranked(shuffled, draw)] == [r.player for r in order]  # whatever the input order
    rank = {"": 0, "eliminated": 1, "expelled": 2}
    assert [rank[r.out] for r in order] == sorted(rank[r.out] for r in order)  # in, then out, then expelled
    still_in = [r.points for r in order if r.out == ""]
    assert still_in == sorted(still_in, reverse=True)
    gone = [(r.hand, r.stack_before) for r in order if r.out == "eliminated"]
    assert gone == sorted(gone, reverse=True)  # a later hand, then more points before it, ranks higher


@st.composite
def splits(draw):
    """A prize split as the spec allows it: 1-7 shares of 1-100%, adding up to 100, best first."""
    places = draw(st.integers(1, 7))
    cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=places - 1, max_size=places - 1, unique=True)))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
    return sorted(shares, reverse=True)


@given(st.integers(0, 10**15), splits(), st.integers(1, 30))
def test_prizes_add_up_to_the_pool_and_never_grow_with_the_place(pool, percents, players):
    prizes = split(pool, percents, players)
    assert len(prizes) == min(players, len(percents))
    assert sum(prizes) == pool
    assert prizes == sorted(prizes, reverse=True) and min(prizes) >= 0
    assert all(prizes[i] == pool * percents[i] // 100 for i in range(1, len(prizes)))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(1, 9_999), st.integers(0, 2**32))
def test_any_tournament_pays_out_its_whole_pool(kit, n, buy_in, seed):
    """Play to the end with random points (often level, so tie-breaks happen), random
    eliminations and the odd expulsion: it always ends, with every admitted player placed
    once, the expelled last, and the whole pool paid (unless nobody is left to pay)."""
    rnd = random.Random(seed)
    cup = kit.Cup(buy_in=buy_in)
    cup.start(kit.names(n), draw=f"{seed:010x}")
    for round_ in range(40):
        if cup.s.status != "running":
            break
        if rnd.random() < 0.15:
            candidates = [p for p in kit.names(n) if in_play(cup.s, p)]
            if candidates:
                cup.do(C.Expel(player=rnd.choice(candidates)))
        live = [p for p, r in cup.s.phases[-1].results.items() if r.out == ""]
        gone = {p: (rnd.randint(1, 9), rnd.randint(1, 3) * 10) for p in live if rnd.random() < 0.2}
        # Level points often; after a while all different, so the tie-breaks end.
        points = {p: (rnd.randint(1, 3) * 100 if round_ < 10 else 100 + i) for i, p in enumerate(live)}
        cup.play(points, gone)
        raw = msgspec.json.encode(cup.s)  # stored and reloaded between any two commands
        cup.c = Coordinator.from_state(msgspec.json.decode(raw, type=TournamentState))
        assert msgspec.json.encode(cup.s) == raw
    assert cup.s.status == "finished"
    finished = cup.s
    assert sorted(x.player for x in finished.standings) == sorted(kit.names(n))
    assert [x.place for x in finished.standings] == list(range(1, n + 1))
    expelled = [x.player for x in finished.standings if x.out == "expelled"]
    assert expelled == finished.expelled and [x.player for x in finished.standings[n - len(expelled):]] == expelled
    last = finished.phases[finished.stages[-1].phase - 1].results  # Art. 26: the final table's
    paid = any(p not in finished.expelled for p in last)
    assert sum(finished.prizes.values()) == (buy_in * n if paid else 0)
    by_place = [finished.prizes.get(x.player, 0) for x in finished.standings]
    assert by_place == sorted(by_place, reverse=True)
    assert not cup.c.pending_orders()
