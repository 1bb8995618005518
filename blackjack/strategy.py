"""Basic strategy computed from the profile's rules, not typed in.

Infinite-deck probabilities (each rank 1/13, ten-values 4/13): the dealer's final totals
for each up card, split into "blackjack" and the rest, since with no hole card (or no
peek) a dealer blackjack is only found after the players have doubled and split. Every
player total then gets the expected value of standing, hitting, doubling and splitting
under the profile's own rules (which totals double, double after split, one card on
split aces, what a dealer blackjack takes); the strategy is the best of what is allowed.
Resplits are valued as a single split: this changes no decision of the three houses.

Free Bet (``profile.free_bet``): a dealer 22 pushes every hand but a blackjack, which the
stand values include; the house's chip of a free double or a free split pays on a win and
costs nothing otherwise, so it is worth the probability that its hand wins (hands played
on after a split follow the real-money chart). Free doubles and free splits are taken
where that value beats the alternatives.
"""

from __future__ import annotations

from functools import cache

import msgspec

from blackjack.hands import VALUE
from blackjack.profiles import Profile

STAND, HIT, DOUBLE, SPLIT = "S", "H", "D", "P"
P = (0.0,) + (1 / 13,) * 9 + (4 / 13,)  # P[v], v = 1 (ace) .. 10
BUST_22, BUST_MORE = 22, 23  # the dealer's final total: exactly 22 (Push 22), or more


