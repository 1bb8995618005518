"""Basic strategy computed from the profile's rules, not typed in.

Infinite-deck probabilities (each rank 1/13, ten-values 4/13): the dealer's final totals
for each up card, split into "blackjack" and the rest, since with no hole card (or no
peek) a dealer blackjack is only found after the players have doubled and split. Every
player total then gets the expected value of standing, hitting, doubling and splitting
under the profile's own rules (which totals double, double after split, one card on
split aces, what a dealer blackjack takes); the strategy is the best of what is allowed.
Resplits are valued as a single split: this changes no decision of the three houses.
"""

from __future__ import annotations

from functools import lru_cache

import msgspec

from blackjack.cards import VALUE
from blackjack.profiles import Profile

STAND, HIT, DOUBLE, SPLIT = "S", "H", "D", "P"
P = (0.0,) + (1 / 13,) * 9 + (4 / 13,)  # P[v], v = 1 (ace) .. 10


def _best(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard <= 11 else hard


def dealer_outcomes(up: int, hits_soft_17: bool) -> tuple[float, dict[int, float]]:
    """(probability of a dealer blackjack, final totals 17..21 and 22 = bust given no blackjack)."""

    @lru_cache(maxsize=None)
    def final(hard: int, ace: bool) -> tuple[tuple[int, float], ...]:
        best = _best(hard, ace)
        if best > 21:
            return ((22, 1.0),)
        soft = ace and hard <= 11
        if best >= 17 and not (hits_soft_17 and soft and best == 17):
            return ((best, 1.0),)
        out: dict[int, float] = {}
        for v in range(1, 11):
            for k, q in final(hard + v, ace or v == 1):
                out[k] = out.get(k, 0.0) + P[v] * q
        return tuple(out.items())

    pbj = 0.0
    dist: dict[int, float] = {}
    for v in range(1, 11):
        if (up == 1 and v == 10) or (up == 10 and v == 1):
            pbj += P[v]
            continue
        for k, q in final(up + v, up == 1 or v == 1):
            dist[k] = dist.get(k, 0.0) + P[v] * q
    return pbj, {k: q / (1 - pbj) for k, q in dist.items()}


class Strategy:
    """Decisions for one profile: ``action(cards, up, can_double, can_split)``."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        p = profile
        take_all = p.dealer_blackjack_takes == "all"
        # _hs[hard*2+ace][up]: HIT or STAND; _dd: True where doubling beats both.
        self._hs = [[STAND] * 11 for _ in range(64)]
        self._dd = [[False] * 11 for _ in range(64)]
        self._sp = [[False] * 11 for _ in range(11)]  # [pair value][up]
        self.ev: dict[tuple[str, int, int], float] = {}  # ("hard"/"soft"/"pair", total, up) -> best EV
        for up in range(1, 11):
            pbj, dist = dealer_outcomes(up, p.dealer_hits_soft_17)

            def stand_c(best: int) -> float:
                if best > 21:
                    return -1.0
                return sum(q * (1.0 if d == 22 or best > d else 0.0 if best == d else -1.0) for d, q in dist.items())

            @lru_cache(maxsize=None)
            def play_c(hard: int, ace: bool) -> float:
                best = _best(hard, ace)
                if best > 21:
                    return -1.0
                if best == 21:
                    return stand_c(21)
                return max(stand_c(best), hit_c(hard, ace))

            @lru_cache(maxsize=None)
            def hit_c(hard: int, ace: bool) -> float:
                return sum(P[v] * play_c(hard + v, ace or v == 1) for v in range(1, 11))

            def double_c(hard: int, ace: bool) -> float:
                return 2 * sum(P[v] * stand_c(_best(hard + v, ace or v == 1)) for v in range(1, 11))

            def may_double(hard: int, ace: bool, after_split: bool) -> bool:
                if after_split and not p.double_after_split:
                    return False
                best = _best(hard, ace)
                soft = best != hard
                totals = p.double_totals
                if soft:
                    return p.double_soft and (not totals or best in totals or hard in totals)
                return not totals or hard in totals

            def full(c: float, extra_units: int) -> float:
                lost = 1 + extra_units if take_all else 1
                return (1 - pbj) * c - pbj * lost

            for hard in range(2, 22):
                for ace in (False, True):
                    if ace and hard > 21:
                        continue
                    best = _best(hard, ace)
                    if best > 21:
                        continue
                    s, h = stand_c(best), hit_c(hard, ace)
                    i = hard * 2 + ace
                    self._hs[i][up] = HIT if h > s and best < 21 else STAND
                    d = double_c(hard, ace)
                    # Compared as full values: a double risks two units to a dealer blackjack.
                    self._dd[i][up] = best < 21 and full(d, 1) > full(max(s, h), 0) and may_double(hard, ace, False)
                    kind = "soft" if best != hard else "hard"
                    evs = [full(s, 0), full(h, 0)]
                    if may_double(hard, ace, False):
                        evs.append(full(d, 1))
                    self.ev[(kind, best, up)] = max(evs)

            for c in range(1, 11):
                # One split hand: card c plus one card, then played (one card only on aces).
                total_c = 0.0
                for v in range(1, 11):
                    hard, ace = c + v, c == 1 or v == 1
                    best = _best(hard, ace)
                    if c == 1:
                        e = stand_c(best)
                    elif best == 21 and not (p.split_tens_ace_continues and c == 10):
                        e = stand_c(21)
                    else:
                        e = max(stand_c(best), hit_c(hard, ace) if best < 21 else -1.0)
                        if may_double(hard, ace, True):
                            e = max(e, double_c(hard, ace))
                    total_c += P[v] * e
                split_ev = full(2 * total_c, 1)
                hard, ace = 2 * c, c == 1
                best = _best(hard, ace)
                alt = [full(stand_c(best), 0), full(hit_c(hard, ace), 0)]
                if may_double(hard, ace, False):
                    alt.append(full(double_c(hard, ace), 1))
                self._sp[c][up] = p.max_split_hands > 1 and split_ev > max(alt)
                self.ev[("pair", c, up)] = max(split_ev, max(alt))

    def action(self, cards: list[int], up_card: int, can_double: bool, can_split: bool) -> str:
        up = VALUE[up_card]
        if self.profile.free_bet and len(cards) == 2:
            # Free Bet: the house's chip costs nothing, so take every free split (5s double
            # instead) and every free double on hard 9-11. The rest is the usual chart.
            a, b = VALUE[cards[0]], VALUE[cards[1]]
            if can_split and a == b and a not in (4, 5, 10):
                return SPLIT
            if can_double and a != 1 and b != 1 and 9 <= a + b <= 11:
                return DOUBLE
        if can_split and len(cards) == 2 and VALUE[cards[0]] == VALUE[cards[1]] and self._sp[VALUE[cards[0]]][up]:
            return SPLIT
        hard = 0
        ace = 0
        for c in cards:
            v = VALUE[c]
            hard += v
            if v == 1:
                ace = 1
        i = hard * 2 + ace
        if can_double and self._dd[i][up]:
            return DOUBLE
        return self._hs[i][up]

    def chart(self) -> dict[str, list[str]]:
        """Printable tables: rows by player hand, columns up card 2..10, A."""
        ups = list(range(2, 11)) + [1]
        out: dict[str, list[str]] = {}
        for hard in range(5, 21):
            i = hard * 2
            out[f"hard {hard}"] = ["D" if self._dd[i][u] else self._hs[i][u] for u in ups]
        for other in range(2, 10):
            i = (1 + other) * 2 + 1
            out[f"soft {11 + other}"] = ["D" if self._dd[i][u] else self._hs[i][u] for u in ups]
        for c in range(1, 11):
            name = "A" if c == 1 else str(c)
            out[f"pair {name}{name}"] = ["P" if self._sp[c][u] else "-" for u in ups]
        return out


_strategies: dict[bytes, Strategy] = {}


def strategy_for(profile: Profile) -> Strategy:
    key = msgspec.json.encode(profile)
    if key not in _strategies:
        _strategies[key] = Strategy(profile)
    return _strategies[key]
