"""The players' decisions, hand by hand: hit, stand, double, split (what each house allows
on a hand), and the choices of the players behind a box when its holder doubles or splits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from blackjack import commands as C
from blackjack import events as E
from blackjack.hands import VALUE, hand_value
from blackjack.profiles import Profile
from blackjack.round.common import Out, box_index, check, owner, owner_refusal, place, place_free, stake_on
from blackjack.round.steps import run
from blackjack.round.tournament import double_excess, points_refusal
from blackjack.state import Box, CardTarget, Hand, TableState
from blackjack.wager_kinds import WagerKind
from games.commands import Actor
from games.errors import GameError
from games.players import is_floor

# -- what a hand may do -------------------------------------------------------------------------


def free_double(p: Profile, hand: Hand) -> bool:
    """Free Bet: a two-card hard 9, 10 or 11 doubles on the house's chip (split hands too)."""
    if not p.free_bet or len(hand.cards) != 2 or hand.doubled or hand.split_aces:
        return False
    return p.free_double(*hand_value(hand.cards))


def free_split(p: Profile, box: Box, hand: Hand) -> bool:
    """Free Bet: any pair but 4s and tens splits on the house's chip."""
    return can_split(p, box, hand) and p.free_split(VALUE[hand.cards[0]])


def can_double(p: Profile, hand: Hand) -> bool:
    cards = hand.cards
    if len(cards) != 2 or hand.doubled or hand.split_aces or hand.blackjack:
        return False
    if free_double(p, hand):
        return True
    if hand.tens_ace:
        return p.allows_double(11, False, True)  # Campione Art. 11: the ace counts as 1
    total, soft = hand_value(cards)
    return p.allows_double(total - 10 if soft else total, soft, hand.split)


def can_split(p: Profile, box: Box, hand: Hand) -> bool:
    cards = hand.cards
    if len(cards) != 2 or hand.doubled or VALUE[cards[0]] != VALUE[cards[1]]:
        return False
    if len(box.hands) >= p.max_split_hands:
        return False
    return not (hand.split_aces and not p.resplit_aces)


# -- the box holder's decisions -------------------------------------------------------------


Decision = C.Hit | C.Stand | C.Double | C.Split
# What the house allows the hand whose turn it is (standing: always).
_HAND_RULES: dict[type[Decision], Callable[[Profile, Box, Hand], GameError | None]] = {
    C.Hit: lambda p, box, hand: (
        GameError("split_aces_one_card", "Split aces take one card each.") if hand.split_aces else None),
    C.Double: lambda p, box, hand: (
        None if can_double(p, hand) else
        GameError("double_not_allowed", "This house does not allow doubling on this hand.")),
    C.Split: lambda p, box, hand: (
        None if can_split(p, box, hand) else
        GameError("split_not_allowed", "This house does not allow splitting this hand.")),
}


def decision_refusal(s: TableState) -> GameError | None:
    """Why no decision is awaited now (the phase is checked already), or None."""
    if s.deal_queue or s.behind:
        return GameError("not_decision_time", "No decision is being asked for now.")
    return None


def turn_refusal(s: TableState, cmd_type: type[Decision], actor: Actor, box: Box, hand: int) -> GameError | None:
    """Why ``actor`` may not take a decision of ``cmd_type`` on ``hand`` of ``box``, the
    hand whose turn it is, or None: he decides for the box's holder, and the house allows
    it on this hand."""
    if actor.role == "player":
        if actor.id != box.holder:
            return GameError("not_your_box", f"Only box {box.number}'s holder decides for it.")
    elif actor.role == "system":
        if cmd_type is not C.Stand:
            return GameError("system_may_only_stand", "A time-out can only stand.")
    elif not s.live:
        return GameError("not_for_staff", "Staff enter decisions only on live tables.")
    elif not is_floor(box.holder):
        return GameError("floor_only", f"Box {box.number}'s holder {box.holder} decides for himself.")
    rule = _HAND_RULES.get(cmd_type)
    error = None if rule is None else rule(s.profile, box, box.hands[hand])
    if error is None and s.tournament_table and cmd_type in (C.Double, C.Split):
        error = _extra_stake_refusal(s, cmd_type, box, hand)
    return error


