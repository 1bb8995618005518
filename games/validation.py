"""Bounded field types for every command, and the check that applies them to commands
built in Python too.

msgspec enforces ``Meta`` constraints only while decoding, so a command a caller built
with ``PlaceBet(amount=2**70)`` would skip them. ``validated(command)`` round-trips a
command through msgspec so the same constraints hold whoever built it; engines call it
first in ``handle``. The limits:

* ``Amount``: a whole number of minor units, 1 to ``games.money.MAX_AMOUNT`` (10**15, the
  ledger's own bound: far inside PostgreSQL's bigint, so sums still fit); each engine then
  bounds it by the table's own maximum.
* ``Text``: free text (a reason, a name) without control characters other than tab,
  newline and carriage return (the same rule as ``server/edge.py`` at the edge), at most
  500 characters (NUL cannot be stored by PostgreSQL at all).
* ``Name``: an id a person or the server chose (a player, a wager, a late bet): 1-128
  characters, no control characters. Never empty: ``""`` is the engines' "nobody".

>>> import msgspec
>>> class Bet(msgspec.Struct, frozen=True):
...     amount: Amount
>>> validated(Bet(amount=500)).amount
500
>>> validated(Bet(amount=2**70))
Traceback (most recent call last):
...
games.errors.GameError: Expected `int` <= 1000000000000000 - at `$.amount`
"""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec

from games.errors import GameError
from games.money import MAX_AMOUNT

__all__ = ["MAX_AMOUNT", "ENTERED_MAX_FACTOR", "FORBIDDEN_ASCII", "FORBIDDEN_CHARS", "Amount", "NonNegative", "Text",
           "Name", "MaybeName", "validated"]

# A croupier-entered pile above the maximum is played on the maximum and the excess handed
# back (roulette Art. 8, Titano Art. 9); a pile above this many times the maximum is a
# mistake the console refuses instead.
ENTERED_MAX_FACTOR = 10

# The one rule for text anywhere (here and at the edge, server/edge.py): tab, newline and
# carriage return pass; no other control character, no lone surrogate. (Regex escapes, not
# the characters themselves: the OpenAPI document holds the patterns.)
FORBIDDEN_ASCII = r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f"
FORBIDDEN_CHARS = FORBIDDEN_ASCII + r"\ud800-\udfff"
_NO_CONTROL = f"[^{FORBIDDEN_CHARS}]"
_NAME_CHAR = r"[^\t\n\r" + FORBIDDEN_CHARS + "]"  # a name: not even tab, newline or return
Amount = Annotated[int, msgspec.Meta(ge=1, le=MAX_AMOUNT)]
NonNegative = Annotated[int, msgspec.Meta(ge=0, le=MAX_AMOUNT)]
Text = Annotated[str, msgspec.Meta(max_length=500, pattern=f"^{_NO_CONTROL}*$")]
# ("$(?!\n)": Python's "$" also matches before a final newline, which a name may not end with.)
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=f"^{_NAME_CHAR}+$(?!\\n)")]
MaybeName = Annotated[str, msgspec.Meta(max_length=128, pattern=f"^{_NAME_CHAR}*$(?!\\n)")]  # "": nobody

T = TypeVar("T")


def validated(command: T) -> T:
    """``command`` as msgspec would decode it (every constraint checked), or
    ``GameError('invalid_command')`` naming the field; a valid command comes back equal."""
    try:
        return msgspec.convert(msgspec.to_builtins(command), type(command))
    except msgspec.ValidationError as exc:
        raise GameError("invalid_command", str(exc)) from None

