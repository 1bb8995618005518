"""The table's state: everything the engine knows, as msgspec Structs that round-trip
through encoding (the server persists it with the ledger transfers)."""

from __future__ import annotations

import msgspec

from games.commands import Actor

from .limits import TableSettings
from .phases import Phase


class Bet(msgspec.Struct, frozen=True, gc=False):
    """One wager: one owner's chips on one combination. (Only str/int/bool fields, so
    it can never be in a reference cycle: kept out of the cyclic GC, as a spin may
    hold tens of thousands.)"""

    wager: str
    player: str
    spot: str  # canonical combination name
    amount: int
    spin: int  # the spin it was placed for
    # Art. 8: the part above the maximum of a croupier-entered bet; never in play,
    # always handed back at settlement.
    excess: int = 0
    entered_by: str = ""
    announce: str = ""  # id of the announced bet it is a piece of
    prison: bool = False


class Stake(msgspec.Struct, frozen=True):
    """One request as the player made it: a combination and amount, or an announcement
    and unit. Kept to restate the spin for "same again" (Art. 18)."""

    spot: str  # canonical combination or announcement name
    amount: int  # the amount, or the unit of an announcement
    announced: bool = False
    ref: str = ""  # the wager or announcement id it became


class LateBet(msgspec.Struct, frozen=True):
    """A bet or announcement made after the launch, waiting for the chef (Art. 9)."""

    late: str
    player: str
    entered_by: Actor  # who made it: a player himself, or staff for a floor player
    stakes: list[Stake]


class RouletteState(msgspec.Struct, kw_only=True):
    table: str
    settings: TableSettings
    phase: Phase = Phase.CLOSED
    spin: int = 0  # the current (or last) spin's number; 0 before the first
    pending_settings: TableSettings | None = None  # from the next spin
    bets: list[Bet] = msgspec.field(default_factory=list)  # this spin's and prisoners
    late: list[LateBet] = msgspec.field(default_factory=list)
    seq: int = 0  # numbers wagers, announcements and late requests, never reset
    placed: dict[str, list[Stake]] = msgspec.field(default_factory=dict)
    previous: dict[str, list[Stake]] = msgspec.field(default_factory=dict)
    last_numbers: list[int] = msgspec.field(default_factory=list)  # newest first
    partage_players: list[str] = msgspec.field(default_factory=list)
    societa: dict[str, list[str]] = msgspec.field(default_factory=dict)
    last_paid: dict[str, int] = msgspec.field(default_factory=dict)  # last spin, per player
    derniere_spin: int = 0  # la dernière: the spin after which the table closes (0: none)
    # An RNG spin's secret and its published commitment (``roulette.fair``), from the open
    # to the result; the seed is never in a view.
    seed: str = ""
    commitment: str = ""
