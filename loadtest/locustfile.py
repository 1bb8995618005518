"""Locust users for the casino: roulette and blackjack players, observers, croupiers.

Start it with ``python -m loadtest.run`` (which sets up a server, the floor and this file);
every user speaks the real websocket protocol through ``loadtest.locust_ws``.

Rejections listed as ``ok_codes`` are the table's clock winning a race (a bet arriving as
the ball drops, a decision after its time-out): real players meet them too, so they are
counted as ``... refused:<code>`` successes. Any other rejection is a failure.
"""

from __future__ import annotations

import random
import time

import gevent
import requests
from locust import between, constant, task

from blackjack.hands import VALUE, hand_value
from blackjack.profiles import builtin
from blackjack.round.decisions import can_double, can_split
from blackjack.state import Box, Hand
from blackjack.strategy import strategy_for
from games.shoe import fresh_counts
from loadtest import locust_floor
from loadtest.locust_ws import CasinoWsUser

ROUND_WAIT = 60.0  # seconds a user waits for its table's next betting window
STRAIGHT = [f"plein {n}" for n in range(37)]
OTHER_SPOTS = ["cheval 0/3", "cheval 17/20", "carré 1-2-4-5", "transversale 13-14-15", "sixain 31-36",
               "douzaine 2", "colonne 3"]
SIMPLE = ["rouge", "noir", "pair", "impair", "manque", "passe"]
ANNOUNCED = ["voisins du zéro", "tiers du cylindre", "orphelins", "17 et 2 voisins", "finale en plein 7",
             "finale à cheval 1/2"]
# Bets racing the wheel: after "rien ne va plus", or before the next spin opens.
BET_RACES = ("wrong_phase", "table_closed")


def _floor() -> dict:
    try:
        return locust_floor.floor()
    except RuntimeError:
        return {"roulette_live": {}, "roulette_rng": [], "blackjack_rng": {}, "blackjack_live": {}}


# ---- roulette ------------------------------------------------------------------------------


class RoulettePlayer(CasinoWsUser):
    """Straight, outside and announced bets, rebets (same_again), prison choices."""

    weight = 6
    wait_time = between(0.05, 0.3)

    def on_start(self) -> None:
        super().on_start()
        tables = list(self.floor["roulette_live"]) + list(self.floor["roulette_rng"])
        self.table = tables[locust_floor.take("roulette-table") % len(tables)]
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
        self.wait_event(t, ("spin_settled", "spin_voided"), ROUND_WAIT)


class RouletteCroupier(CasinoWsUser):
    """Runs one live wheel: open, a betting window, launch, rien ne va plus, the number."""

    fixed_count = len(_floor()["roulette_live"])
    wait_time = between(0.3, 0.6)
    window = 2.0  # seconds of "faites vos jeux"

    def on_start(self) -> None:
        self.table = list(_floor()["roulette_live"])[locust_floor.take("roulette-croupier")]
        self.croupier_account = self.floor_croupier()
        super().on_start()
        self.phase = self.sock.subscribe(self.table)["view"]["phase"]

    def floor_croupier(self) -> str:
        return _floor()["roulette_live"][self.table]

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


# ---- blackjack -----------------------------------------------------------------------------


