"""The unclaimed register (roulette Art. 19, blackjack Campione Art. 37): chips the chef de
table declared abandoned, or wins nobody collected, kept on the table's ``unclaimed``
account until the player claims them at the cashier or, after the configured period, they
go to the table's float (its bank).

Nothing but the countersignatures (below) is stored here: the register is read from the
ledger and the tables' events. An item is one ``unclaimed`` transfer into a table's register (``server.money``,
from the engines' ``ChipsUnclaimed``: ``<table>/unclaimed/<round>/<player>/<bets|wins>``),
with who recorded it from the table's ``unclaimed_recorded`` event. It is *closed* by
exactly one ledger transfer out of the register, whose id is the item's
(``unclaimed/<item>/close``), so the ledger itself refuses a second closing with other
content (``id_conflict``):

* claimed (code ``unclaimed_claimed``, ref = the cashier): a floor player is paid in cash,
  ``unclaimed:<table>:<CUR>`` -> ``cashier:<CUR>`` (the chips come back to the issuer); an
  online player to his wallet;
* expired (code ``unclaimed_expired``): ``unclaimed:<table>:<CUR>`` -> ``bank:<table>:<CUR>``,
  "versate nella dotazione del tavolo", ``CASINO_UNCLAIMED_DAYS`` (default 30: the seeds set
  no period) after it was recorded, and only once it is *countersigned*.

What is stored here: the municipal controller's countersignature (the item goes to
the float "dopo essere state registrate sia dal capo che dal Controllore comunale"): an
inspector, never the person who recorded the item, signs it once (table
``unclaimed_countersignatures``, migration 0114). Until then expiry leaves the item open
past its period (``awaiting_countersignature``). A claim needs no countersignature: the
chips are the player's, and the cashier's payment is itself recorded and audited.

Every closing and every countersignature is written with its audit record in one
transaction, under a lock on the item.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from games.ledger.model import MAX_REF, Transfer
from games.ledger.store import Ledger
from games.players import is_floor
from server.auth import SERVER, Principal
from server.policy import COUNTERSIGN
from server.store import audit

DEFAULT_DAYS = 30  # Art. 19 / Art. 37 say "if not requested", no period: the house's setting
CLAIMED, EXPIRED = "unclaimed_claimed", "unclaimed_expired"

Status = Literal["open", "claimed", "expired"]

log = logging.getLogger("casino.unclaimed")


def unclaimed_days() -> int:
    """``CASINO_UNCLAIMED_DAYS`` (whole days, at least 0), else 30."""
    raw = os.environ.get("CASINO_UNCLAIMED_DAYS", "")
    if not raw:
        return DEFAULT_DAYS
    try:
        days = int(raw)
    except ValueError:
        raise GameError("invalid_settings", f"CASINO_UNCLAIMED_DAYS must be a whole number of days, not {raw!r}.") \
            from None
    if days < 0:
        raise GameError("invalid_settings", "CASINO_UNCLAIMED_DAYS cannot be negative.")
    return days


class UnclaimedItem(msgspec.Struct, kw_only=True):
    """One entry of a table's unclaimed register."""

    id: str  # stable: derived from the ledger transfer that recorded it
    table: str
    round: int  # the game's round (a roulette spin)
    left: str  # "bets" (abandoned on the layout) or "wins" (not collected)
    player: str  # whose chips: a floor player ("floor:<label>") or an online player's id
    floor: bool
    amount: int  # minor units
    currency: str
    at: str  # when it was recorded (ISO 8601)
    recorded_by: str  # the chef de table who declared it
    ledger_id: str  # the transfer into the register
    expires_at: str  # when it goes to the table's float if still open
    status: Status = "open"
    closed_at: str = ""  # claimed or expired, when
    claimed_by: str = ""  # the cashier who paid it
    claimed_for: str = ""  # the player he paid
    paid_to: str = ""  # the account credited: cashier:<CUR> (cash), a wallet, or the table's bank
    countersigned_by: str = ""  # the inspector (Controllore comunale) who countersigned it
    countersigned_at: str = ""
    # Open, past expires_at, not countersigned: expiry leaves it in the register until it is.
    awaiting_countersignature: bool = False


def item_id(ledger_id: str) -> str:
    """The register's id for the transfer that recorded an item: short, URL-safe, stable."""
    return "u" + hashlib.sha256(ledger_id.encode()).hexdigest()[:20]


def close_id(item: str) -> str:
    return f"unclaimed/{item}/close"


