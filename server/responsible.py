"""Responsible gaming: cool-off and self-exclusion, deposit limits, the age/ID check, and
the player's session settings (reality check, session time limit). Stored in PostgreSQL
(migration ``server/0110``); every change is audited. The rules: docs/players-and-staff.md.

- An exclusion in force refuses a login (``self_excluded`` / ``cooling_off``, with its end),
  every HTTP request and websocket with an older token (``store.get_user(playing=True)``),
  a deposit, and any stake of real money where it leaves his wallet, whatever socket it
  came by (``server.play_limits``, inside the table's commit); it closes the player's open
  sockets on every process (close 4011, through the channels: ``watch_exclusions``). It
  only ever gets longer. A cool-off lapses by itself; a self-exclusion stays until the desk
  lifts it at the player's request after its end.
- Deposit limits per player, currency and rolling window: lowering at once, raising (or
  removing) after ``CASINO_LIMIT_RAISE_HOURS``; the cashier's deposit counts the window's
  deposits to the wallet in the ledger and refuses one over any limit (``deposit_limit``).
- Stake and loss limits are set here and checked on the bet path (``server.play_limits``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Literal

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger import accounts
from games.money import currency as currency_of
from server import store
from server.auth import Principal
from server.store import audit
from server.store.users import EXCLUSION_IN_FORCE

log = logging.getLogger("casino.responsible")

EXCLUSIONS_CHANNEL = "casino-exclusions"  # a player's id, published when he is excluded

# The periods one may choose, as PostgreSQL intervals. An indefinite self-exclusion may be
# lifted (at the player's request) no sooner than six months on.
COOL_OFF = {"24h": "24 hours", "7d": "7 days", "30d": "30 days", "6w": "6 weeks"}
SELF_EXCLUSION = {"6m": "6 months", "1y": "1 year", "5y": "5 years", "indefinite": "6 months"}
PERIODS = ("daily", "weekly", "monthly")
# Two rules every limit (deposit, stake, loss) shares, in SQL, written once here: the limit in
# force over a limits row (a raise or removal whose time came applies), and the rolling
# windows each period names (joined as ``w(period, span)``).
IN_FORCE = "CASE WHEN pending_from <= now() THEN pending ELSE amount END"
WINDOWS = ("(VALUES ('daily', interval '1 day'), ('weekly', interval '7 days'), ('monthly', interval '30 days')) "
           "AS w(period, span)")
# A limits row as the player sees it: in force, and a raise still waiting with its date.
_SHOWN = (f"{IN_FORCE} AS amount, CASE WHEN pending_from > now() THEN pending END AS pending, "
          "CASE WHEN pending_from > now() THEN pending_from END AS pending_from")

ExclusionKind = Literal["cool_off", "self_exclusion"]


class Exclusion(msgspec.Struct):
    user: str
    kind: str
    period: str
    since: str
    until: str  # a cool-off's end; a self-exclusion's earliest end (it stays until lifted)
    set_by: str


class WindowLimit(msgspec.Struct):
    """One window's limit: ``amount`` in force (null: none); a raise or removal waiting
    until ``pending_from`` (then ``pending`` applies; null there: the limit goes)."""

    period: str
    amount: int | None = None
    pending: int | None = None
    pending_from: str | None = None


class PlayerLimits(msgspec.Struct):
    currency: str
    deposit: list[WindowLimit]
    reality_check_minutes: int | None = None
    session_limit_minutes: int | None = None
    stake: list[WindowLimit] = []  # what he may stake in each window (server.play_limits)
    loss: list[WindowLimit] = []  # what he may lose in each window: stakes in play count as lost


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t else None


async def exclusion_refusal(conn: asyncpg.Connection | asyncpg.Pool, user_id: str) -> GameError | None:
    """The refusal for a player under an exclusion in force, or None."""
    return (await exclusion_refusals(conn, [user_id])).get(user_id)


async def exclusion_refusals(conn: asyncpg.Connection | asyncpg.Pool, user_ids: list[str]) -> dict[str, GameError]:
    """The refusal for each of ``user_ids`` under an exclusion in force."""
    rows = await conn.fetch(
        f"""SELECT user_id, kind, period, until, until <= now() AS ended FROM player_exclusions e
           WHERE user_id = ANY($1::text[]) AND {EXCLUSION_IN_FORCE}""", user_ids)
    return {row["user_id"]: _refusal(row) for row in rows}


def _refusal(row: asyncpg.Record) -> GameError:
    until = row["until"].isoformat()
    if row["kind"] == "cool_off":
        return GameError("cooling_off", f"You are taking a break until {until}.", until=until)
    if row["ended"]:
        msg = f"Your self-exclusion ended on {until}: ask at the desk to have it lifted."
    elif row["period"] == "indefinite":
        msg = f"You excluded yourself indefinitely; it may be lifted at your request from {until}."
    else:
        msg = f"You excluded yourself until {until}; then it may be lifted at your request."
    return GameError("self_excluded", msg, until=until)


async def check_not_excluded(conn: asyncpg.Connection | asyncpg.Pool, user_id: str) -> None:
    refusal = await exclusion_refusal(conn, user_id)
    if refusal is not None:
        raise refusal


class ResponsibleGaming:
    def __init__(self, pool: asyncpg.Pool, raise_hours: float = 24.0, channels: Any = None) -> None:
        self.pool = pool
        self.raise_hours = raise_hours
        self.channels = channels

    async def _player(self, conn: asyncpg.Connection, user_id: str) -> asyncpg.Record:
        row = await conn.fetchrow("SELECT id, role, currency FROM users WHERE id = $1 AND NOT disabled", user_id)
        if row is None:
            raise GameError("unknown_user", f"There is no user {user_id!r}.")
        if row["role"] != "player":
            raise GameError("not_a_player", f"{user_id} is a {row['role']}: only players are concerned.")
        return row

    # ---- cool-off and self-exclusion ------------------------------------------------------
    async def exclude(self, by: Principal, user_id: str, kind: ExclusionKind, period: str) -> Exclusion:
        choices = COOL_OFF if kind == "cool_off" else SELF_EXCLUSION
        if period not in choices:
            raise GameError("invalid_period", f"A {kind.replace('_', '-')} lasts one of: {', '.join(choices)}.")
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the exclusion with its audit record
                await self._player(conn, user_id)
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext('exclusion:' || $1))", user_id)
                old = await conn.fetchrow("SELECT * FROM player_exclusions WHERE user_id = $1", user_id)
                until = await conn.fetchval("SELECT now() + $1::text::interval", choices[period])
                # Only ever longer: one in force that ends later stays (an indefinite one ends
                # never), and a cool-off never replaces a self-exclusion.
                now = await conn.fetchval("SELECT now()")
                keeps = old is not None and (old["kind"] == "self_exclusion" or old["until"] > now) and (
                    (old["kind"] == "self_exclusion" and kind == "cool_off")
                    or _end(old["period"], old["until"]) >= _end(period, until))
                if not keeps:
                    await conn.execute(
                        """INSERT INTO player_exclusions (user_id, kind, period, until, set_by)
                           VALUES ($1, $2, $3, $4, $5)
                           ON CONFLICT (user_id) DO UPDATE SET kind = $2, period = $3, since = now(),
                               until = $4, set_by = $5""", user_id, kind, period, until, by.id)
                row = await conn.fetchrow("SELECT * FROM player_exclusions WHERE user_id = $1", user_id)
                await audit.record(conn, by, f"player.{kind}", user_id,
                                   {"period": period, "until": row["until"].isoformat(), "kept": keeps})
        if self.channels is not None:  # his sockets close, on every process
            self.channels.publish(user_id, [EXCLUSIONS_CHANNEL])
        return _exclusion(row)

    async def lift(self, by: Principal, user_id: str) -> Exclusion:
        """The desk lifts a self-exclusion at the player's request, once its period is over."""
        async with self.pool.acquire() as conn:
            async with conn.transaction():
                await self._player(conn, user_id)
                row = await conn.fetchrow(
                    "SELECT *, until <= now() AS ended FROM player_exclusions WHERE user_id = $1 FOR UPDATE", user_id)
                if row is None or (row["kind"] == "cool_off" and row["ended"]):
                    raise GameError("not_excluded", f"{user_id} is not excluded.")
                if row["kind"] == "cool_off":
                    raise GameError("exclusion_in_force", f"A cool-off ends by itself, at {row['until'].isoformat()}.",
                                    until=row["until"].isoformat())
                if not row["ended"]:
                    raise GameError("exclusion_in_force", "A self-exclusion cannot be lifted before "
                                    f"{row['until'].isoformat()}.", until=row["until"].isoformat())
                await conn.execute("DELETE FROM player_exclusions WHERE user_id = $1", user_id)
                await audit.record(conn, by, "player.exclusion_lifted", user_id,
                                   {"kind": row["kind"], "period": row["period"], "since": row["since"].isoformat()})
        return _exclusion(row)

    # ---- the age/ID check -------------------------------------------------------------------
    async def verify(self, by: Principal, user_id: str, checked: str) -> None:
        if not checked.strip():
            raise GameError("invalid_verification", "Say what was checked (document and number).")
        async with self.pool.acquire() as conn:
            async with conn.transaction():
                await self._player(conn, user_id)
                await conn.execute("UPDATE users SET verified_at = now(), verified_by = $2, verification = $3 "
                                   "WHERE id = $1", user_id, by.id, checked)
                await audit.record(conn, by, "player.verified", user_id, {"checked": checked})

    # ---- limits -------------------------------------------------------------------------------
    async def limits(self, who: Principal, currency: str = "") -> PlayerLimits:
        cur = currency or who.currency
        currency_of(cur)
        async with self.pool.acquire() as conn:
            return await self._limits(conn, who.id, cur)

    async def _limits(self, conn: asyncpg.Connection, user_id: str, cur: str) -> PlayerLimits:
        rows = {r["period"]: r for r in await conn.fetch(
            f"SELECT period, {_SHOWN} FROM deposit_limits WHERE user_id = $1 AND currency = $2", user_id, cur)}
        play = {(r["kind"], r["period"]): r for r in await conn.fetch(
            f"SELECT kind, period, {_SHOWN} FROM play_limits WHERE user_id = $1 AND currency = $2", user_id, cur)}
        session = await conn.fetchrow("SELECT * FROM player_session_limits WHERE user_id = $1", user_id)

        def windows(found: dict[Any, asyncpg.Record], key: Any) -> list[WindowLimit]:
            return [WindowLimit(p, r["amount"], r["pending"], _iso(r["pending_from"]))
                    if (r := found.get(key(p))) is not None else WindowLimit(p) for p in PERIODS]

        return PlayerLimits(cur, windows(rows, lambda p: p), session["reality_check_minutes"] if session else None,
                            session["session_limit_minutes"] if session else None,
                            stake=windows(play, lambda p: ("stake", p)), loss=windows(play, lambda p: ("loss", p)))

    async def set_limits(self, who: Principal, currency: str, deposit: dict[str, int | None],
                         reality_check_minutes: int | None, session_limit_minutes: int | None,
                         stake: dict[str, int | None] | None = None,
                         loss: dict[str, int | None] | None = None) -> PlayerLimits:
        """The player's own limits (the whole set: a window left out has none). Lower: at
        once; higher or none: after the cooling period; the session settings at once (they
        apply from the next connection)."""
        cur = currency or who.currency
        currency_of(cur)
        asked = {"deposit": deposit, "stake": stake or {}, "loss": loss or {}}
        for kind, windows in asked.items():
            for period, amount in windows.items():
                if amount is not None and amount < 0:
                    raise GameError("invalid_limit", f"A {period} {kind} limit is a positive amount (or none).")
        for name, minutes in (("reality_check_minutes", reality_check_minutes),
                              ("session_limit_minutes", session_limit_minutes)):
            if minutes is not None and not 1 <= minutes <= 24 * 60:
                raise GameError("invalid_limit", f"{name} is 1 to 1440 minutes (or none).")
        async with self.pool.acquire() as conn:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext('limits:' || $1))", who.id)
                changes = {kind: await self._set_windows(conn, who.id, cur, kind, windows)
                           for kind, windows in asked.items()}
                await conn.execute(
                    """INSERT INTO player_session_limits (user_id, reality_check_minutes, session_limit_minutes)
                       VALUES ($1, $2, $3) ON CONFLICT (user_id)
                       DO UPDATE SET reality_check_minutes = $2, session_limit_minutes = $3""",
                    who.id, reality_check_minutes, session_limit_minutes)
                await audit.record(conn, who, "player.limits", who.id,
                                   {"currency": cur, **changes, "reality_check_minutes": reality_check_minutes,
                                    "session_limit_minutes": session_limit_minutes})
                return await self._limits(conn, who.id, cur)


    async def _set_windows(self, conn: asyncpg.Connection, user_id: str, cur: str, kind: str,
                           asked: dict[str, int | None]) -> dict[str, Any]:
        """One kind's windows (deposit_limits, or play_limits' stake or loss rows) by the rule:
        the same keeps (a pending raise dropped), lower at once, higher or none after the
        cooling period (asked again: the first request's date holds)."""
        table, extra, args = ("deposit_limits", "", ()) if kind == "deposit" else ("play_limits", " AND kind = $3",
                                                                                  (kind,))
        # What is due is due: a raise whose time came is the limit in force.
        await conn.execute(f"UPDATE {table} SET amount = pending, pending = NULL, pending_from = NULL "
                           f"WHERE user_id = $1 AND currency = $2{extra} AND pending_from <= now()",
                           user_id, cur, *args)
        current = {r["period"]: r for r in await conn.fetch(
            f"SELECT * FROM {table} WHERE user_id = $1 AND currency = $2{extra}", user_id, cur, *args)}
        changes: dict[str, Any] = {}
        for period in PERIODS:
            new = asked.get(period)
            row = current.get(period)
            now_amount = row["amount"] if row else None
            if new == now_amount:  # the same: a pending raise is dropped
                amount, pending, pending_from = now_amount, None, None
            elif new is not None and (now_amount is None or new < now_amount):  # lower: at once
                amount, pending, pending_from = new, None, None
            elif row is not None and row["pending_from"] is not None and row["pending"] == new:
                amount, pending, pending_from = now_amount, new, row["pending_from"]  # as asked before
            else:  # higher, or removed: after the cooling period
                amount, pending = now_amount, new
                pending_from = await conn.fetchval("SELECT now() + make_interval(secs => $1)", self.raise_hours * 3600)
            if kind == "deposit":
                await conn.execute(
                    """INSERT INTO deposit_limits (user_id, currency, period, amount, pending, pending_from)
                       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, currency, period)
                       DO UPDATE SET amount = $4, pending = $5, pending_from = $6""",
                    user_id, cur, period, amount, pending, pending_from)
            else:
                await conn.execute(
                    """INSERT INTO play_limits (user_id, currency, kind, period, amount, pending, pending_from)
                       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (user_id, currency, kind, period)
                       DO UPDATE SET amount = $5, pending = $6, pending_from = $7""",
                    user_id, cur, kind, period, amount, pending, pending_from)
            changes[period] = {"amount": amount, "pending": pending, "pending_from": _iso(pending_from)}
        return changes


