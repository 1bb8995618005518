"""Who may send which command in which phase: the rules of the table's state machine.

Theory of operation
-------------------
A blackjack table is always in one ``Phase``. A shoe is shuffled (``shuffle``), then cut
(``cut``); each round then opens for bets (``betting``), is dealt once the croupier closes
the bets (``dealing``), may stop for insurance and even money (``offers``), waits for each
hand's decisions in turn (``play``) and ends with the dealer's hand (``dealer``), after
which the next round opens, or the shoe ends (back to ``shuffle``). A shoe that runs short
mid-round stops the round until the discards are shuffled (``reshuffle``); a closed table
(``closed``) waits for the staff's next shuffle.

Commands move the table; ``BlackjackTable.handle`` first asks this module whether the
command may be sent at all, in this order, and refuses it with a stable code otherwise:

1. ``WHO``: the roles that may send it (``games.commands.Role``; a command absent from
   ``WHO`` may come from anyone, and its handler checks whose chips, box or turn it is);
2. ``_house_rule``: whether this table has it at all (a live table's cards, a house that
   burns misdrawn cards, a table without the Blazing 7s jackpot; a tournament table's
   drawn seats, and its orders, which only a tournament table takes);
3. ``ALLOWED``: the phases that allow it.

(Before them, a chef's ``close_table`` needs the director's recorded authorisation.)
Only then does the command's handler (``blackjack.round``) check what depends on the
command's content and the round (the box, the turn, the amounts) and change the state;
nothing is changed before every check has passed. Within a phase the automatic steps
(dealing from an RNG shoe, the dealer's play, settlement) run in ``round.steps`` until
someone must act again. ``legal_commands`` reads the same tables, and asks the handlers'
own checks, to tell each actor what he may send now.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from blackjack import commands as C
from games.commands import Actor, Role
from games.errors import GameError

if TYPE_CHECKING:
    from blackjack.state import TableState


class Phase(StrEnum):
    SHUFFLE = "shuffle"
    CUT = "cut"
    BETTING = "betting"
    DEALING = "dealing"
    OFFERS = "offers"
    PLAY = "play"
    DEALER = "dealer"
    RESHUFFLE = "reshuffle"
    CLOSED = "closed"


ANY = frozenset(Phase)
# A round is under way (a shoe that ran short mid-round included).
ROUND_PHASES = frozenset((Phase.DEALING, Phase.OFFERS, Phase.PLAY, Phase.DEALER, Phase.RESHUFFLE))
BETWEEN_ROUNDS = ANY - ROUND_PHASES
# A burned card can be recorded (a house that offers misdrawn cards: only in ``play``).
BURN_PHASES = frozenset((Phase.DEALING, Phase.OFFERS, Phase.PLAY, Phase.DEALER))


# -- 1. who ---------------------------------------------------------------------------------

PLAYER: frozenset[Role] = frozenset(("player",))
STAFF: frozenset[Role] = frozenset(("croupier", "chef", "director"))
# The house: staff, or the server doing without a person what the house does (an RNG
# table's shuffle and close of bets, a gone player's seat, voiding a round cut off by a crash).
HOUSE: frozenset[Role] = STAFF | {"system"}
DIRECTION: frozenset[Role] = frozenset(("chef", "director"))


class Who(NamedTuple):
    roles: frozenset[Role]
    code: str = "staff_only"
    message: str = "Only the croupier, the chef or the director may do that."
    # A role refused with another code than ``code``.
    other_codes: tuple[tuple[Role, str, str], ...] = ()


WHO: dict[type[C.Command], Who] = {
    C.Shuffle: Who(HOUSE),
    C.Reshuffle: Who(STAFF),
    C.CutCardOut: Who(STAFF),
    C.Sit: Who(PLAYER, "players_only", "Only a player takes a seat."),
    C.Leave: Who(PLAYER, "players_only", "A player leaves his own seat; staff use release_seat."),
    C.ReleaseSeat: Who(HOUSE, message="Only the staff or the server release a seat."),
    # Campione Art. 15 gives closing to the Direzione Giochi: the director, or a chef he
    # authorised (``CloseTable.authorised_by``, checked in ``refuse``).
    C.CloseTable: Who(DIRECTION, message="Only the director closes a table.", other_codes=(
        ("croupier", "not_allowed", "Only the director, or a chef he authorised, closes a table."),
        ("system", "not_allowed", "Only the director, or a chef he authorised, closes a table."))),
    C.CloseBets: Who(HOUSE),
    C.JackpotMeters: Who(HOUSE, message="Only the server or the staff report the jackpot meters."),
    # Titano Art. 9: limits are the Direzione's (the chef at his table too); not a croupier's.
    C.SetLimits: Who(DIRECTION, other_codes=(
        ("croupier", "not_allowed", "Only the chef de table or the director change the limits."),)),
    C.Card: Who(STAFF),
    C.CloseOffers: Who(STAFF),
    C.VoidRound: Who(HOUSE),
    # Campione Art. 37: the capo tavolo judges chips abandoned (the director too).
    C.MarkUnclaimed: Who(DIRECTION, other_codes=(
        ("croupier", "not_allowed", "Only the chef de table records unclaimed wins (Art. 37)."),)),
    C.BurnCard: Who(STAFF),
    C.ExposeCard: Who(STAFF),
}
# A tournament's orders come from its coordinator; the server relays them (``system``).
TOURNAMENT_ORDERS = (C.TournamentSeat, C.TournamentPause, C.TournamentExpel, C.TournamentEnd)
WHO.update({cmd: Who(frozenset(("system",)), "server_only", "Only the server relays the tournament's orders.")
            for cmd in TOURNAMENT_ORDERS})


def _who_refusal(cmd_type: type[C.Command], role: Role) -> GameError | None:
    who = WHO.get(cmd_type)
    if who is None or role in who.roles:
        return None
    for other, code, message in who.other_codes:
        if role == other:
            return GameError(code, message)
    return GameError(who.code, who.message)


# -- 2. this table's house rules ------------------------------------------------------------


def _house_rule(s: TableState, cmd_type: type[C.Command]) -> GameError | None:
    if cmd_type is C.CutCardOut and not s.live:
        return GameError("not_live", "On an RNG table the engine knows where the cut card is.")
    if cmd_type is C.MarkUnclaimed and not s.live:
        return GameError("not_live", "Only a live table has a floor player's chips on its felt.")
    if cmd_type is C.Card and not s.live:
        return GameError("not_live", "Cards come from the shuffled shoe on an RNG table.")
    if cmd_type is C.ExposeCard and s.profile.misdrawn_card == "burn":
        return GameError("misdrawn_card_burned", "At this house a card drawn by mistake is burned, not offered.")
    if cmd_type is C.JackpotMeters and s.profile.blazing_7s is None:
        return GameError("side_bet_not_offered", "This table has no Blazing 7s jackpot.")
    if not s.tournament_table:
        if cmd_type in TOURNAMENT_ORDERS:
            return GameError("not_a_tournament_table", "This table plays no tournament.")
        return None
    return _tournament_rule(s, cmd_type)


# Titano Art. 27: seats at a tournament table are drawn, and kept (an absent player is
# charged the minimum each hand); its bets are points on the drawn box alone.
_NOT_AT_TOURNAMENTS = {
    C.Sit: "Seats at a tournament table are drawn.",
    C.Leave: "Seats at a tournament table are drawn.",
    C.ReleaseSeat: "An absent player keeps his drawn seat and is charged the minimum each hand (Art. 27).",
    C.PlaceSideBet: "A tournament table has no side bets.",
}


def _tournament_rule(s: TableState, cmd_type: type[C.Command]) -> GameError | None:
    refused = _NOT_AT_TOURNAMENTS.get(cmd_type)
    if refused is not None:
        return GameError("tournament_table", refused)
    t = s.tournament
    playing = t is not None and not t.done
    if cmd_type is C.Shuffle and not playing:
        return GameError("no_tournament_phase", "A tournament table deals only the phases seated at it.")
    if cmd_type is C.CloseTable and playing:
        return GameError("phase_in_play", "A tournament phase is being played at this table.")
    return None


# -- 3. which phase -------------------------------------------------------------------------


class Allowed(NamedTuple):
    phases: frozenset[Phase]
    code: str
    message: str
    # A phase refused with another code than ``code``.
    other_codes: tuple[tuple[Phase, str, str], ...] = ()


def _in(*phases: Phase) -> frozenset[Phase]:
    return frozenset(phases)


_BETTING = _in(Phase.BETTING)
_CUT = Allowed(_in(Phase.CUT), "not_cut_time", "There is no shoe waiting to be cut.")
_OFFERS = Allowed(_in(Phase.OFFERS), "no_offer", "Insurance and even money are not on offer now.")
_DECISION = Allowed(_in(Phase.PLAY), "not_decision_time", "No decision is being asked for now.")

ALLOWED: dict[type[C.Command], Allowed] = {
    C.Shuffle: Allowed(_in(Phase.SHUFFLE, Phase.RESHUFFLE, Phase.CLOSED), "not_shuffle_time",
                       "The shoe is shuffled only when it has ended or run short."),
    C.Cut: _CUT,
    C.PassCut: _CUT,
    C.Reshuffle: Allowed(ROUND_PHASES | _BETTING, "no_shoe", "There is no shoe in play to end."),
    C.CutCardOut: Allowed(ROUND_PHASES, "no_round", "The cut card can only come out during a round."),
    C.Sit: Allowed(ANY - {Phase.CLOSED}, "table_closed", "The table is closed."),
    C.Leave: Allowed(ANY, "", ""),
    C.ReleaseSeat: Allowed(BETWEEN_ROUNDS, "round_in_play", "A seat is released between rounds only."),
    C.CloseTable: Allowed(BETWEEN_ROUNDS - {Phase.CLOSED}, "round_in_play", "A table is closed between rounds only.",
                          ((Phase.CLOSED, "table_closed", "The table is already closed."),)),
    C.PlaceBet: Allowed(_BETTING, "betting_closed", "Bets are closed."),
    C.WithdrawBet: Allowed(_BETTING, "betting_closed", "Bets are closed."),
    C.PlaceSideBet: Allowed(_BETTING, "betting_closed", "Side bets close with the bets, before the first card."),
    C.WithdrawSideBet: Allowed(_BETTING, "betting_closed", "Bets are closed."),
    C.CloseBets: Allowed(_BETTING, "betting_closed", "Bets are not open."),
    C.JackpotMeters: Allowed(ANY, "", ""),
    C.SetLimits: Allowed(ANY, "", ""),  # in force from the next round
    C.Card: Allowed(_in(Phase.DEALING, Phase.PLAY, Phase.DEALER), "no_card_expected", "No card is due now."),
    C.Insure: _OFFERS,
    C.EvenMoney: _OFFERS,
    C.DeclineOffer: _OFFERS,
    C.CloseOffers: _OFFERS,
    C.Hit: _DECISION,
    C.Stand: _DECISION,
    C.Double: _DECISION,
    C.Split: _DECISION,
    C.BehindDouble: Allowed(_in(Phase.PLAY), "no_behind_choice", "No double is waiting for the players behind."),
    C.BehindSplit: Allowed(_in(Phase.PLAY), "no_behind_choice", "No split is waiting for the players behind."),
    C.VoidRound: Allowed(ROUND_PHASES, "no_round", "No round is being dealt."),
    C.MarkUnclaimed: Allowed(BETWEEN_ROUNDS, "round_in_play", "Unclaimed wins are recorded between rounds."),
    # Campione Art. 17: where misdrawn cards are offered, a turned card is burned only
    # during the players' drawing (``round.shoe_commands.burn``); Titano Art. 17 and Lugano
    # burn it in any phase of the round.
    C.BurnCard: Allowed(BURN_PHASES, "burn_not_allowed_now", "A card is burned only while a round is being played."),
    C.ExposeCard: Allowed(_in(Phase.PLAY, Phase.DEALER), "expose_not_allowed_now",
                          "A misdrawn card is handled during the drawing."),
    C.TournamentSeat: Allowed(BETWEEN_ROUNDS, "round_in_play", "A phase is seated between rounds only."),
    # A pause, an expulsion or the end waits for the hand in play to finish, if need be.
    C.TournamentPause: Allowed(ANY, "", ""),
    C.TournamentExpel: Allowed(ANY, "", ""),
    C.TournamentEnd: Allowed(ANY, "", ""),
}


def _phase_refusal(phase: Phase, cmd_type: type[C.Command]) -> GameError | None:
    allowed = ALLOWED[cmd_type]
    if phase in allowed.phases:
        return None
    for other, code, message in allowed.other_codes:
        if phase == other:
            return GameError(code, message)
    return GameError(allowed.code, allowed.message)


def refusal(s: TableState, cmd_type: type[C.Command], actor: Actor, authorised_by: str = "") -> GameError | None:
    """Why ``actor`` may not send a command of this type now, or None (checks 1 to 3; first,
    a chef's ``CloseTable`` needs the director's recorded authorisation: ``authorised_by``,
    which only the server fills in)."""
    if cmd_type is C.CloseTable and actor.role == "chef" and not authorised_by:
        return GameError("missing_authorisation", "A chef closes a table only with the director's authorisation.")
    return _who_refusal(cmd_type, actor.role) or _house_rule(s, cmd_type) or _phase_refusal(s.phase, cmd_type)


def refuse(s: TableState, command: C.Command, actor: Actor) -> None:
    """Raise the ``GameError`` that refuses ``command`` from ``actor`` now, if any."""
    authorised_by = command.authorised_by if isinstance(command, C.CloseTable) else ""
    error = refusal(s, type(command), actor, authorised_by)
    if error is not None:
        raise error