async def register(conn: asyncpg.Connection | asyncpg.Pool, *, status: str | None = None, table: str | None = None,
                   days: int | None = None, as_of: datetime | None = None) -> list[UnclaimedItem]:
    """Every item of the register (of ``table``; with ``status``), oldest first;
    ``awaiting_countersignature`` as of ``as_of`` (now)."""
    days = unclaimed_days() if days is None else days
    as_of = as_of or datetime.now(UTC)
    accs = await conn.fetch(
        "SELECT id, currency FROM ledger_accounts WHERE kind = 'unclaimed' "
        "AND ($1::text IS NULL OR split_part(id, ':', 2) = $1) ORDER BY id", table)
    ids = [a["id"] for a in accs]
    if not ids:
        return []
    origins = await conn.fetch(
        "SELECT id, credit, currency, amount, at FROM ledger_transfers "
        "WHERE credit = ANY($1::text[]) AND code = 'unclaimed' ORDER BY seq", ids)
    closings = {r["id"]: r for r in await conn.fetch(
        "SELECT id, credit, code, ref, at FROM ledger_transfers "
        "WHERE debit = ANY($1::text[]) AND code = ANY($2::text[])", ids, [CLAIMED, EXPIRED])}
    signed = {r["ledger_id"]: r for r in await conn.fetch(
        "SELECT ledger_id, signed_by, signed_at FROM unclaimed_countersignatures WHERE ledger_id = ANY($1::text[])",
        [r["id"] for r in origins])}
    tables = sorted({a.split(":")[1] for a in ids})
    recorded: dict[tuple[str, int, str, str], str] = {}
    for r in await conn.fetch(
            "SELECT table_id, payload->>'player' AS player, (payload->>'spin')::bigint AS round, "
            "payload->>'kind' AS left_, payload->>'by' AS by FROM table_events "
            "WHERE table_id = ANY($1::text[]) AND kind = 'unclaimed_recorded'", tables):
        recorded[(r["table_id"], r["round"], r["player"], r["left_"])] = r["by"] or ""
    out: list[UnclaimedItem] = []
    for r in origins:
        tbl = r["credit"].split(":")[1]
        rest = r["id"].removeprefix(f"{tbl}/unclaimed/")
        head, _, tail = rest.partition("/")
        player, _, left = tail.rpartition("/")
        rnd = int(head) if head.isdigit() else 0
        iid = item_id(r["id"])
        item = UnclaimedItem(
            id=iid, table=tbl, round=rnd, left=left, player=player, floor=is_floor(player), amount=r["amount"],
            currency=r["currency"], at=r["at"].isoformat(), recorded_by=recorded.get((tbl, rnd, player, left), ""),
            ledger_id=r["id"], expires_at=(r["at"] + timedelta(days=days)).isoformat())
        if (s := signed.get(r["id"])) is not None:
            item.countersigned_by, item.countersigned_at = s["signed_by"], s["signed_at"].isoformat()
        c = closings.get(close_id(iid))
        if c is not None:
            item.closed_at, item.paid_to = c["at"].isoformat(), c["credit"]
            if c["code"] == CLAIMED:
                item.status, item.claimed_by, item.claimed_for = "claimed", c["ref"], player
            else:
                item.status = "expired"
        item.awaiting_countersignature = (item.status == "open" and not item.countersigned_by
                                          and r["at"] + timedelta(days=days) <= as_of)
        if status is None or item.status == status:
            out.append(item)
    return out


async def find(conn: asyncpg.Connection | asyncpg.Pool, item: str) -> UnclaimedItem:
    for it in await register(conn):
        if it.id == item:
            return it
    raise GameError("unknown_unclaimed", f"There is no unclaimed item {item!r}.")


async def _lock(conn: asyncpg.Connection, item: str) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"unclaimed-item:{item}")


def _refuse_closed(item: UnclaimedItem) -> None:
    if item.status == "claimed":
        raise GameError("already_claimed", f"Item {item.id} was claimed on {item.closed_at} "
                                           f"(paid by {item.claimed_by} to {item.paid_to}).")
    if item.status == "expired":
        raise GameError("already_expired", f"Item {item.id} went to the table's float on {item.closed_at}.")


async def claim(pool: asyncpg.Pool, ledger: Ledger, by: Principal, item: str, player: str) -> UnclaimedItem:
    """The cashier pays an item to the player it was left by: a floor player in cash, an
    online player to his wallet. Once only: a second claim is ``already_claimed``."""
    async with pool.acquire() as conn:
        async with conn.transaction():  # the chips move only with their audit record
            await _lock(conn, item)
            it = await find(conn, item)
            _refuse_closed(it)
            if player != it.player:
                raise GameError("wrong_player", f"Item {it.id} was left by {it.player}, not {player}.")
            if it.floor:  # a person at the felt, no account here: paid in cash at the desk
                to = accounts.cashier(it.currency)
            else:
                if not await conn.fetchval("SELECT true FROM users WHERE id = $1", player):
                    raise GameError("unknown_user", f"There is no user {player!r}.")
                to = accounts.wallet(player, it.currency)
                await ledger.open_account(to, it.currency, Kind.WALLET, conn=conn)
            await ledger.apply([Transfer(close_id(it.id), accounts.unclaimed(it.table, it.currency), to, it.amount,
                                         CLAIMED, ref=by.id[:MAX_REF])], conn=conn)
            await audit.record(conn, by, "unclaimed.claim", it.id,
                               {"table": it.table, "round": it.round, "player": player, "amount": it.amount,
                                "currency": it.currency, "paid_to": to, "ledger_id": close_id(it.id)})
            return await find(conn, item)


