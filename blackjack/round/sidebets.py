"""Lugano's side bets and the Blazing 7s jackpot at the table: placing and withdrawing
them, moving them onto the boxes at the close, settling Blazing 7s after the deal and
reporting to the jackpot pool. (Pay tables and classification: ``blackjack.sidebets``.)"""

from __future__ import annotations

from typing import get_args

from blackjack import commands as C
from blackjack import jackpot as J
from blackjack.profiles import Profile
from blackjack.round.common import Out, bet_id, holder_bet, owner, settled
from blackjack.sidebets import PerfectPairs, Push22, TwentyOnePlusThree
from blackjack.state import SideBet, TableState, Wager
from blackjack.wager_kinds import WagerKind
from games.commands import Actor
from games.errors import GameError
from games.wagers import WagerPlaced, WagerSettled, WagerVoided


def _pay_table(p: Profile, kind: WagerKind) -> PerfectPairs | TwentyOnePlusThree | Push22 | J.Blazing7s | None:
    """The profile's pay table of side bet ``kind`` (None: not offered)."""
    if kind == WagerKind.PERFECT_PAIRS:
        return p.perfect_pairs
    if kind == WagerKind.TWENTY_ONE_PLUS_THREE:
        return p.twenty_one_plus_three
    if kind == WagerKind.PUSH_22:
        return p.push_22
    return p.blazing_7s


def side_bets_offered(p: Profile) -> list[str]:
    """The side bets the table offers (their ``place_side_bet`` names), in the commands' order."""
    return [kind for kind in get_args(C.SideBetKind) if _pay_table(p, WagerKind(kind)) is not None]


def offers_side_bets(p: Profile) -> bool:
    """Does the table offer any side bet?"""
    return bool(side_bets_offered(p))


def place_side_bet(s: TableState, cmd: C.PlaceSideBet, actor: Actor, out: Out) -> None:
    p = s.profile
    who = owner(s, cmd.player, actor)
    table = _pay_table(p, WagerKind(cmd.bet))
    if table is None:
        raise GameError("side_bet_not_offered", f"This table offers no {cmd.bet} bet.")
    cur = cmd.currency or p.currency
    if cur != p.currency:
        raise GameError("wrong_currency", f"This table plays {p.currency} chips, not {cur}.")
    if isinstance(table, J.Blazing7s) and cur != table.currency:
        raise GameError("wrong_currency", f"Blazing 7s takes {table.currency} chips only.")
    if not any(b.box == cmd.box and b.player == who for b in s.bets):
        raise GameError("no_main_bet", f"A side bet goes only beside your own bet on box {cmd.box}.")
    if any(x.box == cmd.box and x.player == who and x.kind == cmd.bet for x in s.side_bets):
        raise GameError("already_bet", f"You already have a {cmd.bet} bet on box {cmd.box}.")
    if isinstance(table, J.Blazing7s):
        if cmd.amount != table.stake:
            raise GameError("blazing_fixed_stake", f"The Blazing 7s stake is exactly {table.stake}.")
        holder = holder_bet(s, cmd.box, [b for b in s.bets if b.box == cmd.box])
        if holder is None or holder.player != who:
            raise GameError("not_box_holder", f"Only box {cmd.box}'s holder may play Blazing 7s on it.")
    elif cmd.amount < table.min_bet:
        raise GameError("below_minimum", f"The minimum {cmd.bet} bet is {table.min_bet}.")
    elif cmd.amount > table.max_bet:
        raise GameError("above_maximum", f"The maximum {cmd.bet} bet is {table.max_bet}.")
    wid = bet_id(s)
    s.side_bets.append(SideBet(cmd.box, who, WagerKind(cmd.bet), cmd.amount, wid))
    out.append(WagerPlaced(wid, who, cmd.amount, f"box {cmd.box} {cmd.bet.replace('_', ' ')}"))


def withdraw_side_bet(s: TableState, cmd: C.WithdrawSideBet, actor: Actor, out: Out) -> None:
    who = owner(s, cmd.player, actor)
    for sb in s.side_bets:
        if sb.box == cmd.box and sb.player == who and sb.kind == cmd.bet:
            s.side_bets.remove(sb)
            out.append(WagerVoided(sb.wager, sb.player, sb.amount, "withdrawn"))
            return
    raise GameError("no_bet", f"You have no {cmd.bet} bet on box {cmd.box}.")


def jackpot_meters(s: TableState, cmd: C.JackpotMeters, actor: Actor, out: Out) -> None:
    cfg = s.profile.blazing_7s
    assert cfg is not None  # phases: a table without the jackpot refuses the meters
    if cmd.minor < 0 or cmd.major < 0:
        raise GameError("bad_meters", "Jackpot meters cannot be negative.")
    s.jackpot_meters = [cmd.minor, cmd.major]
    out.append(J.MetersChanged(jackpot=cfg.jackpot, minor=cmd.minor, major=cmd.major))


def side_bets_to_boxes(s: TableState, out: Out) -> None:
    """At the close: each side bet joins its box's wagers (riding on no hand); a Blazing
    7s bet whose player did not end up holding the box goes back."""
    by_number = {b.number: b for b in s.boxes}
    blazing = False
    for sb in s.side_bets:
        box = by_number[sb.box]
        if sb.kind == WagerKind.BLAZING_7S and sb.player != box.holder:
            out.append(WagerVoided(sb.wager, sb.player, sb.amount, "Blazing 7s: only the box holder plays it"))
            continue
        box.wagers.append(Wager(sb.wager, sb.player, sb.kind, sb.amount, -1))
        blazing = blazing or sb.kind == WagerKind.BLAZING_7S
    s.side_bets = []
    s.jackpot_entered = blazing


def settle_blazing(s: TableState, out: Out) -> None:
    """Fixed pays and envy bonuses from the table's bank; jackpot hits go to the pool in
    the report (the stake is never returned)."""
    cfg = s.profile.blazing_7s
    assert cfg is not None  # only a Blazing 7s table enters the pool
    bets = []
    for box in s.boxes:
        for w in box.wagers:
            if w.kind == WagerKind.BLAZING_7S and not w.settled:
                c = box.hands[0].cards
                bets.append(J.BlazingBet(w.id, w.player, box.number, (c[0], c[1])))
    results = J.round_results(bets, s.dealer[0], cfg)
    by_id = {r.wager: r for r in results}
    for box in reversed(s.boxes):  # the house pays from its right
        for w in box.wagers:
            r = by_id.get(w.id)
            if r is None:
                continue
            settled(out, w, WagerSettled(w.id, w.player, w.amount, 0, r.fixed + r.envy, _blazing_reason(r)))
    hits = [J.Hit(level=r.line, player=r.player, wager=r.wager, box=r.box) for r in results if r.jackpot]
    report_jackpot(s, out, len(bets), hits)


def report_jackpot(s: TableState, out: Out, stakes: int, hits: list[J.Hit]) -> None:
    cfg = s.profile.blazing_7s
    assert cfg is not None
    s.jackpot_entered = False
    out.append(J.JackpotRoundReport(jackpot=cfg.jackpot, table=s.table_id, round=s.round, stakes=stakes, hits=hits))


def _blazing_reason(r: J.BlazingResult) -> str:
    what = {"": "no 7", "one_seven": "one 7", "two_sevens": "two 7s", "three_sevens": "three 7s",
            "minor": "minor jackpot, paid by the pool", "major": "major jackpot, paid by the pool"}[r.line]
    return f"blazing 7s: {what}" + (f" + envy bonus {r.envy}" if r.envy else "")
