"""Account kinds and the only way to build account ids.

An id says what the account is: ``<kind>:<owner...>[:<CUR>]``, e.g. ``wallet:anna:CHF``,
``bank:roulette-1:EUR``, ``points:spring-cup:anna``. The kind decides who may go below
zero: the cashier (it issues chips), house banks, jackpots, a live table's floor account
and a tournament's points pool may; every other account never goes negative, a wallet only within an inspector-granted
credit line (Art. 16). Points (PTS) live only in ``points`` / ``points_pool`` accounts.
"""

from __future__ import annotations

import re
from enum import StrEnum

from games.errors import GameError
from games.money import CURRENCIES
from games.players import is_floor


class Kind(StrEnum):
    WALLET = "wallet"
    BANK = "bank"
    CASHIER = "cashier"
    UNCLAIMED = "unclaimed"
    JACKPOT = "jackpot"
    PRIZE_POOL = "prize_pool"
    FEES = "fees"
    POINTS = "points"
    POINTS_POOL = "points_pool"
    FLOOR = "floor"


# Issuers and house money: their balance may be negative (the sum stays zero).
MAY_GO_NEGATIVE = frozenset({Kind.CASHIER, Kind.BANK, Kind.JACKPOT, Kind.POINTS_POOL, Kind.FLOOR})
POINTS_CURRENCY = "PTS"

# How many name parts each kind has after the prefix, and whether the last one is a currency.
_SHAPE: dict[Kind, tuple[int, bool]] = {
    Kind.WALLET: (2, True),
    Kind.BANK: (2, True),
    Kind.CASHIER: (1, True),
    Kind.UNCLAIMED: (2, True),
    Kind.JACKPOT: (2, True),
    Kind.PRIZE_POOL: (2, True),
    Kind.FEES: (1, True),
    Kind.POINTS: (2, False),
    Kind.POINTS_POOL: (1, False),
    Kind.FLOOR: (2, True),
}

_NAME = re.compile(r"^[A-Za-z0-9_.@#/+-]{1,64}$")


def _name(part: str, what: str) -> str:
    if not isinstance(part, str) or not _NAME.fullmatch(part):
        raise GameError(
            "invalid_account",
            f"{what} {part!r} is not usable in an account name "
            "(1-64 letters, digits or . _ - @ # / +; no colons or spaces).",
        )
    return part


def _cash(cur: str) -> str:
    c = CURRENCIES.get(cur)
    if c is None:
        raise GameError("unknown_currency", f"Unknown currency {cur!r}.")
    if not c.cash:
        raise GameError("points_not_transferable", f"{cur} points are not chips; use points accounts.")
    return cur


def wallet(user: str, cur: str) -> str:
    return f"wallet:{_name(user, 'User')}:{_cash(cur)}"


def bank(table: str, cur: str) -> str:
    return f"bank:{_name(table, 'Table')}:{_cash(cur)}"


def cashier(cur: str) -> str:
    return f"cashier:{_cash(cur)}"


def unclaimed(table: str, cur: str) -> str:
    """The table's register of chips left by absent players (Art. 19)."""
    return f"unclaimed:{_name(table, 'Table')}:{_cash(cur)}"


def floor(table: str, cur: str) -> str:
    """The chips of a live table's floor players (``games.players``): people at the felt with
    cash chips and no account here. Their stakes are held from it and their wins paid to
    it, so it carries their net result against the bank; like the cashier, whose chips they
    are, it may go below zero."""
    return f"floor:{_name(table, 'Table')}:{_cash(cur)}"


def chips_of(player: str, table: str, cur: str) -> str:
    """Whose account a player's chips at ``table`` are: an online player's wallet, or for a
    floor player (``games.players``) the table's floor account. The one place it is decided."""
    return floor(table, cur) if is_floor(player) else wallet(player, cur)


def jackpot(name: str, cur: str) -> str:
    return f"jackpot:{_name(name, 'Jackpot')}:{_cash(cur)}"


def prize_pool(tournament: str, cur: str) -> str:
    return f"prize_pool:{_name(tournament, 'Tournament')}:{_cash(cur)}"


def fees(cur: str) -> str:
    return f"fees:{_cash(cur)}"


def points(tournament: str, user: str) -> str:
    """A player's tournament points (PTS): no cash value, never passed to another player."""
    return f"points:{_name(tournament, 'Tournament')}:{_name(user, 'User')}"


def points_pool(tournament: str) -> str:
    """The tournament's own side of every points movement: grants, bets, wins."""
    return f"points_pool:{_name(tournament, 'Tournament')}"


def parse(account: str) -> tuple[Kind, str]:
    """``(kind, currency)`` of a well-formed account id; ``invalid_account`` otherwise."""
    if not isinstance(account, str):
        raise GameError("invalid_account", f"Account id {account!r} is not a string.")
    head, _, rest = account.partition(":")
    try:
        kind = Kind(head)
    except ValueError:
        raise GameError("invalid_account", f"{account!r} is not an account id of a known kind.") from None
    parts = rest.split(":") if rest else []
    n, with_currency = _SHAPE[kind]
    if len(parts) != n:
        raise GameError("invalid_account", f"{account!r} is not a well-formed {kind} account id.")
    for p in parts[:-1] if with_currency else parts:
        _name(p, "Name")
    if with_currency:
        return kind, _cash(parts[-1])
    return kind, POINTS_CURRENCY


def tournament_of(account: str) -> str:
    """The tournament a points account belongs to (the first name part)."""
    return account.split(":")[1]