async def countersign(pool: asyncpg.Pool, by: Principal, item: str) -> UnclaimedItem:
    """The municipal controller (an inspector) countersigns an open item the chef recorded,
    so that it may go to the table's float once its period is over (Art. 19 / Art. 37).
    Once per item: the same inspector again gets the item back unchanged; another is
    ``already_countersigned``; whoever recorded the item never countersigns it
    (``own_unclaimed``)."""
    if by.role not in COUNTERSIGN:
        raise GameError("forbidden", "Only an inspector (the Controllore comunale) countersigns the register.")
    async with pool.acquire() as conn:
        async with conn.transaction():  # the countersignature is written only with its audit record
            await _lock(conn, item)
            it = await find(conn, item)
            if it.countersigned_by == by.id:
                return it  # idempotent: a repeated request changes nothing and records nothing
            if it.countersigned_by:
                raise GameError("already_countersigned", f"Item {it.id} was countersigned by {it.countersigned_by} "
                                                         f"on {it.countersigned_at}.")
            if it.recorded_by and it.recorded_by == by.id:
                raise GameError("own_unclaimed", f"Item {it.id} was recorded by you: another person countersigns it.")
            _refuse_closed(it)
            await conn.execute("INSERT INTO unclaimed_countersignatures (item, ledger_id, signed_by) "
                               "VALUES ($1, $2, $3)", it.id, it.ledger_id, by.id)
            await audit.record(conn, by, "unclaimed.countersign", it.id,
                               {"table": it.table, "round": it.round, "player": it.player, "amount": it.amount,
                                "currency": it.currency, "recorded_by": it.recorded_by, "ledger_id": it.ledger_id})
            return await find(conn, item)


async def expire(pool: asyncpg.Pool, ledger: Ledger, *, as_of: datetime | None = None, days: int | None = None,
                 by: Principal = SERVER) -> list[UnclaimedItem]:
    """Every open, countersigned item recorded at least ``days`` before ``as_of`` (now) goes
    to its table's float (the bank); one not countersigned stays open (it is listed as
    ``awaiting_countersignature``). Idempotent: a second run finds nothing more to move."""
    days = unclaimed_days() if days is None else days
    as_of = as_of or datetime.now(UTC)
    due_before = as_of - timedelta(days=days)
    due = [it for it in await register(pool, status="open", days=days, as_of=as_of)
           if datetime.fromisoformat(it.at) <= due_before]
    held = [it for it in due if not it.countersigned_by]
    if held:
        log.info("unclaimed: %d item(s) past %d days await the controller's countersignature", len(held), days)
    due = [it for it in due if it.countersigned_by]
    done: list[UnclaimedItem] = []
    for it in due:
        async with pool.acquire() as conn:
            async with conn.transaction():
                await _lock(conn, it.id)
                now = await find(conn, it.id)
                if now.status != "open" or not now.countersigned_by:
                    continue  # claimed or expired meanwhile (a countersignature is never withdrawn)
                bank = accounts.bank(it.table, it.currency)
                await ledger.apply([Transfer(close_id(it.id), accounts.unclaimed(it.table, it.currency), bank,
                                             it.amount, EXPIRED, ref=f"unclaimed for {days} days")], conn=conn)
                await audit.record(conn, by, "unclaimed.expire", it.id,
                                   {"table": it.table, "round": it.round, "player": it.player, "amount": it.amount,
                                    "currency": it.currency, "paid_to": bank, "days": days,
                                    "as_of": as_of.isoformat(), "ledger_id": close_id(it.id),
                                    "recorded_by": it.recorded_by, "countersigned_by": it.countersigned_by})
                done.append(await find(conn, it.id))
    return done


async def keep_expiring(pool: asyncpg.Pool, ledger: Ledger, every: float = 3600.0) -> None:
    """The server's own expiry run, every hour until cancelled (every process may run it:
    an item is closed by one ledger transfer of a fixed id, under its lock, at most once)."""
    while True:
        try:
            gone = await expire(pool, ledger)
            if gone:
                log.info("unclaimed: %d item(s) past %d days went to their tables' floats", len(gone),
                         unclaimed_days())
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("unclaimed: the expiry run failed (the next one tries again)")
        await asyncio.sleep(every)


def summary(items: Sequence[UnclaimedItem]) -> dict[str, int]:
    """Totals per currency (minor units)."""
    out: dict[str, int] = {}
    for it in items:
        out[it.currency] = out.get(it.currency, 0) + it.amount
    return out
