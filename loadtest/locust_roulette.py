"""Locust users at the roulette tables: players (straight, outside and announced bets,
rebets, prison choices) and the live wheels' croupiers, over the real protocol; and the
crowd (``CrowdPlayer``, ``CrowdCroupier``: every user at one wheel, ``loadtest.run --crowd``)."""

from __future__ import annotations

import os
import random
import time

import gevent
from locust import between, task

from loadtest import locust_floor
from loadtest.locust_ws import ROUND_WAIT, CasinoWsUser

STRAIGHT = [f"plein {n}" for n in range(37)]
OTHER_SPOTS = ["cheval 0/3", "cheval 17/20", "carré 1-2-4-5", "transversale 13-14-15", "sixain 31-36",
               "douzaine 2", "colonne 3"]
SIMPLE = ["rouge", "noir", "pair", "impair", "manque", "passe"]
ANNOUNCED = ["voisins du zéro", "tiers du cylindre", "orphelins", "17 et 2 voisins", "finale en plein 7",
             "finale à cheval 1/2"]
# Bets racing the wheel: after "rien ne va plus", or before the next spin opens.
BET_RACES = ("wrong_phase", "table_closed")


class RoulettePlayer(CasinoWsUser):
    """Straight, outside and announced bets, rebets (same_again), prison choices."""

    weight = 6
    wait_time = between(0.05, 0.3)

    def on_start(self) -> None:
        super().on_start()
        tables = list(self.floor["roulette_live"]) + list(self.floor["roulette_rng"])
        self.table = tables[locust_floor.take("roulette-table") % len(tables)]
        self.place_at(self.table)
        view = self.sock.subscribe(self.table)["view"]
        self.phase = view["phase"]
        self.minimum = view["settings"]["minimum"]
        self.imprisoned: dict[str, str] = {}  # my wager -> its simple chance
        self.bet_last_spin = False

    def seen(self, msg: dict) -> None:
        ev = msg["event"]
        kind = ev["type"]
        if kind == "spin_opened":
            self.phase = "open"
            self.minimum = ev["settings"]["minimum"]
            self.imprisoned = {w: s for w, s in self.imprisoned.items() if w in ev["prisoners"]}
        elif kind == "ball_launched":
            self.phase = "launched"
        elif kind == "bets_closed":
            self.phase = "no_more_bets"
        elif kind == "spin_settled":
            self.phase = "settled"
        elif kind == "wager_imprisoned" and ev["player"] == self.account:
            self.imprisoned[ev["wager"]] = ev["spot"]
        elif kind == "prisoner_moved" and ev["player"] == self.account:
            self.imprisoned[ev["wager"]] = ev["to_spot"]

    @task
    def play_spin(self) -> None:
        if self.phase != "open" and self.wait_event(self.table, ("spin_opened",), ROUND_WAIT) is None:
            return
        t, unit = self.table, self.minimum
        for wager, spot in list(self.imprisoned.items()):
            choice = random.random()
            if choice < 0.3:
                self.sock.play("roulette choose_partage", t, {"type": "choose_partage", "wager": wager},
                               ok_codes=BET_RACES + ("not_imprisoned", "unknown_wager"))
                self.imprisoned.pop(wager, None)
            elif choice < 0.6:
                to = random.choice([s for s in SIMPLE if s != spot])
                self.sock.play("roulette move_prisoner", t, {"type": "move_prisoner", "wager": wager, "to": to},
                               ok_codes=BET_RACES + ("not_imprisoned", "unknown_wager", "over_maximum"))
        placed = False
        if self.bet_last_spin and random.random() < 0.3:
            placed = self.sock.play("roulette same_again", t, {"type": "same_again"},
                                    ok_codes=BET_RACES + ("no_previous_bets", "over_maximum")) is not None
        for _ in range(random.randint(1, 3)):
            r = random.random()
            if r < 0.45:
                cmd, name = {"type": "place_bet", "spot": random.choice(STRAIGHT), "amount": unit}, "plein"
            elif r < 0.75:
                cmd = {"type": "place_bet", "spot": random.choice(SIMPLE), "amount": unit * random.randint(1, 4)}
                name = "simple chance"
            elif r < 0.85:
                cmd = {"type": "place_bet", "spot": random.choice(OTHER_SPOTS), "amount": unit}
                name = "split/corner/dozen"
            else:
                cmd = {"type": "place_announced", "announce": random.choice(ANNOUNCED), "unit": unit}
                name = "announced"
            ok = self.sock.play(f"roulette {name}", t, cmd, ok_codes=BET_RACES + ("over_maximum",))
            placed = placed or ok is not None
        if random.random() < 0.05:
            self.sock.play("roulette set_partage_preference", t,
                           {"type": "set_partage_preference", "partage": random.random() < 0.5})
        self.bet_last_spin = placed
        self.wait_event(t, ("spin_settled", "spin_voided", "spin_refunded"), ROUND_WAIT)