def _extra_stake_refusal(s: TableState, cmd_type: type[Decision], box: Box, hi: int) -> GameError | None:
    """A double or split stakes as much again: at a tournament table, from the holder's
    points (Art. 10: no play on credit). The house's free chip costs him nothing."""
    hand = box.hands[hi]
    if free_double(s.profile, hand) if cmd_type is C.Double else free_split(s.profile, box, hand):
        return None
    stake = stake_on(box, box.holder, hi)
    return points_refusal(s, box.holder, stake.amount - stake.excess)


def _decision(s: TableState, cmd: Decision, actor: Actor) -> tuple[Box, Hand]:
    """Checks common to hit/stand/double/split (the phase is checked already): a decision
    is awaited, it is this hand's turn, the actor decides for it and the house allows it."""
    check(decision_refusal(s))
    bi = box_index(s, cmd.box)
    box = s.boxes[bi]
    if bi != s.turn_box or cmd.hand != s.turn_hand:
        raise GameError("not_your_turn", f"It is box {s.boxes[s.turn_box].number}'s turn, hand {s.turn_hand}.")
    check(turn_refusal(s, type(cmd), actor, box, cmd.hand))
    return box, box.hands[cmd.hand]


def hit(s: TableState, cmd: C.Hit, actor: Actor, out: Out) -> None:
    box, hand = _decision(s, cmd, actor)
    out.append(E.Acted(box=box.number, hand=cmd.hand, action="hit", by=actor.id))
    s.deal_queue.append(CardTarget(box.number, cmd.hand))
    run(s, out)


def stand(s: TableState, cmd: C.Stand, actor: Actor, out: Out) -> None:
    box, hand = _decision(s, cmd, actor)
    hand.done = True
    out.append(E.Acted(box=box.number, hand=cmd.hand, action="stand", by=actor.id))
    out.append(E.HandDone(box=box.number, hand=cmd.hand, total=hand_value(hand.cards)[0], bust=False))
    run(s, out)


def double(s: TableState, cmd: C.Double, actor: Actor, out: Out) -> None:
    box, hand = _decision(s, cmd, actor)
    p = s.profile
    stake = stake_on(box, box.holder, cmd.hand)
    free = free_double(p, hand)
    hand.doubled = True
    out.append(E.Acted(box=box.number, hand=cmd.hand, action="free double" if free else "double", by=actor.id))
    if free:
        place_free(s, out, box, box.holder, WagerKind.FREE_DOUBLE, stake.amount - stake.excess, cmd.hand)
    else:
        w = place(s, out, box, box.holder, WagerKind.DOUBLE, stake.amount - stake.excess, cmd.hand)
        w.excess = double_excess(s, stake, w.amount)  # Art. 27: not paid beyond the maximum
    _ask_behind(s, out, box, cmd.hand, "double")


def split(s: TableState, cmd: C.Split, actor: Actor, out: Out) -> None:
    box, hand = _decision(s, cmd, actor)
    p = s.profile
    stake = stake_on(box, box.holder, cmd.hand)
    free = free_split(p, box, hand)
    aces = VALUE[hand.cards[0]] == 1
    new = Hand([hand.cards.pop()], split=True, split_aces=aces)
    hand.split = True
    hand.split_aces = aces
    hand.tens_ace = False
    box.hands.append(new)
    out.append(E.Acted(box=box.number, hand=cmd.hand, action="free split" if free else "split", by=actor.id))
    if free:
        place_free(s, out, box, box.holder, WagerKind.FREE_SPLIT, stake.amount - stake.excess, len(box.hands) - 1)
    else:
        place(s, out, box, box.holder, WagerKind.SPLIT, stake.amount - stake.excess, len(box.hands) - 1)
    _ask_behind(s, out, box, cmd.hand, "split")


