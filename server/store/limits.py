"""Table limits both games share: minimum and maximum per table and currency, maxima per
combination or box, and exceptions granted by a role. Stored as versioned msgspec JSON
documents in ``table_limits`` (migration ``server/0002``), never edited: each change is a
new version with who made it, why, and the table round from which it applies (so it takes
effect from the next round, never mid-round). Table configuration, not money: refusals are
``LimitsError``s.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractAsyncContextManager
from datetime import datetime

import asyncpg
import msgspec

from games.errors import GameError
from games.money import CURRENCIES

# Who may grant an exception to a maximum (e.g. the director's doubled plein).
GRANTING_ROLES = ("chef", "inspector", "director", "admin")


class LimitsError(GameError):
    """A refused limits change. Codes: invalid_limits (a value or the change itself is
    malformed), unknown_currency, limits_retroactive (it would apply before the newest
    version already does)."""


class LimitException(msgspec.Struct, frozen=True):
    spot: str  # the combination or box it raises ("plein", "cheval", "box")
    maximum: int
    granted_by: str
    role: str
    reason: str = ""
    player: str = ""  # "" = everyone at the table


class TableLimits(msgspec.Struct, frozen=True):
    currency: str
    minimum: int
    maximum: int
    spot_maxima: dict[str, int] = {}
    exceptions: list[LimitException] = []

    def max_for(self, spot: str, player: str = "") -> int:
        """The maximum on ``spot`` for ``player``: the highest exception that applies, else
        the spot's maximum, else the table maximum."""
        base = self.spot_maxima.get(spot, self.maximum)
        raised = [e.maximum for e in self.exceptions if e.spot == spot and e.player in ("", player)]
        return max([base, *raised])


class LimitsVersion(msgspec.Struct, frozen=True):
    table: str
    version: int
    from_round: int
    limits: TableLimits
    changed_by: str
    reason: str
    changed_at: datetime


def _bad(message: str) -> LimitsError:
    return LimitsError("invalid_limits", message)


def _money(v: object, what: str) -> None:
    if type(v) is not int or v <= 0:
        raise _bad(f"{what} must be a positive whole number of minor units, not {v!r}.")


def validate_limits(limits: TableLimits) -> None:
    c = CURRENCIES.get(limits.currency)
    if c is None:
        raise LimitsError("unknown_currency", f"Unknown currency {limits.currency!r}.")
    _money(limits.minimum, "The table minimum")
    _money(limits.maximum, "The table maximum")
    if limits.maximum < limits.minimum:
        raise _bad("The table maximum is below its minimum.")
    for spot, m in limits.spot_maxima.items():
        _money(m, f"The maximum on {spot!r}")
    for e in limits.exceptions:
        _money(e.maximum, f"The exception on {e.spot!r}")
        if not e.granted_by or e.role not in GRANTING_ROLES:
            raise _bad(f"An exception needs who granted it and a role among {', '.join(GRANTING_ROLES)}.")


def _version(r: asyncpg.Record) -> LimitsVersion:
    return LimitsVersion(r["table_id"], r["version"], r["from_round"],
                         msgspec.json.decode(r["limits"], type=TableLimits),
                         r["changed_by"], r["reason"], r["changed_at"])


class LimitsStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    def _connection(self, conn: asyncpg.Connection | None) -> AbstractAsyncContextManager[asyncpg.Connection]:
        """``conn`` where the caller holds one (a table's runtime: a second connection taken
        while holding one can wait forever on a small pool), else one of the pool's."""
        return contextlib.nullcontext(conn) if conn is not None else self.pool.acquire()

    async def set(self, table: str, limits: TableLimits, changed_by: str, from_round: int,
                  reason: str = "", *, conn: asyncpg.Connection | None = None) -> LimitsVersion:
        """Record a new version applying from table round ``from_round`` (the next round)."""
        validate_limits(limits)
        if not changed_by:
            raise _bad("A limits change needs who made it.")
        if type(from_round) is not int or from_round < 0:
            raise _bad(f"from_round must be a round number >= 0, not {from_round!r}.")
        async with self._connection(conn) as c, c.transaction():
            await c.execute("SELECT pg_advisory_xact_lock(hashtext('table_limits:' || $1))", table)
            last = await c.fetchrow(
                "SELECT version, from_round FROM table_limits WHERE table_id = $1 ORDER BY version DESC LIMIT 1",
                table)
            if last is not None and from_round < last["from_round"]:
                raise LimitsError("limits_retroactive",
                                  f"Limits already apply from round {last['from_round']}; a change cannot go back.")
            r = await c.fetchrow(
                "INSERT INTO table_limits (table_id, version, from_round, limits, changed_by, reason)"
                " VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
                table, (last["version"] if last else 0) + 1, from_round,
                msgspec.json.encode(limits).decode(), changed_by, reason)
        return _version(r)

    async def current(self, table: str, *, conn: asyncpg.Connection | None = None) -> LimitsVersion | None:
        """The newest version (it may apply only from a coming round)."""
        async with self._connection(conn) as c:
            r = await c.fetchrow("SELECT * FROM table_limits WHERE table_id = $1 ORDER BY version DESC LIMIT 1", table)
        return _version(r) if r else None

    async def for_round(self, table: str, round_no: int) -> LimitsVersion | None:
        """The limits in force in ``round_no``: the newest version that applies by then."""
        async with self.pool.acquire() as c:
            r = await c.fetchrow(
                "SELECT * FROM table_limits WHERE table_id = $1 AND from_round <= $2"
                " ORDER BY from_round DESC, version DESC LIMIT 1", table, round_no)
        return _version(r) if r else None

    async def history(self, table: str) -> list[LimitsVersion]:
        async with self.pool.acquire() as c:
            rows = await c.fetch("SELECT * FROM table_limits WHERE table_id = $1 ORDER BY version", table)
        return [_version(r) for r in rows]
