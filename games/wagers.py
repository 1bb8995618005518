"""Money events both engines emit, so the server maps every game to the ledger one way.

Life of a wager (one pile of chips with one owner on one spot):

* ``WagerPlaced``   the owner's chips go on the layout -> the ledger puts a *hold*.
* ``WagerSettled``  the round decided it: ``returned`` of the stake goes back to the
  owner (push, partage half, Art. 8 excess), ``stake - returned`` goes to the bank,
  and ``won`` is paid from the bank on top -> post/void the hold, transfer the win.
* ``WagerVoided``   the whole stake goes back (void spin/round, table closed).
* ``WagerRefunded`` a wager already settled as lost comes back because its round was
  annulled (blackjack, Titano Art. 7): ``amount`` goes from the bank back to the owner.
* ``ChipsUnclaimed`` chips an absent floor player left (bets on the felt, or wins not
  collected) go from his chips to the table's unclaimed register (roulette Art. 19).

A wager id is unique within its table for ever (e.g. ``"s41:p7:plein-17"``).
Adding to a stake (a blackjack double) is a new wager with its own id.
Amounts are ints in the table currency's minor unit.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class WagerPlaced(msgspec.Struct, frozen=True, tag="wager_placed"):
    wager: str
    player: str
    amount: int
    # What the chips are on, as a person would say it ("plein 17", "box 3 double").
    spot: str = ""


class WagerSettled(msgspec.Struct, frozen=True, tag="wager_settled"):
    wager: str
    player: str
    stake: int
    returned: int
    won: int
    reason: str = ""


class WagerVoided(msgspec.Struct, frozen=True, tag="wager_voided"):
    wager: str
    player: str
    amount: int
    reason: str = ""


class WagerRefunded(msgspec.Struct, frozen=True, tag="wager_refunded"):
    """A wager the round had settled as lost is given back because the round was annulled:
    ``amount`` (what the bank kept of the stake) goes from the bank back to the player."""

    wager: str
    player: str
    amount: int
    reason: str = ""


class ChipsUnclaimed(msgspec.Struct, frozen=True, tag="unclaimed_recorded"):
    """Chips a player left behind, recorded by staff for the table's unclaimed register:
    ``left="bets"`` (abandoned on the layout; their wagers were voided just before) or
    ``"wins"`` (paid but not collected). ``round`` is the game's round number (a roulette
    spin); ``wagers`` the abandoned wagers, for the register's reference."""

    player: str
    # On the wire these keep the names roulette's register has always used ("spin",
    # "kind"): clients and stored histories read them.
    round: int = msgspec.field(name="spin")
    left: Literal["bets", "wins"] = msgspec.field(name="kind")
    amount: int
    wagers: list[str]
    by: str


class StackIssued(msgspec.Struct, frozen=True, tag="stack_issued"):
    """The house hands ``player`` a stack for a session of play it runs (a tournament's
    points at the start of a phase: Titano Art. 23-24): ``amount`` goes from the house's
    side to the player. ``key`` makes the movement unique at its table ("p2": phase 2)."""

    player: str
    amount: int
    key: str
    reason: str = ""


class StackReturned(msgspec.Struct, frozen=True, tag="stack_returned"):
    """``player`` hands his stack back to the house (the end of a tournament phase, an
    expulsion: Titano Art. 27 "i gettoni dovranno essere riconsegnati al tavolo")."""

    player: str
    amount: int
    key: str
    reason: str = ""
