"""When a roulette table accepts each command: the phases and the one table of them.

Theory of operation. A table is always in exactly one phase, and every spin walks the
same path (Art. 9-15)::

             open_spin          launch_ball            no_more_bets
    closed -----------> open -------------> launched --------------> no_more_bets
                        ^  ^                   |                          |
                        |  +----- void_spin ---+------- void_spin --------+
                        |                                                 |
                        +-- open_spin -- settled <------- result ---------+

    refund_spin:  open -> settled, every bet of the spin returned, no number
    close_table:  any phase but closed -> closed (so does la dernière's result)
    suspend:      open, launched, no_more_bets, settled -> suspended
    open_spin:    suspended -> open (the director alone)

"Faites vos jeux" (``open``) takes bets; once the ball runs (``launched``) a bet is a
late bet for the chef de table to accept (Art. 9), and nothing is taken back, split
(partage) or moved (a prisoner: Art. 12); "rien ne va plus" (``no_more_bets``) closes
the layout until the result settles the spin (``settled``). "Rien va" (a void spin, Art. 10-11) takes ``launched`` or
``no_more_bets`` back to ``open`` with every bet in place; suspending or closing the
table (Art. 15) returns every bet.

``ALLOWED[phase]`` is the set of command types (their wire tags) the phase accepts; a
command outside it is refused with ``refusal(phase, tag, live=...)``, which keeps the
code each refusal has always had (``wrong_phase``, ``table_closed``, ...). The phase is
checked after who may send the command and whose chips it names (``roulette.roles``),
before what the command asks for (amounts, maxima, the late bet or spot it names).
``RouletteTable.handle`` applies the table and ``RouletteTable.legal_commands`` reads
it; nothing else decides what a phase accepts.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple


class Phase(StrEnum):
    """A table's phase; its value is what the state and the views carry on the wire."""

    CLOSED = "closed"
    OPEN = "open"  # faites vos jeux
    LAUNCHED = "launched"  # the ball runs: late bets wait for the chef (Art. 9)
    NO_MORE_BETS = "no_more_bets"  # rien ne va plus
    SETTLED = "settled"  # the result is in; the next spin is not open yet
    SUSPENDED = "suspended"  # Art. 15: the Direzione suspended play


class Refusal(NamedTuple):
    code: str
    message: str


# Accepted in every phase: a player's standing preference, the società register and the
# director's settings, which apply from the next spin.
_ANY_TIME = ("set_partage_preference", "register_societa", "change_settings", "raise_limit")

ALLOWED: dict[Phase, frozenset[str]] = {
    Phase.CLOSED: frozenset(("open_spin", "mark_unclaimed", *_ANY_TIME)),
    Phase.OPEN: frozenset((
        "place_bet", "place_announced", "same_again", "withdraw_bet", "choose_partage", "move_prisoner",
        "launch_ball", "last_spin", "suspend", "close_table", "mark_unclaimed", "refund_spin", *_ANY_TIME,
    )),
    # Nothing is taken back once the ball runs (Art. 12): no partage, and no prisoner moved,
    # which would also put chips on another chance with no chef to accept them (Art. 9).
    Phase.LAUNCHED: frozenset((
        "place_bet", "place_announced", "same_again",
        "accept_late", "refuse_late", "no_more_bets", "void_spin", "last_spin", "suspend", "close_table",
        *_ANY_TIME,
    )),
    Phase.NO_MORE_BETS: frozenset(("result", "void_spin", "last_spin", "suspend", "close_table", *_ANY_TIME)),
    Phase.SETTLED: frozenset((
        "open_spin", "choose_partage", "move_prisoner", "last_spin", "suspend", "close_table", "mark_unclaimed",
        *_ANY_TIME,
    )),
    Phase.SUSPENDED: frozenset(("open_spin", "close_table", "mark_unclaimed", *_ANY_TIME)),
}  # fmt: skip

# An RNG table has no chef de table to accept a late bet (Art. 9): once the ball runs it
# takes no bet at all.
RNG_REFUSED: dict[Phase, frozenset[str]] = {Phase.LAUNCHED: frozenset(("place_bet", "place_announced", "same_again"))}
RNG_LATE = Refusal(
    "no_more_bets", "The ball is running: an RNG table takes no late bets (Art. 9 needs a chef de table)."
)

_PRISONER_STAYS = ("Partage and moves are taken while bets are open or after a result: once the ball is launched, "
                   "an imprisoned bet plays the spin as it stands (Art. 12).")

# Why a phase refuses a command: by the command...
WHY: dict[str, Refusal] = {
    "open_spin": Refusal("wrong_phase", "Bets are already open or the spin is not settled yet."),
    "launch_ball": Refusal("wrong_phase", "The ball can only be launched while bets are open."),
    "accept_late": Refusal("wrong_phase", "Late bets are decided only while the ball is running."),
    "refuse_late": Refusal("wrong_phase", "Late bets are decided only while the ball is running."),
    "no_more_bets": Refusal("wrong_phase", "Rien ne va plus is called while the ball is running."),
    "result": Refusal("wrong_phase", "The result is entered after rien ne va plus."),
    "void_spin": Refusal("wrong_phase", "Only a spin whose ball is running can be declared void."),
    "refund_spin": Refusal("wrong_phase", "Only a spin open for bets, its ball not launched, can be refunded."),
    "last_spin": Refusal("table_closed", "The table is not playing."),
    "suspend": Refusal("wrong_phase", "The table is not playing."),
    "close_table": Refusal("table_closed", "The table is already closed."),
    "choose_partage": Refusal("wrong_phase", _PRISONER_STAYS),
    "move_prisoner": Refusal("wrong_phase", _PRISONER_STAYS),
    "mark_unclaimed": Refusal(
        "wrong_phase", "Abandoned bets are taken while bets are open; unclaimed wins after a settlement."
    ),
}
# ... and for the bets, by the phase: what the layout says when it takes none.
BETS = frozenset(("place_bet", "place_announced", "same_again", "withdraw_bet"))
NO_BETS: dict[Phase, Refusal] = {
    Phase.CLOSED: Refusal("table_closed", "The table is closed: no bets."),
    Phase.SUSPENDED: Refusal("table_suspended", "Play at this table is suspended: no bets."),
    Phase.NO_MORE_BETS: Refusal("wrong_phase", "Rien ne va plus: nothing can be placed or taken back now."),
    Phase.LAUNCHED: Refusal("wrong_phase", "The ball is running: bets can no longer be taken back."),
    Phase.SETTLED: Refusal("wrong_phase", 'Wait for "faites vos jeux" before betting.'),
}


def accepts(phase: Phase, tag: str, *, live: bool) -> bool:
    """Whether a table in ``phase`` (live, or RNG) takes a command of type ``tag`` now."""
    return tag in ALLOWED[phase] and not (not live and tag in RNG_REFUSED.get(phase, ()))


def refusal(phase: Phase, tag: str, *, live: bool) -> Refusal | None:
    """None if ``phase`` accepts ``tag``; else the refusal to answer with."""
    if tag not in ALLOWED[phase]:
        return NO_BETS[phase] if tag in BETS else WHY[tag]
    if not live and tag in RNG_REFUSED.get(phase, ()):
        return RNG_LATE
    return None