async def check_deposit(conn: asyncpg.Connection, user_id: str, cur: str, amount: int) -> None:
    """Inside the deposit's transaction: refused for an unverified or excluded player, or
    over one of his deposit limits (the deposits to his wallet in each rolling window,
    from the ledger). Locks the player's deposits until the transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext('deposit:' || $1))", user_id)
    if await conn.fetchval("SELECT verified_at IS NULL FROM users WHERE id = $1", user_id):
        raise GameError("not_verified", f"{user_id}'s age and identity have not been checked at the desk yet.")
    await check_not_excluded(conn, user_id)
    wallet = accounts.wallet(user_id, cur)
    rows = await conn.fetch(
        f"""SELECT l.period, l.lim, (SELECT coalesce(sum(t.amount), 0)::bigint FROM ledger_transfers t
                                      WHERE t.credit = $3 AND t.code = 'deposit' AND t.at > now() - w.span) AS used
            FROM (SELECT period, {IN_FORCE} AS lim FROM deposit_limits WHERE user_id = $1 AND currency = $2) l
            JOIN {WINDOWS} USING (period)
           WHERE l.lim IS NOT NULL""", user_id, cur, wallet)
    allowed, which = None, ""
    for r in rows:
        left = max(r["lim"] - r["used"], 0)
        if allowed is None or left < allowed:
            allowed, which = left, r["period"]
    if allowed is not None and amount > allowed:
        raise GameError("deposit_limit", f"Over the player's {which} deposit limit: at most {allowed} "
                        f"more may be deposited now.", allowed=allowed, period=which)


async def play_result(conn: asyncpg.Connection | asyncpg.Pool, wallet: str, since: datetime) -> int:
    """What a player's play has won or lost since ``since`` (the reality check's ``net``):
    his wallet's posted change, less the cashier's deposits and cash-outs. Bets held and not
    yet settled count once their hold is posted or voided."""
    return int(await conn.fetchval(
        """SELECT coalesce(sum(CASE WHEN credit = $1 THEN amount ELSE -amount END), 0)::bigint
             FROM ledger_transfers
            WHERE (debit = $1 OR credit = $1) AND op IN ('transfer', 'post') AND at >= $2
              AND debit NOT LIKE 'cashier:%' AND credit NOT LIKE 'cashier:%'""", wallet, since))


def _exclusion(row: asyncpg.Record) -> Exclusion:
    return Exclusion(row["user_id"], row["kind"], row["period"], row["since"].isoformat(),
                     row["until"].isoformat(), row["set_by"])


async def watch_exclusions(resources: Any) -> None:
    """Close the sockets of a player excluded on any process (close 4011)."""
    from server.protocol import CLOSE_EXCLUDED
    from server.sessions import close_named

    def close(socket: Any) -> None:
        socket.close(CLOSE_EXCLUDED, "self_excluded: you excluded yourself from play")

    await close_named(resources, EXCLUSIONS_CHANNEL, lambda s: s.who.id if getattr(s, "who", None) else None,
                      store.excluded_among, close)


def _end(period: str, until: datetime) -> datetime:
    return datetime.max.replace(tzinfo=UTC) if period == "indefinite" else until