# -- the players behind ---------------------------------------------------------------------


def _ask_behind(s: TableState, out: Out, box: Box, hi: int, action: Literal["double", "split"]) -> None:
    players = []
    for w in box.wagers:
        behind = w.hand == hi and w.player != box.holder and w.kind in (WagerKind.BEHIND, WagerKind.SPLIT)
        if behind and not w.settled and w.player not in players:
            players.append(w.player)
    if players:
        s.behind = players
        s.behind_action = action
        out.append(E.BehindAsked(box=box.number, hand=hi, action=action, players=list(players)))
        return
    _behind_done(s, out, action)


def _behind_done(s: TableState, out: Out, action: Literal["double", "split"]) -> None:
    s.behind = []
    s.behind_action = ""
    if action == "double":
        s.deal_queue.append(CardTarget(s.boxes[s.turn_box].number, s.turn_hand))
    run(s, out)


def behind_refusal(s: TableState, action: Literal["double", "split"]) -> GameError | None:
    """Why no ``action`` waits for the players behind, or None."""
    if s.behind_action != action or not s.behind:
        return GameError("no_behind_choice", f"No {action} is waiting for the players behind.")
    return None


def behind_player_refusal(s: TableState, actor: Actor, player: str) -> GameError | None:
    """Why ``actor`` may not answer the choice for ``player`` (whom the command names) behind
    the box, or None. A time-out answers for them all."""
    if actor.role == "system":
        return None
    error = owner_refusal(s, player, actor)
    if error is None and owner(s, player, actor) not in s.behind:
        return GameError("not_behind", "You have no bet behind waiting for this choice.")
    return error


def _behind_check(s: TableState, cmd: C.BehindDouble | C.BehindSplit, actor: Actor,
                  action: Literal["double", "split"]) -> tuple[Box, str]:
    """The box a double or split waits on, and who answers ("" = a time-out for all)."""
    check(behind_refusal(s, action))
    box = s.boxes[s.turn_box]
    if cmd.box != box.number:
        raise GameError("not_your_turn", f"The choice is about box {box.number}.")
    check(behind_player_refusal(s, actor, cmd.player))
    return box, "" if actor.role == "system" else owner(s, cmd.player, actor)


def behind_double(s: TableState, cmd: C.BehindDouble, actor: Actor, out: Out) -> None:
    box, who = _behind_check(s, cmd, actor, "double")
    if not who:
        if cmd.accept:
            raise GameError("system_may_only_decline", "A time-out declines the double.")
        for pl in s.behind:
            out.append(E.BehindChose(box=box.number, player=pl, choice="no double"))
        s.behind = []
    else:
        if cmd.accept:
            stake = stake_on(box, who, s.turn_hand)
            place(s, out, box, who, WagerKind.DOUBLE, stake.amount - stake.excess, s.turn_hand)
        out.append(E.BehindChose(box=box.number, player=who, choice="double" if cmd.accept else "no double"))
        s.behind.remove(who)
    if not s.behind:
        _behind_done(s, out, "double")


def behind_split(s: TableState, cmd: C.BehindSplit, actor: Actor, out: Out) -> None:
    box, who = _behind_check(s, cmd, actor, "split")
    hi, new = s.turn_hand, len(box.hands) - 1
    if not who:
        if cmd.choice != "first":
            raise GameError("system_may_only_follow_first", "A time-out follows the first hand.")
        for pl in s.behind:
            out.append(E.BehindChose(box=box.number, player=pl, choice="first"))
        s.behind = []
    else:
        stake = stake_on(box, who, hi)
        if cmd.choice == "second":
            for w in box.wagers:
                if w.player == who and w.hand == hi and not w.settled:
                    w.hand = new
        elif cmd.choice == "both":
            place(s, out, box, who, WagerKind.SPLIT, stake.amount - stake.excess, new)
        out.append(E.BehindChose(box=box.number, player=who, choice=cmd.choice))
        s.behind.remove(who)
    if not s.behind:
        _behind_done(s, out, "split")
