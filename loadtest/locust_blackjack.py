"""Locust users at the blackjack tables: players who bet, take side bets and play basic
strategy from what the engine says is legal, and the live tables' croupiers, over the real
protocol."""

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
from loadtest.locust_ws import ROUND_WAIT, CasinoWsUser


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
        # (box_in_play: a box its holder left while a bet behind it is still in the round looks
        # free to a bot that follows only the seats)
        races = ("betting_closed", "no_round", "seat_taken", "already_seated", "box_full", "one_box_each",
                 "no_such_box", "box_in_play")
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

    fixed_count = len(locust_floor.floor_or_empty()["blackjack_live"])
    wait_time = constant(0)
    window = 2.0  # seconds of betting once the first bet is down

    def on_start(self) -> None:
        tables = locust_floor.floor_or_empty()["blackjack_live"]
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
