"""Lugano's side bets and the Blazing 7s jackpot at the table: placing and withdrawing
them, moving them onto the boxes at the close, settling Blazing 7s after the deal and
reporting to the jackpot pool. Part of ``BlackjackTable`` (a mixin): ``table.py``
dispatches every command, so there is still one owner of the transitions."""

from __future__ import annotations

from typing import Any

from blackjack import commands as C
from blackjack import jackpot as J
from blackjack.sidebets import PERFECT_PAIRS, PUSH_22, TWENTY_ONE_PLUS_THREE
from blackjack.state import SideBet, TableState, Wager
from games.errors import GameError
from games.wagers import WagerPlaced, WagerSettled, WagerVoided

# Side bet -> the profile field holding its pay table (None: not offered).
SIDE_BETS = {
    PERFECT_PAIRS: "perfect_pairs",
    TWENTY_ONE_PLUS_THREE: "twenty_one_plus_three",
    PUSH_22: "push_22",
    J.BLAZING_7S: "blazing_7s",
}


class SideBetCommands:
    state: TableState
    _ev: list[Any]

    def _place_side_bet(self, cmd: C.PlaceSideBet) -> None:
        s = self.state
        p = s.profile
        if s.phase != "betting":
            raise GameError("betting_closed", "Side bets close with the bets, before the first card.")
        owner = self._owner(cmd)
        field = SIDE_BETS.get(cmd.bet)
        table = getattr(p, field) if field else None
        if table is None:
            raise GameError("side_bet_not_offered", f"This table offers no {cmd.bet} bet.")
        cur = cmd.currency or p.currency
        if cur != p.currency:
            raise GameError("wrong_currency", f"This table plays {p.currency} chips, not {cur}.")
        if cmd.bet == J.BLAZING_7S and cur != table.currency:
            raise GameError("wrong_currency", f"Blazing 7s takes {table.currency} chips only.")
        if not any(b.box == cmd.box and b.player == owner for b in s.bets):
            raise GameError("no_main_bet", f"A side bet goes only beside your own bet on box {cmd.box}.")
        if any(x.box == cmd.box and x.player == owner and x.kind == cmd.bet for x in s.side_bets):
            raise GameError("already_bet", f"You already have a {cmd.bet} bet on box {cmd.box}.")
        if cmd.bet == J.BLAZING_7S:
            if cmd.amount != table.stake:
                raise GameError("blazing_fixed_stake", f"The Blazing 7s stake is exactly {table.stake}.")
            on_box = [b for b in s.bets if b.box == cmd.box]
            holder = self._holder_bet(cmd.box, on_box)
            if holder is None or holder.player != owner:
                raise GameError("not_box_holder", f"Only box {cmd.box}'s holder may play Blazing 7s on it.")
        elif cmd.amount < table.min_bet:
            raise GameError("below_minimum", f"The minimum {cmd.bet} bet is {table.min_bet}.")
        elif cmd.amount > table.max_bet:
            raise GameError("above_maximum", f"The maximum {cmd.bet} bet is {table.max_bet}.")
        wid = self._bet_id()
        s.side_bets.append(SideBet(cmd.box, owner, cmd.bet, cmd.amount, wid))
        self._ev.append(WagerPlaced(wid, owner, cmd.amount, f"box {cmd.box} {cmd.bet.replace('_', ' ')}"))

    def _withdraw_side_bet(self, cmd: C.WithdrawSideBet) -> None:
        s = self.state
        if s.phase != "betting":
            raise GameError("betting_closed", "Bets are closed.")
        owner = self._owner(cmd)
        for sb in s.side_bets:
            if sb.box == cmd.box and sb.player == owner and sb.kind == cmd.bet:
                s.side_bets.remove(sb)
                self._ev.append(WagerVoided(sb.wager, sb.player, sb.amount, "withdrawn"))
                return
        raise GameError("no_bet", f"You have no {cmd.bet} bet on box {cmd.box}.")

    def _jackpot_meters(self, cmd: C.JackpotMeters) -> None:
        s = self.state
        if cmd.role not in C.STAFF and cmd.role != "system":
            raise GameError("staff_only", "Only the server or the staff report the jackpot meters.")
        cfg = s.profile.blazing_7s
        if cfg is None:
            raise GameError("side_bet_not_offered", "This table has no Blazing 7s jackpot.")
        if cmd.minor < 0 or cmd.major < 0:
            raise GameError("bad_meters", "Jackpot meters cannot be negative.")
        s.jackpot_meters = [cmd.minor, cmd.major]
        self._ev.append(J.MetersChanged(jackpot=cfg.jackpot, minor=cmd.minor, major=cmd.major))

    def _side_bets_to_boxes(self) -> None:
        """At the close: each side bet joins its box's wagers (riding on no hand); a Blazing
        7s bet whose player did not end up holding the box goes back."""
        s = self.state
        by_number = {b.number: b for b in s.boxes}
        blazing = False
        for sb in s.side_bets:
            box = by_number[sb.box]
            if sb.kind == J.BLAZING_7S and sb.player != box.holder:
                self._ev.append(WagerVoided(sb.wager, sb.player, sb.amount, "Blazing 7s: only the box holder plays it"))
                continue
            box.wagers.append(Wager(sb.wager, sb.player, sb.kind, sb.amount, -1))
            blazing = blazing or sb.kind == J.BLAZING_7S
        s.side_bets = []
        s.jackpot_entered = blazing

    def _settle_blazing(self) -> None:
        """Fixed pays and envy bonuses from the table's bank; jackpot hits go to the pool
        in the report (the stake is never returned)."""
        s = self.state
        cfg = s.profile.blazing_7s
        bets = []
        for box in s.boxes:
            for w in box.wagers:
                if w.kind == J.BLAZING_7S and not w.settled:
                    c = box.hands[0].cards
                    bets.append(J.BlazingBet(w.id, w.player, box.number, (c[0], c[1])))
        results = J.round_results(bets, s.dealer[0], cfg)
        by_id = {r.wager: r for r in results}
        for box in reversed(s.boxes):  # the house pays from its right
            for w in box.wagers:
                r = by_id.get(w.id)
                if r is None:
                    continue
                self._settled(w, WagerSettled(w.id, w.player, w.amount, 0, r.fixed + r.envy, _blazing_reason(r)))
        hits = [J.Hit(level=r.line, player=r.player, wager=r.wager, box=r.box) for r in results if r.jackpot]
        self._report_jackpot(len(bets), hits)

    def _report_jackpot(self, stakes: int, hits: list[J.Hit]) -> None:
        s = self.state
        s.jackpot_entered = False
        self._ev.append(J.JackpotRoundReport(jackpot=s.profile.blazing_7s.jackpot, table=s.table_id, round=s.round,
                                             stakes=stakes, hits=hits))


def _blazing_reason(r: J.BlazingResult) -> str:
    what = {"": "no 7", "one_seven": "one 7", "two_sevens": "two 7s", "three_sevens": "three 7s",
            "minor": "minor jackpot, paid by the pool", "major": "major jackpot, paid by the pool"}[r.line]
    return f"blazing 7s: {what}" + (f" + envy bonus {r.envy}" if r.envy else "")
