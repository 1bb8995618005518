"""Commands the server sends the tournament coordinator (a tagged msgspec union).

Who sends what (``Coordinator.handle`` checks the actor's role):

* the director: ``OpenRegistration``, ``CloseRegistration``, ``Start``, ``Pause``,
  ``Resume``, ``Expel``, ``Cancel``;
* a player, for himself: ``Register`` (paid from his wallet), ``CheckIn``;
* the cashier: ``Register`` for a player who pays at the desk (``source="cashier"``) or by
  bank transfer (``"bank_transfer"``, with the transfer's reference: Art. 23), ``CheckIn``;
  a croupier or the director may also ``CheckIn`` a player who hands in his ticket;
* the server (``system``): ``CloseRegistration`` at the deadline (Art. 23: 10 minutes
  before the start), ``Pause`` after a crash, ``TableReport``.

``draw`` fields are filled by the server's RNG (never by a client): the seating draw is
derived from it, so it is recorded with the command and replays exactly.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from games.commands import Command as _Command
from games.validation import MaybeName, Name, NonNegative, Text

Seed = Annotated[str, msgspec.Meta(max_length=128, pattern="^[0-9a-f]*$")]


class OpenRegistration(_Command, tag="open_registration", frozen=True):
    pass


class CloseRegistration(_Command, tag="close_registration", frozen=True):
    reason: Text = ""


class Register(_Command, tag="register", frozen=True):
    """Enter ``player`` (a player: himself, "" or his own id; the cashier: the player he
    takes the money from). ``reference``: the bank transfer's (Art. 23 pre-registration).
    ``draw``: a Sit&Go that this entry fills enough starts at once, seated by this draw."""

    player: MaybeName = ""
    source: Literal["wallet", "cashier", "bank_transfer"] = "wallet"
    reference: Text = ""
    draw: Seed = ""


class CheckIn(_Command, tag="check_in", frozen=True):
    """The player hands in his ticket (Art. 23): only those checked in at the start play."""

    player: MaybeName = ""


class Start(_Command, tag="start", frozen=True):
    draw: Seed = ""


class Pause(_Command, tag="pause", frozen=True):
    reason: Text = ""


class Resume(_Command, tag="resume", frozen=True):
    pass


class Expel(_Command, tag="expel", frozen=True):
    """Art. 27: passing chips between players means immediate expulsion."""

    player: Name
    reason: Text = "passing chips (Art. 27)"


class Cancel(_Command, tag="cancel", frozen=True):
    """Cancel before the end: every buy-in and fee goes back (prizes never paid)."""

    reason: Text = ""


class HandResult(msgspec.Struct, frozen=True):
    """One hand completed at a table: every player still in and his points after it."""

    hand: NonNegative
    stacks: dict[str, NonNegative]


class Elimination(msgspec.Struct, frozen=True):
    player: Name
    hand: NonNegative
    stack_before: NonNegative


class TableReport(_Command, tag="table_report", frozen=True):
    """What a table of the tournament recorded since the last report (the server reads it
    from the table's stored events). ``seq``: the last table event it covers; a report at or
    below the seq already taken is stale and refused (``stale_report``), so reports may be
    sent again. ``order``: the last coordinator order the table has applied."""

    table: Name
    phase: NonNegative
    seq: NonNegative
    order: NonNegative = 0
    hands: list[HandResult] = []
    eliminated: list[Elimination] = []
    expelled: list[Name] = []
    done: bool = False
    final: dict[str, NonNegative] = {}  # with ``done``: the stacks handed back


Command = (
    OpenRegistration | CloseRegistration | Register | CheckIn | Start | Pause | Resume | Expel | Cancel
    | TableReport
)
