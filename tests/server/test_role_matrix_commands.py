"""Every game command of both games x every role x own / another player's / a floor player's
chips, at a live and at an RNG table (issue 12): only a player stakes his own money.

Each command goes the way a websocket ``play`` goes in the server: the role check
(``check_table_role``), the kind's decoder (who issues it comes from the token), the kind's
``authorize`` (roles, assignment, RNG tables, recorded authorisations) and the engine. Each
is tried on a fresh table set up so that its rightful issuer can give it. Who is rightful
is written out below by hand from the rules and the house's separation of duties:

* a chip command (it stakes, withdraws, moves or decides for someone's chips) is for the
  player himself, or for staff assigned to the table entering a floor player's chips at a
  live table, never an online player's;
* a console command is for staff assigned to the table (a director anywhere), from the
  role the rules name (croupier < chef < director); at RNG tables the server runs the
  wheel and the shoe;
* inspectors, cashiers and admins watch; nobody relays jackpot meters but the server.

A rightful cell may still be refused by the game's state (at an RNG table there are no
late bets to accept), never with a code that says "not you"; at a live table every
rightful cell is legal and must be accepted. A refused cell must be refused with a "not
you" code and change nothing. And whatever anyone sends, a stake (``WagerPlaced``) is only
ever the sender's own, or a floor player's when staff send it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

from blackjack import commands as BC
from games.commands import Actor
from games.errors import GameError
from games.players import is_floor
from games.shoe import rigged_shoe
from games.wagers import WagerPlaced
from roulette import commands as RC
from server.auth import Principal
from server.kinds import KINDS
from server.kinds.base import TableInfo
from server.policy import check_table_role

FLOOR = "floor:blue"
STAFF = ["croupier1", "chef1"]  # assigned to every table here
ACTORS = [Principal("ann", "player"), Principal("bob", "player"), Principal("croupier1", "croupier"),
          Principal("croupier2", "croupier"), Principal("chef1", "chef"), Principal("director1", "director"),
          Principal("inspector1", "inspector"), Principal("cashier1", "cashier"), Principal("admin1", "admin")]
RANK = {"croupier": 1, "chef": 2, "director": 3}
# Codes that say "not you" (a role, an assignment, someone else's chips or box, the server's job).
NOT_YOU = {"forbidden", "not_your_seat", "not_your_table", "floor_only", "rng_table", "not_allowed",
           "players_only", "staff_only", "missing_authorisation", "not_for_staff", "floor_id_reserved",
           "not_your_box", "not_entitled_to_cut", "not_behind"}


@dataclass
class Spec:
    scenario: str  # which table state the command is tried on
    rule: str  # "chip", "chip-chef", "player", "console", "nobody"
    body: Callable[[Any, str | None, str], dict]  # (engine, target, mode) -> the command's JSON
    min_role: str = "croupier"  # console: the lowest role the rules allow
    rng: bool = True  # console: staff may also give it at an RNG table
    targets: bool = False  # chip commands are tried for own, another's and a floor player's chips
    legal: bool = True  # at a live table the rightful cell is legal (else: only "not refused as not you")


def rightful(spec: Spec, who: Principal, target: str | None, mode: str) -> bool:
    role = who.role
    if spec.rule == "nobody":
        return False
    if spec.rule == "player" or (spec.rule == "chip" and role == "player"):
        return role == "player" and (spec.rule == "player" or target == who.id)
    if role not in RANK or (role != "director" and who.id not in STAFF):
        return False
    if spec.rule in ("chip", "chip-chef"):
        if spec.rule == "chip-chef" and RANK[role] < RANK["chef"]:
            return False
        return mode == "live" and target is not None and is_floor(target)
    return RANK[role] >= RANK[spec.min_role] and (mode == "live" or spec.rng)


def _info(game: str, profile: str, mode: str) -> TableInfo:
    return TableInfo(f"mx-{game}-{mode}", game, profile, mode, "CHF", "matrix", {}, list(STAFF))


def _send(game: str, info: TableInfo, engine: Any, who: Principal, body: dict) -> tuple[str, list]:
    """The way the server takes a websocket ``play``: role, decoding, authorisation, engine."""
    kind = KINDS[game]
    try:
        check_table_role(who.role)
        command = kind.decode_command(msgspec.json.encode(body))
        command = kind.authorize(command, who, info)
        return "ok", kind.engine_events(engine, command, kind.actor(who))
    except GameError as exc:
        return exc.code, []


# Staff commands that carry out a player's own earlier request: the chef accepting a late bet
# the player made himself (Art. 9) stakes that player's chips, at his word.
PLAYERS_OWN_REQUEST = {"accept_late"}


# ---- roulette -----------------------------------------------------------------------------

CROUPIER = Actor("croupier1", "croupier")


def roulette_table(mode: str, phase: str) -> Any:
    """Spin 1: ann, bob (and at a live table the floor player) on rouge; zero: en prison.
    Then spin 2 opens with each on plein 5; then the launch, with a late bet of ann's
    waiting at a live table; then rien ne va plus."""
    info = _info("roulette", "campione", mode)
    e = KINDS["roulette"].new_engine(info)
    players = ["ann", "bob"] + ([FLOOR] if mode == "live" else [])
    # The wheel: the croupier's at a live table, the server's clock at an RNG table.
    wheel = CROUPIER if mode == "live" else Actor(f"system-{info.id}", "system")

    def bets(spot: str, amount: int) -> None:
        for p in players:
            e.handle(RC.PlaceBet(player=p, spot=spot, amount=amount), CROUPIER if is_floor(p) else Actor(p))

    e.handle(RC.OpenSpin(), wheel)
    bets("rouge", 1_000)
    for step in (RC.LaunchBall(), RC.NoMoreBets()):
        e.handle(step, wheel)
    e.handle(RC.Result(number=0, source="croupier"), wheel)
    if phase == "settled":
        return e
    e.handle(RC.OpenSpin(), wheel)
    bets("plein 5", 500)
    if phase == "open":
        return e
    e.handle(RC.LaunchBall(), wheel)
    if mode == "live":
        e.handle(RC.PlaceBet(player="ann", spot="plein 7", amount=500), Actor("ann"))
    if phase == "launched":
        return e
    e.handle(RC.NoMoreBets(), wheel)
    return e


def _wager(e: Any, player: str | None, prison: bool) -> str:
    found = [b.wager for b in e.state.bets if b.player == player and b.prison == prison]
    return found[0] if found else "s2-w999"


def _late(e: Any) -> str:
    return e.state.late[0].late if e.state.late else "s2-l999"


def _lower_settings(e: Any) -> dict:
    s = msgspec.to_builtins(e.state.settings)
    s["maxima"]["plein"] = 40_000
    return s


ROULETTE = {
    "open_spin": Spec("settled", "console", lambda e, t, m: {}),
    "place_bet": Spec("open", "chip", lambda e, t, m: {"player": t, "spot": "plein 9", "amount": 500}, targets=True),
    "place_announced": Spec("open", "chip", lambda e, t, m: {"player": t, "announce": "tiers du cylindre",
                                                              "unit": 500}, targets=True),
    "same_again": Spec("open", "chip", lambda e, t, m: {"player": t}, targets=True),
    "withdraw_bet": Spec("open", "chip", lambda e, t, m: {"wager": _wager(e, t, False)}, targets=True),
    "launch_ball": Spec("open", "console", lambda e, t, m: {}, rng=False),
    "accept_late": Spec("launched", "console", lambda e, t, m: {"late": _late(e)}, min_role="chef"),
    "refuse_late": Spec("launched", "console", lambda e, t, m: {"late": _late(e)}, min_role="chef"),
    "no_more_bets": Spec("launched", "console", lambda e, t, m: {}, rng=False),
    "result": Spec("no_more_bets", "console", lambda e, t, m: {"number": 17, "source": "croupier"}, rng=False),
    "void_spin": Spec("launched", "console", lambda e, t, m: {"reason": "the ball jumped out"}, min_role="chef",
                      rng=False),
    "last_spin": Spec("open", "console", lambda e, t, m: {}),
    "refund_spin": Spec("open", "console", lambda e, t, m: {"reason": "the wheel is jammed"}, min_role="director"),
    "suspend": Spec("open", "console", lambda e, t, m: {"reason": "fire drill"}, min_role="director"),
    "close_table": Spec("open", "console", lambda e, t, m: {"reason": "closing time"}, min_role="director"),
    "choose_partage": Spec("open", "chip", lambda e, t, m: {"wager": _wager(e, t, True)}, targets=True),
    "set_partage_preference": Spec("open", "chip", lambda e, t, m: {"player": t, "partage": True}, targets=True),
    "move_prisoner": Spec("open", "chip", lambda e, t, m: {"wager": _wager(e, t, True), "to": "noir"}, targets=True),
    "register_societa": Spec("open", "console", lambda e, t, m: {"name": "s1", "members": ["ann", "bob"]},
                             min_role="chef"),
    "change_settings": Spec("open", "console", lambda e, t, m: {"settings": _lower_settings(e), "reason": "x"},
                            min_role="director"),
    "raise_limit": Spec("open", "console", lambda e, t, m: {"kind": "plein", "maximum": 100_000,
                                                            "control_officer": "officer 7"}, min_role="director"),
    "mark_unclaimed": Spec("open", "chip-chef", lambda e, t, m: {"player": t}, targets=True),
}
# At an RNG table the server refuses late bets at once: nothing waits for the chef.
ROULETTE_RNG_STATE_REFUSALS = {"accept_late", "refuse_late"}


# ---- blackjack (Lugano: bets behind, side bets, even money against an ace) -----------------

DEALER = 0
BOX = {"ann": 1, "bob": 2, FLOOR: 3}
BJ_CROUPIER = Actor("croupier1", "croupier")


def _boxes(mode: str) -> list[str]:
    return ["ann", "bob"] + ([FLOOR] if mode == "live" else [])


def blackjack_table(mode: str, scenario: str, target: str | None) -> Any:
    kind = KINDS["blackjack"]
    e = kind.new_engine(_info("blackjack", "lugano", mode))
    p = e.state.profile
    holders, hands, up = _boxes(mode), {}, "6"
    if scenario in ("offers", "offers_bj"):
        up = "A"
        hands = {b: (("A", "K") if scenario == "offers_bj" else ("10", "7")) for b in holders}
    elif scenario in ("play", "dealing"):
        hands = {b: ("8", "8") for b in holders}
    elif scenario in ("behind_double", "behind_split"):
        holders = ["hal"]
        hands = {"hal": ("5", "6") if scenario == "behind_double" else ("8", "8")}
    order: list = []
    for i in (0, 1):  # every box's first card, the dealer's up card, every box's second card
        order += [hands[h][i] for h in holders if h in hands]
        if i == 0:
            order.append(up)
    # RNG: the shoe deals those cards (then a few more for hits and splits); live: the croupier.
    if mode == "rng":
        shoe, at = rigged_shoe(p, order + ["2", "3", "4", "2", "3", "4"])
        e.handle(BC.Shuffle(order=shoe), BJ_CROUPIER)
        if scenario == "shuffle":
            return e
    else:
        if scenario == "shuffle":
            return e
        e.handle(BC.Shuffle(), BJ_CROUPIER)
        at = p.cut_margin
    if scenario == "cut":
        e.state.cut_entitled = target or ""  # the end of a shoe offered it to ``target``
        return e
    e.handle(BC.Cut(at=at), BJ_CROUPIER)
    if scenario == "unseated":
        return e
    for h in holders:
        if not is_floor(h):
            e.handle(BC.Sit(box=holders.index(h) + 1), Actor(h))
    for i, h in enumerate(holders):
        who = BJ_CROUPIER if is_floor(h) else Actor(h)
        e.handle(BC.PlaceBet(box=i + 1, amount=1_000, **({"player": h} if is_floor(h) else {})), who)
        e.handle(BC.PlaceSideBet(box=i + 1, bet="perfect_pairs", amount=500,
                                 **({"player": h} if is_floor(h) else {})), who)
    if scenario.startswith("behind") and (mode == "live" or not is_floor(target)):
        who = BJ_CROUPIER if is_floor(target) else Actor(target)
        e.handle(BC.PlaceBet(box=1, amount=1_000, **({"player": target} if is_floor(target) else {})), who)
    if scenario == "betting":
        return e
    e.handle(BC.CloseBets(), BJ_CROUPIER)
    if scenario == "dealing":
        return e  # live: the first card is due
    if mode == "live":
        need = [(holders.index(h) + 1) for h in holders if h in hands]
        for i in (0, 1):
            for box in need:
                e.handle(BC.Card(card=_card(hands[holders[box - 1]][i]), box=box), BJ_CROUPIER)
            if i == 0:
                e.handle(BC.Card(card=_card(up), box=DEALER), BJ_CROUPIER)
    if scenario == "play" and target in BOX:  # the turn passes to the target's box
        for h in holders[: BOX[target] - 1]:
            who = BJ_CROUPIER if is_floor(h) else Actor(h)
            e.handle(BC.Stand(box=BOX[h]), who)
    if scenario == "behind_double":
        e.handle(BC.Double(box=1), Actor("hal"))
    if scenario == "behind_split":
        e.handle(BC.Split(box=1), Actor("hal"))
    return e


def _card(rank: str) -> int:
    from games.cards import RANKS

    return RANKS.index(rank)  # clubs: any suit will do


def _player(t: str | None) -> dict:
    return {"player": t} if t else {}


BLACKJACK = {
    "shuffle": Spec("shuffle", "console", lambda e, t, m: {}),
    "cut": Spec("cut", "chip", lambda e, t, m: {"at": 100}, targets=True),
    "pass_cut": Spec("cut", "chip", lambda e, t, m: {}, targets=True),
    "reshuffle": Spec("betting", "console", lambda e, t, m: {}),
    "cut_card_out": Spec("play", "console", lambda e, t, m: {}, rng=False),
    "sit": Spec("unseated", "player", lambda e, t, m: {"box": 5}),
    "leave": Spec("betting", "player", lambda e, t, m: {}),
    "release_seat": Spec("betting", "nobody", lambda e, t, m: {"box": 1, "reason": "gone"}),  # the server's
    "place_bet": Spec("betting", "chip", lambda e, t, m: {"box": 6, "amount": 1_000, **_player(t)}, targets=True),
    "withdraw_bet": Spec("betting", "chip", lambda e, t, m: {"box": BOX[t], **_player(t)}, targets=True),
    "place_side_bet": Spec("betting", "chip", lambda e, t, m: {"box": BOX[t], "bet": "21+3", "amount": 500,
                                                               **_player(t)}, targets=True),
    "withdraw_side_bet": Spec("betting", "chip", lambda e, t, m: {"box": BOX[t], "bet": "perfect_pairs",
                                                                  **_player(t)}, targets=True),
    "jackpot_meters": Spec("betting", "nobody", lambda e, t, m: {"minor": 1, "major": 2}),
    "close_bets": Spec("betting", "console", lambda e, t, m: {}),
    "set_limits": Spec("betting", "console", lambda e, t, m: {"min_bet": 1_000, "max_bet": 20_000},
                       min_role="chef"),
    "close_table": Spec("betting", "console", lambda e, t, m: {"reason": "closing time"}, min_role="director"),
    # (the last round paid the floor player nothing here: refused nothing_unclaimed on its merits)
    "mark_unclaimed": Spec("betting", "console", lambda e, t, m: {"player": FLOOR}, min_role="chef", rng=False,
                           legal=False),
    "card": Spec("dealing", "console", lambda e, t, m: {"card": 7, "box": 1}, rng=False),
    "insure": Spec("offers", "chip", lambda e, t, m: {"box": BOX[t], "amount": 500, **_player(t)}, targets=True),
    "even_money": Spec("offers_bj", "chip", lambda e, t, m: {"box": BOX[t], **_player(t)}, targets=True),
    "decline_offer": Spec("offers", "chip", lambda e, t, m: {"box": BOX[t], **_player(t)}, targets=True),
    "close_offers": Spec("offers", "console", lambda e, t, m: {}),
    "hit": Spec("play", "chip", lambda e, t, m: {"box": BOX[t]}, targets=True),
    "stand": Spec("play", "chip", lambda e, t, m: {"box": BOX[t]}, targets=True),
    "double": Spec("play", "chip", lambda e, t, m: {"box": BOX[t]}, targets=True),
    "split": Spec("play", "chip", lambda e, t, m: {"box": BOX[t]}, targets=True),
    "behind_double": Spec("behind_double", "chip", lambda e, t, m: {"box": 1, "accept": True, **_player(t)},
                          targets=True),
    "behind_split": Spec("behind_split", "chip", lambda e, t, m: {"box": 1, "choice": "both", **_player(t)},
                         targets=True),
    "void_round": Spec("play", "console", lambda e, t, m: {"reason": "misdeal"}, rng=False),
    "burn_card": Spec("play", "console", lambda e, t, m: {"card": 5} if m == "live" else {}, rng=False),
    # Lugano burns a misdrawn card: exposing one is refused by the house's rule, not the role.
    "expose_card": Spec("play", "console", lambda e, t, m: {"card": 5} if m == "live" else {}, rng=False,
                        legal=False),
    # A tournament's orders: only the server relays them from its coordinator (server/tournaments.py).
    "tournament_seat": Spec("betting", "nobody", lambda e, t, m: {
        "order": 1, "tournament": "cup", "phase": 1, "shoes": 1, "min_bet": 10, "max_bet": 100,
        "seats": [{"box": 1, "player": "ann", "stack": 200}]}),
    "tournament_pause": Spec("betting", "nobody", lambda e, t, m: {"order": 1, "paused": True}),
    "tournament_expel": Spec("betting", "nobody", lambda e, t, m: {"order": 1, "player": "ann"}),
    "tournament_end": Spec("betting", "nobody", lambda e, t, m: {"order": 1}),
}


GAMES = {
    "roulette": (ROULETTE, lambda mode, spec, t: roulette_table(mode, spec.scenario)),
    "blackjack": (BLACKJACK, lambda mode, spec, t: blackjack_table(mode, spec.scenario, t)),
}


def _cells(game: str):
    specs, build = GAMES[game]
    for tag, spec in specs.items():
        for mode in ("live", "rng"):
            for who in ACTORS:
                for target in (["ann", "bob", FLOOR] if spec.targets else [None]):
                    if mode == "rng" and target == FLOOR and who.role == "player":
                        continue  # no floor player at an RNG table: the staff rows show the refusal
                    yield tag, spec, mode, who, target


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_command_is_in_the_matrix(game):
    union = RC.Command if game == "roulette" else BC.Command
    tags = {cls.__struct_config__.tag for cls in union.__args__}
    assert tags == set(GAMES[game][0])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_role_on_every_command(game):
    specs, build = GAMES[game]
    wrong = []
    for tag, spec, mode, who, target in _cells(game):
        engine = build(mode, spec, target)
        info = _info(game, "campione" if game == "roulette" else "lugano", mode)
        before = msgspec.json.encode(engine.state)
        body = {"type": tag, **spec.body(engine, target, mode)}
        code, events = _send(game, info, engine, who, body)
        cell = (tag, mode, who.id, target)
        if rightful(spec, who, target, mode):
            if (code in NOT_YOU or (mode == "live" and spec.legal and code != "ok")) and not (
                game == "roulette" and mode == "rng" and tag in ROULETTE_RNG_STATE_REFUSALS
            ):
                wrong.append((cell, "should pass", code))
        elif code not in NOT_YOU:
            wrong.append((cell, "should be refused as not theirs", code))
        elif msgspec.json.encode(engine.state) != before:
            wrong.append((cell, "refused but changed the table", code))
        for ev in events:  # only a player stakes his own money; staff only a floor player's
            if isinstance(ev, WagerPlaced) and ev.amount > 0 and tag not in PLAYERS_OWN_REQUEST:
                owner_ok = ev.player == who.id if who.role == "player" else is_floor(ev.player)
                if not owner_ok:
                    wrong.append((cell, f"staked {ev.player}'s money", code))
    assert not wrong, "\n".join(map(str, wrong))


def test_the_issue_reproducer_a_croupier_bets_bobs_money_at_an_rng_wheel():
    """The audit's exact frame: a croupier's place_bet for bob at campione-roulette-1 (RNG)."""
    info = _info("roulette", "campione", "rng")
    engine = roulette_table("rng", "open")
    croupier = Principal("croupier1", "croupier")
    for tag, extra in (("place_bet", {"spot": "plein 17", "amount": 500}),
                       ("place_announced", {"announce": "voisins du zéro", "unit": 500})):
        code, events = _send("roulette", info, engine, croupier, {"type": tag, "player": "bob", **extra})
        assert (code, events) == ("rng_table", [])
    live = roulette_table("live", "open")
    code, _ = _send("roulette", _info("roulette", "campione", "live"), live, croupier,
                    {"type": "place_bet", "spot": "plein 17", "amount": 500, "player": "bob"})
    assert code == "floor_only"
