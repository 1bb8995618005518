"""Who a wager belongs to: an online player (a wallet) or a floor player (chips on a live felt).

Only a player stakes his own money. Online players are the users the server
authenticated: their id is their login name (letters, digits, ``- _ .``: never a colon),
and only their own commands may place, withdraw, double, split, insure or otherwise
move their chips. Staff (croupier, chef, director) may enter chips only for *floor
players*: the people standing at a live table with cash chips, who have no account here.
A floor player is named by the croupier with a label (the colour of their chips, a seat):
``floor:blue``, ``floor:seat3``. The server books every floor player's chips on the
table's one floor account (``games.ledger.accounts.floor``), never on a wallet.

The engines use ``is_floor`` to tell the two apart; nothing else decides it.

>>> is_floor("floor:blue"), is_floor("alice"), is_floor("floor:"), is_floor("floor:Blue")
(True, False, False, False)
"""

from __future__ import annotations

import re

FLOOR_PREFIX = "floor:"
_LABEL = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


def is_floor(player: str) -> bool:
    """True for a well-formed floor player id (``floor:`` and a label)."""
    return (
        isinstance(player, str)
        and player.startswith(FLOOR_PREFIX)
        and _LABEL.fullmatch(player[len(FLOOR_PREFIX):]) is not None
    )
