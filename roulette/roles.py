"""Who may send which roulette command, and for whose chips: the role rules in one place.

One role vocabulary for every game (``games.commands``): ``player``, ``croupier``,
``chef``, ``director`` and ``system``.

* Only a player stakes his own money. A chip command (``CHIPS``) from a player acts for
  himself alone; staff send chip commands (and ``mark_unclaimed``) only for floor players
  (``games.players``: cash chips on a live felt), and only at a live table.
* Each console command (``CONSOLE``) names the lowest role that may give it:
  croupier < chef < director. Art. 15: suspending or closing is for the Direzione Giochi,
  that is the director, or a chef de table on the director's recorded authorisation
  (``direzione``); resuming a suspended table is the director's alone.
* The wheel (``WHEEL``) is run by the croupier at a live table and by the server at an
  RNG table.
* The server (``system``) does only what the house does without a person, and only at an
  RNG table (``SYSTEM``): its clock opens the next spin and runs the wheel, and after a
  crash it settles the spin cut off on its committed number, or refunds one still open. A
  timer never stakes, restates, decides a late bet, registers, suspends, closes or changes
  limits. Refunding an open spin is otherwise the director's.

These rules are checked before the phase (``roulette.phases``): a refusal that says "not
you" comes first.
"""

from __future__ import annotations

from typing import NamedTuple

from games.commands import Actor
from games.errors import GameError
from games.players import FLOOR_PREFIX, is_floor

from .phases import Phase

RANK = {"player": 0, "croupier": 1, "chef": 2, "director": 3}
LABEL = {"croupier": "croupier", "chef": "chef de table", "director": "director of games"}

# Commands that move a player's chips: a player sends them for himself; staff only for
# floor players at a live table.
CHIPS = frozenset((
    "place_bet", "place_announced", "same_again", "withdraw_bet", "choose_partage", "set_partage_preference",
    "move_prisoner",
))  # fmt: skip
# Commands by which staff enter or record a floor player's chips: only at a live table.
FLOOR_ENTRY = CHIPS | {"mark_unclaimed"}


class Console(NamedTuple):
    role: str  # the lowest role that may give it
    what: str  # "Only the <role> may <what>."


CONSOLE: dict[str, Console] = {
    "open_spin": Console("croupier", "open the table for bets"),
    "launch_ball": Console("croupier", "launch the ball"),
    "no_more_bets": Console("croupier", "call rien ne va plus"),
    "result": Console("croupier", "enter the result"),
    "last_spin": Console("croupier", "announce la dernière"),
    "accept_late": Console("chef", "accept a late bet"),
    "refuse_late": Console("chef", "refuse a late bet"),
    "void_spin": Console("chef", "declare the spin void"),
    "register_societa": Console("chef", "register a società"),
    "mark_unclaimed": Console("chef", "record unclaimed bets or wins"),
    "suspend": Console("chef", "suspend the table"),  # a chef: on the director's authorisation
    "close_table": Console("chef", "close the table"),  # the same
    "change_settings": Console("director", "change the table's limits"),
    "raise_limit": Console("director", "raise a maximum"),
    "refund_spin": Console("director", "refund the open spin"),
}
RESUME = Console("director", "resume a suspended table")  # open_spin at a suspended table
DIREZIONE = frozenset(("suspend", "close_table"))  # Art. 15
WHEEL = frozenset(("launch_ball", "no_more_bets", "result", "void_spin"))
SYSTEM = frozenset(("open_spin", "refund_spin", *WHEEL))


def actor_refusal(actor: object) -> GameError | None:
    """None for an actor who may give commands at all; else why not."""
    if (
        not isinstance(actor, Actor)
        or (actor.role not in RANK and actor.role != "system")
        or not isinstance(actor.id, str)
        or not actor.id
    ):
        return GameError("not_allowed", "Every command must name who gives it and their role.")
    if actor.role == "player" and actor.id.startswith(FLOOR_PREFIX):
        return GameError(
            "not_allowed", "A floor player has no account to play from: the table's staff enter floor chips."
        )
    return None


def refusal(tag: str, actor: Actor, *, live: bool, phase: Phase) -> GameError | None:
    """None if ``actor``'s role may send a ``tag`` command to this table (live or RNG) in
    ``phase``; else the refusal. Whose chips a chip command names is checked apart
    (``acting_for``), and so is a chef's Art. 15 authorisation (``direzione``)."""
    if actor.role == "system":
        if tag == "open_spin" and phase == Phase.SUSPENDED:
            return GameError("not_allowed", f"Only the {LABEL[RESUME.role]} may {RESUME.what}.")
        if tag in SYSTEM and not live:
            return None
        if live:
            return GameError("not_allowed", "At a live table the croupier runs the wheel: the server sends nothing.")
        return GameError("not_allowed", "At an RNG table the server only opens the spins and runs the wheel.")
    console = CONSOLE.get(tag)
    if console is None:  # a chip command: any role, for the right chips
        return None
    if tag == "open_spin" and phase == Phase.SUSPENDED and RANK[actor.role] >= RANK["croupier"]:
        console = RESUME  # Art. 15: the Direzione suspended play; it alone resumes it
    if RANK[actor.role] < RANK[console.role]:
        return GameError("not_allowed", f"Only the {LABEL[console.role]} may {console.what}.")
    if tag in WHEEL and not live:
        return GameError("rng_table", "At an RNG table the server runs the wheel and only players stake.")
    return None


def may_send(tag: str, actor: Actor, *, live: bool, phase: Phase) -> bool:
    """The role rules as a console sees them: ``refusal`` finds nothing, and staff enter
    chips only at a live table (a chef's suspend or close still needs the director's
    authorisation, which the server attaches from its record)."""
    if refusal(tag, actor, live=live, phase=phase) is not None:
        return False
    return actor.role == "player" or live or tag not in FLOOR_ENTRY


def named(player: str | None, actor: Actor) -> str:
    """The player a chip command is for: as named or, omitted, the actor himself (a
    player's own command); staff always name the player."""
    if player is None:
        if actor.role == "player":
            return actor.id
        raise GameError("unknown_player", "Name the player the command is for.")
    return player


def acting_for(actor: Actor, player: str, mine_only: str, *, live: bool) -> None:
    """Only a player stakes his own money: a player acts for himself alone (else
    ``mine_only``); staff act only for a floor player, and only at a live table."""
    if actor.role == "player":
        if actor.id != player:
            raise GameError("not_allowed", mine_only)
        return
    if not is_floor(player):
        raise GameError(
            "floor_only",
            f"{player!r} is not a floor player: only his own commands move an online player's "
            "chips; staff enter chips only for floor players (floor:<label>).",
            player=player,
        )
    if not live:
        raise GameError(
            "rng_table", "This is an RNG table: there are no floor players and no chips for staff to enter."
        )


def direzione(actor: Actor, authorised_by: str, what: str) -> str:
    """Art. 15: suspending or closing is for the Direzione Giochi: the director, or a chef
    de table on the director's recorded authorisation. Returns who authorised it."""
    if actor.role == "director":
        return authorised_by or actor.id
    if not authorised_by.strip():
        raise GameError(
            "missing_authorisation",
            f"Only the Direzione Giochi may {what} (Art. 15): name the director who authorised it.",
        )
    return authorised_by
