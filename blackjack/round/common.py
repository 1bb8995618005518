"""What every part of the round needs: whose chips a command moves, finding a box, wager
ids, placing and settling wagers. Plain functions over the state; ``out`` collects the
events of the command being handled, in order."""

from __future__ import annotations

from collections.abc import Callable

from blackjack import events as E
from blackjack.profiles import Profile
from blackjack.state import Bet, Box, SideBet, TableState, Wager
from blackjack.wager_kinds import STAKE_KINDS, WagerKind
from games.commands import Actor
from games.errors import GameError
from games.players import is_floor
from games.validation import MAX_AMOUNT
from games.wagers import WagerPlaced, WagerSettled, WagerVoided

Out = list[E.Event]

# The highest table maximum any profile may set: every amount a round derives from a
# stake (an entered pile of ENTERED_MAX_FACTOR maxima, doubles, splits, a 3:2 or 30:1 pay)
# then stays far inside int64, the ledger's bigint.
MAX_TABLE_BET = MAX_AMOUNT // 1000


def check_limits(p: Profile, min_bet: int, max_bet: int) -> None:
    if min_bet <= 0 or max_bet < min_bet:
        raise GameError("bad_limits", "The minimum must be positive and the maximum at least the minimum.")
    if max_bet > MAX_TABLE_BET:
        raise GameError("bad_limits", f"The maximum may not exceed {MAX_TABLE_BET} (minor units).")
    if p.max_to_min_ratio and max_bet > p.max_to_min_ratio * min_bet:
        raise GameError("bad_limits", f"The maximum may be at most {p.max_to_min_ratio} times the minimum.")
    if p.max_bet_cap and max_bet > p.max_bet_cap:
        raise GameError("bad_limits", f"The maximum may not exceed {p.max_bet_cap} (minor units).")

def check(error: GameError | None) -> None:
    """Raise ``error``, if there is one. A handler's preconditions are ``*_refusal``
    functions, which ``blackjack.legal`` asks too: what it lists is what the handlers take."""
    if error is not None:
        raise error


def owner_refusal(s: TableState, player: str, actor: Actor) -> GameError | None:
    """Why ``actor`` may not move the chips or take the decisions of ``player`` (whom a
    command names, "" nobody), or None. A player acts only for himself; staff only for a
    floor player they name, and only on a live table (no staff command can reach an online
    player's wallet)."""
    if actor.role == "player":
        if player not in ("", actor.id):
            return GameError("players_only", "A player acts only for himself.")
        return None
    if actor.is_staff and s.live and player:
        if not is_floor(player):
            return GameError(
                "floor_only",
                f"Staff act only for floor players (floor:<label>); {player} acts for himself.",
            )
        return None
    return GameError(
        "players_only",
        "Only a player acts for his own chips; staff act for a floor player, named, on a live table.",
    )


def owner(s: TableState, player: str, actor: Actor) -> str:
    """Whose chips or decision a command moves (``player``: whom it names, "" nobody);
    refused as ``owner_refusal`` says."""
    check(owner_refusal(s, player, actor))
    return actor.id if actor.role == "player" else player


def box_index(s: TableState, number: int) -> int:
    for i, b in enumerate(s.boxes):
        if b.number == number:
            return i
    raise GameError("no_such_box", f"Box {number} is not in play this round.")


def box_numbered(s: TableState, number: int) -> Box:
    return s.boxes[box_index(s, number)]


def new_id(s: TableState) -> str:
    s.seq += 1
    return f"{s.table_id}:r{s.round}:{s.seq}"


def bet_id(s: TableState) -> str:
    """A new id for a bet placed while betting is open (unique across rounds)."""
    s.wager_serial += 1
    return f"{s.table_id}:r{s.round}:bet{s.wager_serial}"


def place(s: TableState, out: Out, box: Box, player: str, kind: WagerKind, amount: int, hand: int) -> Wager:
    w = Wager(new_id(s), player, kind, amount, hand)
    box.wagers.append(w)
    out.append(WagerPlaced(w.id, player, amount, f"box {box.number} {kind}"))
    return w


def place_free(s: TableState, out: Out, box: Box, player: str, kind: WagerKind, amount: int, hand: int) -> None:
    """The house's free chip (Free Bet): worth ``amount``, none of it the player's."""
    w = Wager(new_id(s), player, kind, amount, hand)
    box.wagers.append(w)
    what = "free double" if kind == WagerKind.FREE_DOUBLE else "free split"
    out.append(WagerPlaced(w.id, player, 0, f"box {box.number} {what} (the house's chip of {amount})"))


def stake_on(box: Box, player: str, hand: int) -> Wager:
    """The player's own stake (not a double) riding on ``hand``; on a free split hand, the
    house's chip that stands for it. Every hand a player answers for has one."""
    for w in box.wagers:
        if w.player == player and w.hand == hand and w.kind in STAKE_KINDS:
            return w
    raise AssertionError(f"{player} has no stake on box {box.number} hand {hand}")


def settled(out: Out, w: Wager, ev: WagerSettled) -> None:
    """Record one settlement: the wager is closed and what the bank kept is noted."""
    w.settled = True
    w.kept = ev.stake - ev.returned
    w.paid = ev.returned + ev.won
    out.append(ev)


def holder_bet(s: TableState, n: int, bets: list[Bet]) -> Bet | None:
    """Whose bet holds box ``n``: the seated player's (None if he has not bet: the box is
    his, so it is not played), else (a free box) the highest bet in play (an entered pile's
    excess over the maximum is not in play, so it takes no box from anyone); a tie goes to
    the player seated nearest the shoe."""
    seated = s.seats[n]
    if seated:
        return next((b for b in bets if b.player == seated), None)

    def seat_of(player: str) -> int:
        return s.seats.index(player) if player in s.seats else 99

    return min(bets, key=lambda b: (-(b.amount - b.excess), seat_of(b.player), bets.index(b)))


def return_bets(s: TableState, out: Out, which: Callable[[Bet | SideBet], bool], reason: str) -> None:
    """Return the open bets and side bets ``which`` accepts (each has a box and a player)."""
    for b in [b for b in s.bets if which(b)]:
        s.bets.remove(b)
        out.append(WagerVoided(b.wager, b.player, b.amount, reason))
    for sb in [x for x in s.side_bets if which(x)]:
        s.side_bets.remove(sb)
        out.append(WagerVoided(sb.wager, sb.player, sb.amount, reason))
