"""Registration (Art. 23; Appendix 1): opening and closing it, entering (a player from his
wallet, the cashier for cash at the desk or a bank transfer), check-in; and the refusal
helpers every command of the coordinator shares (who, which status)."""

from __future__ import annotations

from blackjack.tournament import commands as C
from blackjack.tournament import events as E
from blackjack.tournament.seating import start_play
from blackjack.tournament.spec import fee
from blackjack.tournament.state import Entrant, TournamentState, entrant
from games.commands import Actor
from games.errors import GameError
from games.players import FLOOR_PREFIX

# The code that refuses a command in each status it is not allowed in.
STATUS = {
    "scheduled": ("not_open", "Registration is not open yet."),
    "registration": ("registration_open", "Registration is already open."),
    "closed": ("registration_closed", "Registration is closed."),
    "running": ("tournament_started", "The tournament has started."),
    "finished": ("tournament_finished", "The tournament is over."),
    "cancelled": ("tournament_cancelled", "The tournament was cancelled."),
}


def err(code: str, message: str) -> GameError:
    return GameError(code, message)


def role_refusal(actor: Actor, *roles: str) -> GameError | None:
    # The actor's role as a plain string: the cashier is a server role, not a table's.
    return None if str(actor.role) in roles else err("forbidden", f"A {actor.role} may not do that.")


def status_refusal(s: TournamentState, *allowed: str) -> GameError | None:
    return None if s.status in allowed else err(*STATUS[s.status])


def running_refusal(s: TournamentState) -> GameError | None:
    return None if s.status == "running" else err("not_running", "The tournament is not being played.")


def draw_refusal(draw: str) -> GameError | None:
    if not draw:
        return err("draw_missing", "The seating draw needs the server's seed.")
    if len(draw) % 2:
        return err("draw_invalid", "The draw seed is whole bytes in hex.")
    return None


def named(actor: Actor, player: str, staff: tuple[str, ...]) -> tuple[GameError | None, str]:
    """Who a Register/CheckIn is for: a player only himself; ``staff`` name the player."""
    role = str(actor.role)
    if role == "player":
        if player not in ("", actor.id):
            return err("players_only", "A player registers and checks in only himself."), ""
        player = actor.id
    elif role in staff:
        if not player:
            return err("player_missing", "Name the player."), ""
    else:
        return err("forbidden", f"A {actor.role} may not do that."), ""
    if player.startswith(FLOOR_PREFIX):
        return err("floor_id_reserved", "A floor player has no account to enter a tournament with."), ""
    return None, player


# -- registration (Art. 23; Appendix 1) ------------------------------------------------------


def open_refusal(s: TournamentState, c: C.OpenRegistration, a: Actor) -> GameError | None:
    return role_refusal(a, "director") or status_refusal(s, "scheduled")


def open_registration(s: TournamentState, c: C.OpenRegistration, a: Actor, out: list[E.Event]) -> None:
    s.status = "registration"
    out.append(E.RegistrationOpened(by=a.id))


def close_refusal(s: TournamentState, c: C.CloseRegistration, a: Actor) -> GameError | None:
    return role_refusal(a, "director", "system") or status_refusal(s, "registration")


def close_registration(s: TournamentState, c: C.CloseRegistration, a: Actor, out: list[E.Event]) -> None:
    s.status = "closed"
    out.append(E.RegistrationClosed(by=a.id, reason=c.reason or "closed"))


def is_sit_and_go(s: TournamentState) -> bool:
    return s.spec.format == "sit_and_go"


def register_refusal(s: TournamentState, c: C.Register, a: Actor) -> GameError | None:
    error, player = named(a, c.player, ("cashier",))
    if error is not None:
        return error
    if str(a.role) == "player" and c.source != "wallet":
        return err("source_not_allowed", "A player pays from his wallet; cash and transfers go through the cashier.")
    if str(a.role) == "cashier" and c.source == "wallet":
        return err("source_not_allowed", "The cashier takes cash or a bank transfer, not the player's wallet.")
    if c.source == "bank_transfer" and not c.reference:
        return err("reference_missing", "A bank transfer needs its reference (Art. 23).")
    if s.status != "registration":
        return err(*STATUS["scheduled"]) if s.status == "scheduled" else err(*STATUS["closed"])
    if entrant(s, player) is not None:
        return err("already_registered", f"{player} is already registered.")
    if len(s.entrants) >= s.spec.max_entrants:
        return err("tournament_full", "The tournament is full.")
    if is_sit_and_go(s) and len(s.entrants) + 1 == s.spec.min_entrants:
        return draw_refusal(c.draw)  # this entry starts the Sit&Go: it is seated by this draw
    return None


def register(s: TournamentState, c: C.Register, a: Actor, out: list[E.Event]) -> None:
    player = c.player or a.id
    sng = is_sit_and_go(s)
    s.entrants.append(Entrant(player=player, ticket=len(s.entrants) + 1, source=c.source, reference=c.reference,
                              checked_in=sng))  # Appendix 1: in a Sit&Go, entering is being there
    out.append(E.Registered(player=player, ticket=len(s.entrants), source=c.source, reference=c.reference, by=a.id))
    out.append(E.EntryPaid(player=player, buy_in=s.spec.buy_in, fee=fee(s.spec), source=c.source,
                           reference=c.reference))
    full = len(s.entrants) == s.spec.max_entrants  # Art. 23: closes at the maximum
    starts = sng and len(s.entrants) == s.spec.min_entrants  # Appendix 1: starts at 5
    if full or starts:
        s.status = "closed"
        out.append(E.RegistrationClosed(by=a.id, reason="full" if full else "started"))
    if starts:
        start_play(s, c.draw, [e.player for e in s.entrants], out)


def check_in_refusal(s: TournamentState, c: C.CheckIn, a: Actor) -> GameError | None:
    error, player = named(a, c.player, ("croupier", "cashier", "director"))
    if error is not None:
        return error
    if is_sit_and_go(s):
        return err("no_check_in", "A Sit&Go has no check-in: registering is taking part.")
    error = status_refusal(s, "registration", "closed")
    if error is not None:
        return error
    e = entrant(s, player)
    if e is None:
        return err("not_registered", f"{player} is not registered.")
    if e.checked_in:
        return err("already_checked_in", f"{player} has already handed in his ticket.")
    return None


def check_in(s: TournamentState, c: C.CheckIn, a: Actor, out: list[E.Event]) -> None:
    e = entrant(s, c.player or a.id)
    assert e is not None
    e.checked_in = True
    out.append(E.CheckedIn(player=e.player, by=a.id))
