"""The blackjack table: the one engine object the server drives.

``BlackjackTable.handle(command, actor) -> events`` validates the command and its actor,
asks ``phases`` whether that actor may send it now, then hands it to the round's handler
(``blackjack.round``), which checks the rest before changing anything, changes the state
and runs every step that needs no one's decision (dealing from the shoe on RNG tables,
auto-standing, the dealer's play, settlement) until the table waits for a command again.
On a live table the engine also waits for each card (``Card``) and checks it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from blackjack import commands as C
from blackjack import events as E
from blackjack.legal import legal_commands
from blackjack.phases import refuse
from blackjack.profiles import BOXES, Profile, validate
from blackjack.round import betting, decisions, offers, shoe_commands, sidebets, tournament, tournament_orders, voids
from blackjack.round.common import check_limits
from blackjack.state import TableState
from blackjack.view import TableView, table_view
from games.commands import Actor, checked_actor
from games.errors import GameError
from games.players import FLOOR_PREFIX
from games.validation import validated

Handler = Callable[[TableState, Any, Actor, list[E.Event]], None]

HANDLERS: dict[type[C.Command], Handler] = {
    C.Shuffle: shoe_commands.shuffle,
    C.Cut: shoe_commands.cut_shoe,
    C.PassCut: shoe_commands.pass_cut,
    C.Reshuffle: shoe_commands.reshuffle,
    C.CutCardOut: shoe_commands.report_cut_card,
    C.Sit: betting.sit,
    C.Leave: betting.leave,
    C.ReleaseSeat: betting.release_seat,
    C.CloseTable: betting.close_table,
    C.PlaceBet: betting.place_bet,
    C.WithdrawBet: betting.withdraw_bet,
    C.CloseBets: betting.close_bets,
    C.PlaceSideBet: sidebets.place_side_bet,
    C.WithdrawSideBet: sidebets.withdraw_side_bet,
    C.JackpotMeters: sidebets.jackpot_meters,
    C.SetLimits: betting.set_limits,
    C.Card: shoe_commands.card,
    C.Insure: offers.insure,
    C.EvenMoney: offers.even_money,
    C.DeclineOffer: offers.decline,
    C.CloseOffers: offers.close_offers,
    C.Hit: decisions.hit,
    C.Stand: decisions.stand,
    C.Double: decisions.double,
    C.Split: decisions.split,
    C.BehindDouble: decisions.behind_double,
    C.BehindSplit: decisions.behind_split,
    C.VoidRound: voids.void_round,
    C.BurnCard: shoe_commands.burn,
    C.ExposeCard: shoe_commands.expose,
    C.TournamentSeat: tournament_orders.seat,
    C.TournamentPause: tournament_orders.pause,
    C.TournamentExpel: tournament_orders.expel,
    C.TournamentEnd: tournament_orders.end,
    C.MarkUnclaimed: betting.mark_unclaimed,
}


class BlackjackTable:
    def __init__(
        self, table_id: str, profile: Profile, *, min_bet: int, max_bet: int, live: bool = False,
        tournament: bool = False,
    ) -> None:
        """``tournament``: a tournament's table (Titano Art. 22-27), which plays the phases
        its coordinator seats at it, in points (``blackjack.round.tournament``)."""
        validate(profile)
        check_limits(profile, min_bet, max_bet)
        self.state = TableState(
            table_id=table_id,
            profile=profile,
            live=live,
            min_bet=min_bet,
            max_bet=max_bet,
            button=BOXES if profile.button else 0,
            tournament_table=tournament,
        )

    @classmethod
    def from_state(cls, state: TableState) -> BlackjackTable:
        t = cls.__new__(cls)
        t.state = state
        return t

    def view(self, viewer: str | None) -> TableView:
        return table_view(self.state, viewer)

    def handle(self, command: C.Command, actor: Actor) -> list[E.Event]:
        """Apply ``command`` from ``actor``; the events it caused, in order.

        :raises GameError: the command is refused, and the state is exactly as it was.
        """
        handler = HANDLERS.get(type(command))
        if handler is None:
            raise GameError("malformed_command", "That is not a blackjack command.")
        command = validated(command)  # the struct's bounds, for commands built in Python too
        actor = checked_actor(actor)
        if actor.role == "player" and actor.id.startswith(FLOOR_PREFIX):
            raise GameError(
                "floor_id_reserved",
                "floor: ids name the croupier's floor players; no one sends commands as one.",
            )
        refuse(self.state, command, actor)
        if not self.state.tournament_table:
            out: list[E.Event] = []
            handler(self.state, command, actor, out)
            return out
        # The points move with the money events the command caused (Art. 27).
        ledger = tournament.Ledger()
        handler(self.state, command, actor, ledger)
        tournament.book(self.state, ledger)
        return list(ledger)

    def legal_commands(self, actor: Actor) -> list[str]:
        """The ``type`` tags of the commands ``actor`` may send now (``blackjack.legal``)."""
        return legal_commands(self.state, actor)