class RouletteCroupier(CasinoWsUser):
    """Runs one live wheel: open, a betting window, launch, rien ne va plus, the number."""

    fixed_count = len(locust_floor.floor_or_empty()["roulette_live"])
    wait_time = between(0.3, 0.6)
    window = 2.0  # seconds of "faites vos jeux"

    def on_start(self) -> None:
        self.table = list(locust_floor.floor_or_empty()["roulette_live"])[locust_floor.take("roulette-croupier")]
        self.croupier_account = self.floor_croupier()
        super().on_start()
        self.phase = self.sock.subscribe(self.table)["view"]["phase"]

    def floor_croupier(self) -> str:
        return locust_floor.floor_or_empty()["roulette_live"][self.table]

    @task
    def run_spin(self) -> None:
        steps = [("open_spin", "open"), ("launch_ball", "launched"), ("no_more_bets", "no_more_bets"),
                 ("result", "settled")]
        start = {"closed": 0, "settled": 0, "open": 1, "launched": 2, "no_more_bets": 3}.get(self.phase, 0)
        for command, after in steps[start:]:
            cmd = {"type": command}
            if command == "result":
                cmd.update(number=random.randrange(37), source="croupier")
            self.sock.play(f"croupier roulette {command}", self.table, cmd)
            self.phase = after
            gevent.sleep(self.window if command == "open_spin" else 0.2)


# The crowd (``loadtest/locust_crowd.py``, ``loadtest.run --crowd``): set by ``loadtest.run``.
CROWD_BETS = int(os.environ.get("CASINO_CROWD_BETS", 5))
CROWD_WINDOW = float(os.environ.get("CASINO_CROWD_WINDOW", 15))


class CrowdPlayer(CasinoWsUser):
    """Every crowd player sits at the floor's first live wheel and places ``CROWD_BETS``
    straight bets per spin, one at a random time in each equal slot of the betting window
    (as ``bench_server crowd`` does, but each bet waits for its answer, as a player's
    client does). A bet the croupier's clock beats is counted as ``refused:<code>``."""

    wait_time = between(0, 0)

    def on_start(self) -> None:
        super().on_start()
        self.table = next(iter(self.floor["roulette_live"]))
        self.sock.subscribe(self.table)

    @task
    def play_spin(self) -> None:
        opened_msg = self.wait_event(self.table, ("spin_opened",), ROUND_WAIT)
        if opened_msg is None:
            return
        opened, minimum = time.monotonic(), opened_msg["event"]["settings"]["minimum"]
        # The croupier launches CROWD_WINDOW s after his open_spin was answered; keep a tenth
        # of the window clear of the race with him.
        slot = 0.9 * CROWD_WINDOW / CROWD_BETS
        for k in range(CROWD_BETS):
            gevent.sleep(max(0.0, opened + (k + random.random()) * slot - time.monotonic()))
            self.sock.play("crowd plein", self.table,
                           {"type": "place_bet", "spot": random.choice(STRAIGHT), "amount": minimum},
                           ok_codes=BET_RACES)
        self.wait_event(self.table, ("spin_settled", "spin_voided", "spin_refunded"), ROUND_WAIT)


class CrowdCroupier(RouletteCroupier):
    """The crowd's wheel: a ``CROWD_WINDOW`` s betting window."""

    window = CROWD_WINDOW