def _best(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard <= 11 else hard


def dealer_outcomes(up: int, hits_soft_17: bool) -> tuple[float, dict[int, float]]:
    """(probability of a dealer blackjack, final totals 17..21, 22 and 23 = more, given no
    blackjack)."""

    @cache
    def final(hard: int, ace: bool) -> tuple[tuple[int, float], ...]:
        best = _best(hard, ace)
        if best > 21:
            return ((min(best, BUST_MORE), 1.0),)
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
        free = p.free_bet
        # _hs[hard*2+ace][up]: HIT or STAND; _dd: True where doubling beats both.
        self._hs = [[STAND] * 11 for _ in range(64)]
        self._dd = [[False] * 11 for _ in range(64)]
        self._sp = [[False] * 11 for _ in range(11)]  # [pair value][up]
        # Free Bet: where the free double / the free split is taken.
        self._fd = [[False] * 11 for _ in range(64)]
        self._fs = [[False] * 11 for _ in range(11)]
        for up in range(1, 11):
            pbj, dist = dealer_outcomes(up, p.dealer_hits_soft_17)

            @cache
            def wlp(best: int) -> tuple[float, float]:
                """(P(win), P(lose)) of standing on ``best`` (a bust loses)."""
                if best > 21:
                    return 0.0, 1.0
                win = lose = 0.0
                for d, q in dist.items():  # noqa: B023 (used within this up card's iteration)
                    if d == BUST_MORE or (d == BUST_22 and not free) or best > d:
                        win += q
                    elif best < d <= 21:
                        lose += q
                return win, lose

            def stand_c(best: int) -> float:
                w, lo = wlp(best)
                return w - lo

            @cache
            def play_c(hard: int, ace: bool) -> float:
                best = _best(hard, ace)
                if best > 21:
                    return -1.0
                if best == 21:
                    return stand_c(21)
                return max(stand_c(best), hit_c(hard, ace))

            @cache
            def hit_c(hard: int, ace: bool) -> float:
                return sum(P[v] * play_c(hard + v, ace or v == 1) for v in range(1, 11))

            @cache
            def win_p(hard: int, ace: bool) -> float:
                """P(win) of a hand played on by the real-money chart (``play_c``)."""
                best = _best(hard, ace)
                if best > 21:
                    return 0.0
                if best == 21 or stand_c(best) >= hit_c(hard, ace):
                    return wlp(best)[0]
                return win_hit(hard, ace)

            @cache
            def win_hit(hard: int, ace: bool) -> float:
                return sum(P[v] * win_p(hard + v, ace or v == 1) for v in range(1, 11))

            def double_c(hard: int, ace: bool, real: int = 2, free_chips: int = 0) -> float:
                """One card, then stand, with ``real`` units of the player's own and
                ``free_chips`` of the house's on the hand."""
                total = 0.0
                for v in range(1, 11):
                    w, lo = wlp(_best(hard + v, ace or v == 1))
                    total += P[v] * (real * (w - lo) + free_chips * w)
                return total

            def may_double(hard: int, ace: bool, after_split: bool) -> bool:
                return p.allows_double(hard, _best(hard, ace) != hard, after_split)

            def full(c: float, lost: int) -> float:
                """A hand's value given the dealer's blackjack chance: ``lost`` units of the
                player's own are taken by it (only the original one if the house takes
                only that)."""
                return (1 - pbj) * c - pbj * (lost if take_all else 1)  # noqa: B023 (this up card's)

            for hard in range(2, 22):
                for ace in (False, True):
                    best = _best(hard, ace)
                    if best > 21:
                        continue
                    s, h = stand_c(best), hit_c(hard, ace)
                    i = hard * 2 + ace
                    self._hs[i][up] = HIT if h > s and best < 21 else STAND
                    # Compared as full values: a double risks two units to a dealer blackjack.
                    self._dd[i][up] = best < 21 and may_double(hard, ace, False) and (
                        full(double_c(hard, ace), 2) > full(max(s, h), 1)
                    )
                    if best < 21 and p.free_double(best, best != hard):
                        self._fd[i][up] = full(double_c(hard, ace, 1, 1), 1) > full(max(s, h), 1)

            def split_hand(c: int, real: int, free_chips: int) -> float:
                """One hand of a split pair of ``c``: a card, then the best play for the
                chips on it (one card only on aces)."""
                total = 0.0
                for v in range(1, 11):
                    hard, ace = c + v, c == 1 or v == 1
                    best = _best(hard, ace)
                    w, lo = wlp(best)
                    e = real * (w - lo) + free_chips * w
                    if c != 1 and (best < 21 or (p.split_tens_ace_continues and c == 10)):
                        if best < 21:
                            e = max(e, real * hit_c(hard, ace) + free_chips * win_hit(hard, ace))
                        if p.free_double(best, best != hard):
                            e = max(e, double_c(hard, ace, real, free_chips + 1))
                        elif may_double(hard, ace, True):
                            e = max(e, double_c(hard, ace, real + 1, free_chips))
                    total += P[v] * e
                return total

            for c in range(1, 11):
                hard, ace = 2 * c, c == 1
                best = _best(hard, ace)
                alt = [full(stand_c(best), 1), full(hit_c(hard, ace), 1)]
                if p.free_double(best, ace):
                    alt.append(full(double_c(hard, ace, 1, 1), 1))
                elif may_double(hard, ace, False):
                    alt.append(full(double_c(hard, ace), 2))
                if p.max_split_hands < 2:
                    continue
                if p.free_split(c):
                    self._fs[c][up] = full(split_hand(c, 1, 0) + split_hand(c, 0, 1), 1) > max(alt)
                else:
                    self._sp[c][up] = full(2 * split_hand(c, 1, 0), 2) > max(alt)

    def action(self, cards: list[int], up_card: int, can_double: bool, can_split: bool) -> str:
        up = VALUE[up_card]
        p = self.profile
        if p.free_bet and len(cards) == 2:
            a, b = VALUE[cards[0]], VALUE[cards[1]]
            if can_split and a == b and p.free_split(a) and self._fs[a][up]:
                return SPLIT
            if can_double and a != 1 and b != 1 and p.free_double(a + b, False):
                return DOUBLE if self._fd[(a + b) * 2][up] else self._hs[(a + b) * 2][up]
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
        free = self.profile.free_bet
        for hard in range(5, 21):
            i = hard * 2
            dd = self._fd[i] if free and 9 <= hard <= 11 else self._dd[i]  # the free double
            out[f"hard {hard}"] = ["D" if dd[u] else self._hs[i][u] for u in ups]
        for other in range(2, 10):
            i = (1 + other) * 2 + 1
            out[f"soft {11 + other}"] = ["D" if self._dd[i][u] else self._hs[i][u] for u in ups]
        for c in range(1, 11):
            name = "A" if c == 1 else str(c)
            out[f"pair {name}{name}"] = ["P" if self._sp[c][u] or self._fs[c][u] else "-" for u in ups]
        return out


_strategies: dict[bytes, Strategy] = {}


def strategy_for(profile: Profile) -> Strategy:
    key = msgspec.json.encode(profile)
    if key not in _strategies:
        _strategies[key] = Strategy(profile)
    return _strategies[key]
