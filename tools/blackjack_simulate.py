"""Basic strategy played through the real engine, many rounds, on every core.

Rounds are cut into chunks, each with its own table and an RNG seeded from
``(seed, chunk)``, so the result depends on the seed only, never on how many
processes ran it. This is a tool that drives the engine, not part of it: it may
time itself and start processes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec

from blackjack import commands as C
from blackjack.profiles import Profile
from blackjack.round.deal import cards_on_table
from blackjack.round.decisions import can_double, can_split
from blackjack.strategy import DOUBLE, HIT, SPLIT, STAND, strategy_for
from blackjack.table import BlackjackTable
from games.cards import full_shoe
from games.commands import Actor
from games.rng import SeededRng, shuffled
from games.shoe import cut_bounds
from games.wagers import WagerPlaced, WagerSettled, WagerVoided
from tools.parallel import Stopwatch, run_chunks

UNIT = 1000  # each box stakes 10.00 (in minor units) every round
CHUNK = 5000
PLAYER = Actor("sim")
CROUPIER = Actor("sim-croupier", "croupier")


class Stats(msgspec.Struct):
    rounds: int = 0
    boxes: int = 0  # box-rounds played
    staked: int = 0  # initial stakes
    net: int = 0  # what the player won (negative: the house's win), minor units
    sum_sq: float = 0.0  # of each round's net, for the interval
    outcomes: dict[str, int] = {}  # a box's net result in units -> how many
    voided: int = 0

    def add(self, o: Stats) -> None:
        self.rounds += o.rounds
        self.boxes += o.boxes
        self.staked += o.staked
        self.net += o.net
        self.sum_sq += o.sum_sq
        self.voided += o.voided
        for k, v in o.outcomes.items():
            self.outcomes[k] = self.outcomes.get(k, 0) + v

    def house_edge(self) -> tuple[float, float]:
        """House edge per unit staked and the half-width of its 95% interval (fractions)."""
        if not self.rounds:
            return 0.0, 0.0
        per_round_stake = self.staked / self.rounds
        mean = self.net / self.rounds
        var = max(self.sum_sq / self.rounds - mean * mean, 0.0)
        se = math.sqrt(var / self.rounds) if self.rounds > 1 else 0.0
        return -mean / per_round_stake, 1.96 * se / per_round_stake


def default_boxes(profile: Profile) -> int:
    return profile.lone_player_min_boxes


def play_chunk(profile: Profile, rounds: int, seed: int, chunk: int, boxes: int) -> Stats:
    rng = SeededRng(seed * 1_000_003 + chunk)
    strat = strategy_for(profile)
    table = BlackjackTable(f"sim{chunk}", profile, min_bet=UNIT, max_bet=UNIT * 10)
    s = table.state
    handle = table.handle
    lo, hi = cut_bounds(profile, profile.cards)
    deck = full_shoe(profile.decks)
    bets = [C.PlaceBet(box=b, amount=UNIT) for b in range(1, boxes + 1)]
    close = C.CloseBets()
    close_offers = C.CloseOffers()
    stats = Stats()
    outcomes: dict[int, int] = {}
    box_of: dict[str, int] = {}
    for _ in range(rounds):
        if s.phase == "shuffle":
            handle(C.Shuffle(order=shuffled(deck, rng)), CROUPIER)
            who = s.cut_entitled
            at = lo + rng.randbelow(hi - lo + 1)
            if who:
                handle(C.Cut(at=None, random_at=at), Actor(who))
            else:
                handle(C.Cut(at=at), CROUPIER)
        events = []
        for b in bets:
            events += handle(b, PLAYER)
        events += handle(close, CROUPIER)
        while True:
            ph = s.phase
            if ph == "play":
                box = s.boxes[s.turn_box]
                hand = box.hands[s.turn_hand]
                cd = can_double(profile, hand)
                cs = can_split(profile, box, hand)
                a = strat.action(hand.cards, s.dealer[0], cd, cs)
                if hand.split_aces and a != SPLIT:
                    a = STAND  # split aces take no more cards
                cmd: C.Command
                if a == STAND:
                    cmd = C.Stand(box=box.number, hand=s.turn_hand)
                elif a == HIT:
                    cmd = C.Hit(box=box.number, hand=s.turn_hand)
                elif a == DOUBLE:
                    cmd = C.Double(box=box.number, hand=s.turn_hand)
                else:
                    cmd = C.Split(box=box.number, hand=s.turn_hand)
                events += handle(cmd, PLAYER)
            elif ph == "offers":
                events += handle(close_offers, CROUPIER)  # basic strategy never insures
            elif ph == "reshuffle":
                rest = list(deck)
                for c in cards_on_table(s):
                    rest.remove(c)
                events += handle(C.Shuffle(order=shuffled(rest, rng)), CROUPIER)
            else:
                break
        net = 0
        box_net: dict[int, int] = {}
        for e in events:
            if type(e) is WagerSettled:
                d = e.returned + e.won - e.stake
                net += d
                number = box_of.pop(e.wager)
                box_net[number] = box_net.get(number, 0) + d
            elif type(e) is WagerPlaced:
                box_of[e.wager] = int(e.spot.split()[1])
            elif type(e) is WagerVoided:
                box_of.pop(e.wager, None)
                stats.voided += 1
        stats.rounds += 1
        stats.boxes += boxes
        stats.staked += boxes * UNIT
        stats.net += net
        stats.sum_sq += float(net) * net
        for d in box_net.values():
            outcomes[d] = outcomes.get(d, 0) + 1
    stats.outcomes = {f"{k / UNIT:+g}": v for k, v in sorted(outcomes.items())}
    return stats


_Job = tuple[Profile, int, int, int, int]  # play_chunk's arguments


def _work(args: _Job) -> Stats:
    return play_chunk(*args)


def simulate(
    profile: Profile,
    rounds: int,
    seed: int,
    *,
    boxes: int | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Stats, float]:
    """Play ``rounds`` rounds; returns the summed stats and the wall-clock seconds."""
    boxes = boxes or default_boxes(profile)
    jobs: list[_Job] = []
    left, chunk = rounds, 0
    while left > 0:
        n = min(CHUNK, left)
        jobs.append((profile, n, seed, chunk, boxes))
        left -= n
        chunk += 1
    total = Stats()
    clock = Stopwatch()
    for st in run_chunks(_work, jobs, workers):
        total.add(st)
        if progress:
            progress(total.rounds, rounds)
    wall = clock.seconds
    total.outcomes = dict(sorted(total.outcomes.items(), key=lambda kv: float(kv[0])))
    return total, wall
