"""The tournament coordinator: ``handle(command, actor) -> events``, a pure state machine.

Status: scheduled -> registration -> closed -> running -> finished, or cancelled at any
point before the end; ``paused`` while running. Each command has a *refusal* function
(who may send it, in which status, what its content must be) and an *apply* function;
``handle`` asks the first and raises its ``GameError`` before anything changes, and
``legal`` asks the same refusal functions, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from blackjack.commands import TournamentEnd, TournamentExpel, TournamentPause
from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.prizes import finish
from blackjack.tournament.ranking import report_refusal, take_report
from blackjack.tournament.registration import (
    check_in,
    check_in_refusal,
    close_refusal,
    close_registration,
    draw_refusal,
    err,
    is_sit_and_go,
    open_refusal,
    open_registration,
    register,
    register_refusal,
    role_refusal,
    running_refusal,
    status_refusal,
)
from blackjack.tournament.seating import start_play
from blackjack.tournament.spec import TournamentSpec, checked, fee
from blackjack.tournament.state import TournamentState, current_phase, entrant, issue, open_tables
from blackjack.tournament.view import TournamentView, tournament_view
from games.commands import Actor
from games.errors import GameError
from games.validation import Name, validated

Refusal = Callable[[TournamentState, Any, Actor], GameError | None]
Apply = Callable[[TournamentState, Any, Actor, list[E.Event]], None]
MAX_ID = 100  # leaves room in a table's id (a Name, at most 128) for "-<phase>-<k>"

# -- the start (Art. 23-24) -----------------------------------------------------------------


def start_refusal(s: TournamentState, c: C.Start, a: Actor) -> GameError | None:
    error = role_refusal(a, "director")
    if error is None and is_sit_and_go(s):
        error = err("starts_by_itself", "A Sit&Go starts by itself at its 5th entry (Appendix 1).")
    error = error or status_refusal(s, "registration", "closed") or draw_refusal(c.draw)
    if error is None and sum(e.checked_in for e in s.entrants) < 2:
        error = err("too_few_players", "A tournament needs at least 2 players checked in.")
    return error


def start(s: TournamentState, c: C.Start, a: Actor, out: list[E.Event]) -> None:
    if s.status == "registration":
        s.status = "closed"
        out.append(E.RegistrationClosed(by=a.id, reason="started"))
    for e in s.entrants:
        if not e.checked_in:  # Art. 23: late arrivals are not admitted and lose the fee
            e.not_admitted = e.buy_in_refunded = True
            out.append(E.NotAdmitted(player=e.player))
            out.append(E.BuyInRefunded(player=e.player, amount=s.spec.buy_in, reason="not checked in (Art. 23)"))
    start_play(s, c.draw, [e.player for e in s.entrants if e.checked_in], out)


# -- while it runs: pause, expulsion, cancellation (Art. 27) ---------------------------------


def pause_refusal(s: TournamentState, c: C.Pause, a: Actor) -> GameError | None:
    error = role_refusal(a, "director", "system") or running_refusal(s)
    return error or (err("already_paused", "The tournament is already paused.") if s.paused else None)


def pause(s: TournamentState, c: C.Pause, a: Actor, out: list[E.Event]) -> None:
    s.paused = True
    out.append(E.Paused(by=a.id, reason=c.reason))
    for t in open_tables(s):
        issue(s, t, lambda n: TournamentPause(order=n, paused=True, reason=c.reason), out)


def resume_refusal(s: TournamentState, c: C.Resume, a: Actor) -> GameError | None:
    error = role_refusal(a, "director") or running_refusal(s)
    return error or (None if s.paused else err("not_paused", "The tournament is not paused."))


def resume(s: TournamentState, c: C.Resume, a: Actor, out: list[E.Event]) -> None:
    s.paused = False
    out.append(E.Resumed(by=a.id))
    for t in open_tables(s):
        issue(s, t, lambda n: TournamentPause(order=n, paused=False), out)


def in_play(s: TournamentState, player: str) -> bool:
    """Still competing: in the stage being played, not out of its main phase nor of the
    phase being played (a player waiting for others' tie-break is in)."""
    if player in s.expelled or not s.stages or s.status != "running":
        return False
    main = s.phases[s.stages[-1].phase - 1].results.get(player)
    now = s.phases[-1].results.get(player)
    return main is not None and main.out == "" and (now is None or now.out == "")


def expel_refusal(s: TournamentState, c: C.Expel, a: Actor) -> GameError | None:
    error = role_refusal(a, "director") or running_refusal(s)
    if error is None and not in_play(s, c.player):
        error = err("not_in_tournament", f"{c.player} is not playing in this tournament.")
    return error


def expel(s: TournamentState, c: C.Expel, a: Actor, out: list[E.Event]) -> None:
    s.expelled.append(c.player)  # ranks last, no prize (Art. 27)
    out.append(E.Expelled(player=c.player, by=a.id, reason=c.reason))
    r = s.phases[-1].results.get(c.player)
    if r is not None:
        r.out = "expelled"
        if not s.tables[r.table].done:  # his points go back at his table
            issue(s, r.table, lambda n: TournamentExpel(order=n, player=c.player, reason=c.reason), out)
    stage = s.stages[-1]
    stage.blocks = [b for b in ([p for p in block if p != c.player] for block in stage.blocks) if b]


def cancel_refusal(s: TournamentState, c: C.Cancel, a: Actor) -> GameError | None:
    return role_refusal(a, "director") or status_refusal(s, "scheduled", "registration", "closed", "running")


def cancel(s: TournamentState, c: C.Cancel, a: Actor, out: list[E.Event]) -> None:
    reason = c.reason or "cancelled"
    for e in s.entrants:  # everything back, nothing twice (the absent already have their buy-in)
        if not e.buy_in_refunded:
            e.buy_in_refunded = True
            out.append(E.BuyInRefunded(player=e.player, amount=s.spec.buy_in, reason=reason))
        if not e.fee_refunded:
            e.fee_refunded = True
            out.append(E.FeeRefunded(player=e.player, amount=fee(s.spec)))
    for t in open_tables(s) if s.status == "running" else []:
        issue(s, t, lambda n: TournamentEnd(order=n, reason=reason), out)
    s.status, s.pool = "cancelled", 0
    out.append(E.Cancelled(by=a.id, reason=reason))


def report(s: TournamentState, c: C.TableReport, a: Actor, out: list[E.Event]) -> None:
    if take_report(s, c, out):
        finish(s, out)


# -- the engine ------------------------------------------------------------------------------

HANDLERS: dict[type[Any], tuple[Refusal, Apply]] = {
    C.OpenRegistration: (open_refusal, open_registration),
    C.CloseRegistration: (close_refusal, close_registration),
    C.Register: (register_refusal, register),
    C.CheckIn: (check_in_refusal, check_in),
    C.Start: (start_refusal, start),
    C.Pause: (pause_refusal, pause),
    C.Resume: (resume_refusal, resume),
    C.Expel: (expel_refusal, expel),
    C.Cancel: (cancel_refusal, cancel),
    C.TableReport: (report_refusal, report),
}
_SEED = "00"  # the draw is the server's: any seed stands for it when asking what is legal


def _someone_new(s: TournamentState) -> str:
    n = len(s.entrants)
    while entrant(s, f"new-{n}") is not None:
        n += 1
    return f"new-{n}"


def _probes(s: TournamentState, a: Actor) -> dict[type[Any], list[Any]]:
    """Commands that stand for what ``a`` could send (their content is his to choose)."""
    player = str(a.role) == "player"
    phase = current_phase(s)
    return {
        C.Register: [C.Register(player="" if player else _someone_new(s), source="wallet" if player else "cashier",
                                draw=_SEED)],
        C.CheckIn: [C.CheckIn(player=p) for p in [a.id, *(e.player for e in s.entrants)]],
        C.Start: [C.Start(draw=_SEED)],
        C.Expel: [C.Expel(player=p) for p in s.order],
        C.TableReport: [C.TableReport(table=t, phase=s.tables[t].phase, seq=s.tables[t].seq + 1,
                                      order=s.tables[t].applied) for t in (phase.tables if phase else [])],
    }


class Coordinator:
    def __init__(self, tournament_id: str, spec: TournamentSpec) -> None:
        try:
            tournament_id = msgspec.convert(tournament_id, Name)
        except msgspec.ValidationError as exc:
            raise GameError("invalid_tournament", f"Tournament id: {exc}.") from None
        if len(tournament_id) > MAX_ID:
            raise GameError("invalid_tournament", f"A tournament id has at most {MAX_ID} characters.")
        self.state = TournamentState(tournament_id=tournament_id, spec=checked(spec))

    @classmethod
    def from_state(cls, state: TournamentState) -> Coordinator:
        c = cls.__new__(cls)
        c.state = state
        return c

    def handle(self, command: C.Command, actor: Actor) -> list[E.Event]:
        """Apply ``command`` from ``actor``; the events it caused, in order.

        :raises GameError: the command is refused, and the state is exactly as it was.
        """
        entry = HANDLERS.get(type(command))
        if entry is None:
            raise GameError("malformed_command", "That is not a tournament command.")
        command = validated(command)
        error = entry[0](self.state, command, actor)
        if error is not None:
            raise error
        out: list[E.Event] = []
        entry[1](self.state, command, actor, out)
        return out

    def legal(self, actor: Actor) -> list[str]:
        """The ``type`` tags of the commands ``actor`` may send now (the handlers' refusals)."""
        probes = _probes(self.state, actor)
        return [str(t.__struct_config__.tag) for t, (refusal, _) in HANDLERS.items()
                if any(refusal(self.state, c, actor) is None for c in (probes[t] if t in probes else [t()]))]

    def pending_orders(self) -> list[E.TableOrdered]:
        """Orders issued and not yet applied (by their table's reports), in order."""
        return list(self.state.orders)

    def current_tables(self) -> list[str]:
        """The tables the server must keep open, deliver orders to and read reports from:
        the phase's tables not yet done (while it runs, or until a cancellation's end)."""
        return open_tables(self.state)

    def report_cursor(self, table: str) -> int:
        """The last table event already reported for ``table`` (0: none): the next report
        covers what comes after it."""
        run = self.state.tables.get(table)
        return max(run.seq, 0) if run is not None else 0

    def view(self, viewer: str | None) -> TournamentView:
        return tournament_view(self.state, viewer)