class BlackjackPlayer(CasinoWsUser):
    """A box holder (sits, stakes; two boxes at Campione) or a bet behind someone's box;
    answers every decision: insurance, even money, hit, stand, double, split, and the
    behind player's choices after the holder doubles or splits."""

    weight = 4
    wait_time = between(0.05, 0.3)
    explore = 0.2  # share of decisions taken at random among the legal ones, not by the chart

    def on_start(self) -> None:
        super().on_start()
        tables = dict(self.floor["blackjack_rng"])
        tables.update({t: v["profile"] for t, v in self.floor["blackjack_live"].items()})
        names = sorted(tables)
        n = locust_floor.take("bj-table")
        self.table = names[n % len(names)]
        self.profile = builtin(tables[self.table])
        self.strategy = strategy_for(self.profile)
        self.behind = self.profile.places_behind > 0 and (n // len(names)) % 3 == 2
        view = self.sock.subscribe(self.table)["view"]
        self.seats: list[str] = list(view["seats"])
        self.phase = view["phase"]
        self.min_bet = view["min_bet"]
        self.stakes: dict[int, int] = {}
        self.reset_round()

    def reset_round(self) -> None:
        self.hands: dict[int, list[Hand]] = {}
        self.dealer_up = -1

    def seen(self, msg: dict) -> None:
        ev = msg["event"]
        kind = ev["type"]
        if kind == "seat_taken":
            self.seats[ev["box"]] = ev["player"]
        elif kind == "seat_left":
            self.seats[ev["box"]] = ""
        elif kind == "round_opened":
            self.phase, self.min_bet = "betting", ev["min_bet"]
            self.reset_round()
        elif kind == "bets_closed":
            self.phase = "dealing"
        elif kind == "card_dealt":
            if ev["box"] == 0:
                if self.dealer_up < 0:
                    self.dealer_up = ev["card"]
            else:
                hands = self.hands.setdefault(ev["box"], [Hand([])])
                while len(hands) <= ev["hand"]:
                    hands.append(Hand([]))
                hands[ev["hand"]].cards.append(ev["card"])
        elif kind == "acted":
            hand = self.hands.get(ev["box"], [None] * (ev["hand"] + 1))[ev["hand"]]
            if hand is not None and ev["action"] == "split":
                aces = VALUE[hand.cards[0]] == 1
                self.hands[ev["box"]].append(Hand([hand.cards.pop()], split=True, split_aces=aces))
                hand.split, hand.split_aces = True, aces
            elif hand is not None and ev["action"] == "double":
                hand.doubled = True
        elif kind in ("round_settled", "round_voided") and not ev.get("boxes"):
            self.phase = "settled"

    @task
    def play_round(self) -> None:
        if self.phase != "betting" and self.wait_event(self.table, ("round_opened",), ROUND_WAIT) is None:
            return
        self.place_bets()
        self.play_until_settled()

    def place_bets(self) -> None:
        t, me, amount = self.table, self.account, self.min_bet * random.randint(1, 3)
        races = ("betting_closed", "no_round", "seat_taken", "already_seated", "box_full", "one_box_each",
                 "no_such_box")
        if self.behind:
            held = [b for b in range(1, len(self.seats)) if self.seats[b] and self.seats[b] != me]
            if held:
                self.sock.play("blackjack bet behind", t, {"type": "place_bet", "box": random.choice(held),
                                                          "amount": amount}, ok_codes=races + ("not_seated",))
            return
        if me not in self.seats:
            free = [b for b in range(1, len(self.seats)) if not self.seats[b]]
            if not free:
                return
            box = random.choice(free)
            if self.sock.play("blackjack sit", t, {"type": "sit", "box": box}, ok_codes=races) is None:
                return
            self.seats[box] = me
        box = self.seats.index(me)
        self.sock.play("blackjack bet box", t, {"type": "place_bet", "box": box, "amount": amount},
                       ok_codes=races + ("already_bet",))
        if self.profile.lone_player_min_boxes > 1:  # Campione: a lone player holds two boxes
            free = [b for b in range(1, len(self.seats)) if not self.seats[b]]
            if free:
                self.sock.play("blackjack bet second box", t,
                               {"type": "place_bet", "box": free[0], "amount": self.min_bet},
                               ok_codes=races + ("already_bet", "not_seated", "seat_taken"))

    def play_until_settled(self) -> None:
        t, me = self.table, self.account
        late = ("not_your_turn", "not_decision_time", "no_offer", "no_behind_choice", "no_round")
        while self.phase != "settled":
            msg = self.wait_event(t, ("offers_opened", "turn", "behind_asked", "round_settled", "round_voided"),
                                  ROUND_WAIT)
            if msg is None:
                return
            ev = msg["event"]
            if ev["type"] == "offers_opened":
                for entry in ev["waiting"]:
                    who, _, box = entry.partition("@")
                    if who != me:
                        continue
                    b = int(box)
                    r = random.random()
                    if b in ev["even_money"] and r < 0.5:
                        self.sock.play("blackjack even_money", t, {"type": "even_money", "box": b}, ok_codes=late)
                    elif ev["insurance"] and r < 0.3 and self.stakes_on(b):
                        self.sock.play("blackjack insure", t,
                                       {"type": "insure", "box": b, "amount": self.stakes_on(b) // 2},
                                       ok_codes=late + ("blackjack_not_insurable", "insurance_too_large",
                                                        "already_insured", "no_insurance"))
                    else:
                        self.sock.play("blackjack decline_offer", t, {"type": "decline_offer", "box": b},
                                       ok_codes=late)
            elif ev["type"] == "turn" and ev["player"] == me:
                action = self.decide(ev["box"], ev["hand"])
                self.sock.play(f"blackjack {action}", t, {"type": action, "box": ev["box"], "hand": ev["hand"]},
                               ok_codes=late)
            elif ev["type"] == "behind_asked" and me in ev["players"]:
                if ev["action"] == "double":
                    cmd = {"type": "behind_double", "box": ev["box"], "accept": random.random() < 0.5}
                else:
                    cmd = {"type": "behind_split", "box": ev["box"],
                           "choice": random.choice(["first", "second", "both"])}
                self.sock.play(f"blackjack {cmd['type']}", t, cmd, ok_codes=late)

    def stakes_on(self, box: int) -> int:
        """What I staked on ``box`` this round (from my own wager_placed events is overkill:
        the view's minimum is what every load player stakes at least)."""
        return self.min_bet

    def decide(self, box: int, hand_no: int) -> str:
        hands = self.hands.get(box) or [Hand([])]
        hand = hands[hand_no] if hand_no < len(hands) else Hand([])
        b = Box(box, self.account, [], hands)
        legal = ["hit", "stand"]
        may_double = len(hand.cards) == 2 and can_double(self.profile, hand)
        may_split = len(hand.cards) == 2 and can_split(self.profile, b, hand)
        legal += ["double"] * may_double + ["split"] * may_split
        if random.random() < self.explore or self.dealer_up < 0 or len(hand.cards) < 2:
            return random.choice(legal)
        action = self.strategy.action(hand.cards, self.dealer_up, may_double, may_split)
        return action if action in legal else ("hit" if hand_value(hand.cards)[0] < 17 else "stand")


class BlackjackCroupier(CasinoWsUser):
    """Runs one live blackjack table from the console: shuffles, cuts, closes the bets after
    a window, and deals every card from its own shoe to the hand the rules say is next
    (read from the table's view: the deal order, the first unfinished hand, the dealer);
    reports the cut card half-way through the shoe."""

    fixed_count = len(_floor()["blackjack_live"])
    wait_time = constant(0)
    window = 2.0  # seconds of betting once the first bet is down

    def on_start(self) -> None:
        tables = _floor()["blackjack_live"]
        self.table = sorted(tables)[locust_floor.take("bj-croupier")]
        self.croupier_account = tables[self.table]["croupier"]
        super().on_start()
        self.profile = builtin(tables[self.table]["profile"])
        self.sock.subscribe(self.table)
        self.left: list[int] = []
        self.dealt = 0
        self.cut_reported = True
        self.bets_since: float | None = None

    def view(self) -> dict:
        fire = self.environment.events.request.fire
        started = time.monotonic()
        exc = None
        out: dict = {}
        try:
            r = requests.get(f"{self.floor['url']}/tables/{self.table}", timeout=15,
                             headers={"Authorization": f"Bearer {self.token}"})
            r.raise_for_status()
            out = r.json()["view"]
        except Exception as e:
            exc = e
        fire(request_type="HTTP", name="GET /tables/{id}", response_time=(time.monotonic() - started) * 1000,
             response_length=0, exception=exc, context={})
        if exc is not None:
            raise exc
        return out

    def play(self, command: dict) -> None:
        self.sock.play(f"croupier blackjack {command['type']}", self.table, command)

    @task
    def step(self) -> None:
        v = self.view()
        phase = v["phase"]
        if phase == "shuffle":
            self.play({"type": "shuffle"})
            self.left, self.dealt, self.cut_reported = fresh_counts(self.profile), 0, False
        elif phase == "cut" and not v["cut_entitled"]:
            self.play({"type": "cut", "at": self.profile.cards // 2})
        elif phase == "betting" and v["bets"]:
            if self.bets_since is None:
                self.bets_since = time.monotonic()
            elif time.monotonic() - self.bets_since >= self.window:
                self.bets_since = None
                self.play({"type": "close_bets"})
                return
        elif phase in ("dealing", "play", "dealer") and self.left:
            target = self.recipient(v)
            if target is not None:
                card = random.choice([c for c, n in enumerate(self.left) if n > 0])
                self.play({"type": "card", "box": target[0], "hand": target[1], "card": card})
                self.left[card] -= 1
                self.dealt += 1
                if not self.cut_reported and self.dealt >= self.profile.cards // 2:
                    self.play({"type": "cut_card_out"})
                    self.cut_reported = True
                return
        gevent.sleep(0.1)

    @staticmethod
    def recipient(v: dict) -> tuple[int, int] | None:
        """Who the next card goes to, or None while a player has to decide."""
        boxes, dealer = v["boxes"], v["dealer"]
        if v["phase"] == "dealing":  # box by box, the dealer, box by box again, the hole card
            k = len(boxes)
            pos = sum(len(b["hands"][0]["cards"]) for b in boxes) + len(dealer)
            if pos < k:
                return boxes[pos]["number"], 0
            if k < pos < 2 * k + 1:
                return boxes[pos - k - 1]["number"], 0
            return 0, 0
        if v["phase"] == "dealer":
            return 0, 0
        if v["turn"] or v["offers"] or v["behind"]:
            return None
        for b in boxes:  # after a hit, a double or a split: the first unfinished hand
            for i, h in enumerate(b["hands"]):
                if not h["done"]:
                    return b["number"], i
        return None


# ---- observers -----------------------------------------------------------------------------


class Observer(CasinoWsUser):
    """Follows a few tables and only watches; a ping now and then (round trip, no table)."""

    weight = 2
    wait_time = between(1, 3)

    def on_start(self) -> None:
        super().on_start()
        f = self.floor
        tables = (list(f["roulette_live"]) + list(f["roulette_rng"]) + list(f["blackjack_rng"])
                  + list(f["blackjack_live"]))
        for table in random.sample(tables, k=min(3, len(tables))):
            self.sock.subscribe(table)

    @task
    def watch(self) -> None:
        while self.next_frame(0) is not None:  # drain: the reader already timed every event
            pass
        self.sock.command("ping", {"type": "ping"})
