"""HTTP: accounts and the cashier, tables, balances, a player's rounds and round recall.

Every refusal is a GameError, turned into problem details by ``server.problems``; every
admin, cashier and credit action is written to the audit log in the same transaction.
"""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, get, post, put
from litestar.params import Parameter

from games.errors import GameError
from games.ledger import accounts
from games.ledger.accounts import Kind
from games.money import currency as currency_of
from games.validation import Amount, NonNegative, Text
from server import audit, store
from server.auth import Principal
from server.policy import (
    CASHIER, CREATE_ACCOUNTS, CREDIT, DIRECTION, LIMITS, OPEN_TABLES, OVERSIGHT, ROLES, SEE_ANY_WALLET,
    require_assigned, require_roles, require_self_or,
)
from server.kinds import KINDS
from server.kinds.base import Authorisation, TableInfo
from server.protocol import Rejected


def _ctx(request: Request) -> Any:
    return request.app.state.ctx


# ---- auth ------------------------------------------------------------------------------


class Login(msgspec.Struct, forbid_unknown_fields=True):
    user: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    password: Annotated[str, msgspec.Meta(max_length=1024)]


class Register(msgspec.Struct):
    user: str
    password: str
    currency: str = "CHF"


class TokenOut(msgspec.Struct):
    token: str
    expires_at: str
    user: str
    role: str


def _token_for(request: Request, who: Principal) -> TokenOut:
    ctx = _ctx(request)
    minutes = ctx.settings.token_minutes
    token = ctx.jwt_auth.create_token(identifier=who.id, token_expiration=timedelta(minutes=minutes),
                                      token_extras={"role": who.role})
    expires = datetime.now(timezone.utc) + timedelta(minutes=minutes)
    return TokenOut(token, expires.isoformat(), who.id, who.role)


class AuthController(Controller):
    path = "/auth"
    tags = ["auth"]

    @post("/login", status_code=200, summary="Log in: a bearer token for HTTP and the websocket",
          description="Failed logins are throttled per user name and per client address: 429 "
                      "`too_many_attempts`, then `account_locked`, each with Retry-After (seconds).")
    async def login(self, request: Request, data: Login) -> TokenOut:
        address = request.client.host if request.client else ""
        who = await store.authenticate(_ctx(request).pool, data.user, data.password, address)
        return _token_for(request, who)

    @post("/register", status_code=201, summary="Open a player account (wallet in the given currency)")
    async def register(self, request: Request, data: Register) -> TokenOut:
        ctx = _ctx(request)
        currency_of(data.currency)
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():  # the user with the wallet, or neither (e.g. PTS: no wallet)
                who = await store.create_user(conn, data.user, data.password, "player", data.currency)
                await ctx.open_wallet(who, conn)
        return _token_for(request, who)


# ---- accounts and the cashier ----------------------------------------------------------


class NewAccount(msgspec.Struct, forbid_unknown_fields=True):
    user: str
    password: str
    role: str
    currency: str = "CHF"


class Me(msgspec.Struct):
    id: str
    role: str
    currency: str
    balance: Any = None


class CashierOp(msgspec.Struct, forbid_unknown_fields=True):
    user: str
    amount: Amount  # minor units (CHF 5.00 == 500)
    id: str = ""  # the receipt id: a retry with the same id is not paid twice
    currency: str = ""


class CreditOp(msgspec.Struct, forbid_unknown_fields=True):
    user: str
    limit: NonNegative
    id: str = ""
    currency: str = ""


async def _first_time(conn: Any, table: str, op_id: str) -> bool:
    """Whether ``op_id`` is new to ``table`` (else the ledger answers with the stored row and
    nothing may be written). A transaction lock on the id makes a concurrent try with the
    same id wait for this one, so exactly one of them writes the audit record."""
    assert table in ("ledger_receipts", "ledger_credit_grants")
    await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", f"{table}:{op_id}")
    return await conn.fetchval(f"SELECT id FROM {table} WHERE id = $1", op_id) is None


async def _player(ctx: Any, user: str) -> Principal:
    """A player's account: only players hold wallets (staff do not play, nor get credit)."""
    who = await ctx.user(user)
    if who.role != "player":
        raise GameError("not_a_player", f"{who.id} is a {who.role}: only players have a wallet.")
    return who


class AccountsController(Controller):
    path = "/"
    tags = ["accounts"]

    @get("/me", summary="Who I am and my balance")
    async def me(self, request: Request[Principal, Any, Any]) -> Me:
        who = request.user
        bal = None
        if who.role == "player":
            bal = await _ctx(request).ledger.balance(accounts.wallet(who.id, who.currency))
        return Me(who.id, who.role, who.currency, bal)

    @post("/accounts", guards=[require_roles(*CREATE_ACCOUNTS)], summary="Create an account of any role")
    async def create_account(self, request: Request[Principal, Any, Any], data: NewAccount) -> Me:
        ctx = _ctx(request)
        if data.role not in ROLES:
            raise GameError("unknown_role", f"Roles are: {', '.join(ROLES)}.")
        if data.role == "admin" and request.user.role != "admin":
            raise GameError("forbidden", "Only an admin creates admins.")
        currency_of(data.currency)
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():  # the user, his wallet and the audit record, or nothing
                who = await store.create_user(conn, data.user, data.password, data.role, data.currency)
                if who.role == "player":
                    await ctx.open_wallet(who, conn)
                await audit.record(conn, request.user, "account.create", who.id, {"role": who.role})
        return Me(who.id, who.role, who.currency)

    @get("/accounts", guards=[require_roles(*SEE_ANY_WALLET)], summary="All accounts")
    async def list_accounts(self, request: Request) -> list[Principal]:
        async with _ctx(request).pool.acquire() as conn:
            return await store.list_users(conn)

    @get("/accounts/{user:str}/balance", guards=[require_self_or(*SEE_ANY_WALLET)],
         summary="A wallet's balance (your own, or staff)")
    async def balance(self, request: Request[Principal, Any, Any], user: str) -> Any:
        ctx = _ctx(request)
        who = await ctx.user(user)
        return await ctx.ledger.balance(accounts.wallet(who.id, who.currency))

    @get("/accounts/{user:str}/statement", guards=[require_self_or(*SEE_ANY_WALLET)],
         summary="A wallet's history (your own, or staff)")
    async def statement(self, request: Request[Principal, Any, Any], user: str,
                        limit: int = Parameter(default=100, ge=1, le=1000)) -> Any:
        ctx = _ctx(request)
        who = await ctx.user(user)
        return await ctx.ledger.statement(accounts.wallet(who.id, who.currency), limit=limit)

    @post("/cashier/deposit", status_code=200, guards=[require_roles(*CASHIER)],
          summary="Chips bought at the cashier")
    async def deposit(self, request: Request[Principal, Any, Any], data: CashierOp) -> Any:
        return await self._cashier(request, data, "deposit")

    @post("/cashier/cash-out", status_code=200, guards=[require_roles(*CASHIER)],
          summary="Chips cashed out at the cashier")
    async def cash_out(self, request: Request[Principal, Any, Any], data: CashierOp) -> Any:
        return await self._cashier(request, data, "cash_out")

    async def _cashier(self, request: Request[Principal, Any, Any], data: CashierOp, what: str) -> Any:
        ctx = _ctx(request)
        who = await _player(ctx, data.user)
        cur = data.currency or who.currency
        op_id = data.id or f"{what}-{secrets.token_hex(8)}"
        if what == "deposit" and who.role == "player":
            await ctx.ledger.open_account(accounts.wallet(who.id, cur), cur, Kind.WALLET)
        fn = ctx.ledger.deposit if what == "deposit" else ctx.ledger.cash_out
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():  # the chips move only with their audit record
                first = await _first_time(conn, "ledger_receipts", op_id)
                receipt = await fn(who.id, cur, data.amount, op_id, conn=conn)
                if first:  # a replay gets its receipt again and writes nothing
                    await audit.record(conn, request.user, f"cashier.{what}", who.id,
                                       {"amount": data.amount, "currency": cur, "id": op_id})
        return receipt

    @post("/credit", status_code=200, guards=[require_roles(*CREDIT)],
          summary="Grant a credit line (Art. 16: inspector's approval)")
    async def credit(self, request: Request[Principal, Any, Any], data: CreditOp) -> Any:
        ctx = _ctx(request)
        who = await _player(ctx, data.user)
        cur = data.currency or who.currency
        op_id = data.id or f"credit-{secrets.token_hex(8)}"
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():  # the credit line only with its audit record
                first = await _first_time(conn, "ledger_credit_grants", op_id)
                grant = await ctx.ledger.grant_credit(accounts.wallet(who.id, cur), data.limit, request.user.id,
                                                      op_id, conn=conn)
                if first:  # a replay gets its grant again and writes nothing
                    await audit.record(conn, request.user, "credit.grant", who.id,
                                       {"limit": data.limit, "currency": cur, "id": op_id})
        return grant

    @get("/ledger/check", guards=[require_roles(*OVERSIGHT)],
         summary="Verify the ledger; a pending hold must be a wager some table still has in play")
    async def ledger_check(self, request: Request) -> Any:
        # Open rounds come from the view ledger_open_refs (migration 0103), as for `casino ledger check`.
        return await _ctx(request).ledger.check_report()

    @get("/audit", guards=[require_roles(*OVERSIGHT)], summary="The audit log, newest first")
    async def audit_log(self, request: Request, target: str | None = None,
                        limit: int = Parameter(default=200, ge=1, le=5000)) -> list[audit.AuditEntry]:
        return await audit.entries(_ctx(request).pool, target=target, limit=limit)


# ---- tables ----------------------------------------------------------------------------


class NewTable(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    profile: str
    mode: str = "rng"
    currency: str = ""  # "" = the house profile's currency
    name: Annotated[str, msgspec.Meta(max_length=100)] = ""
    id: str = ""
    settings: dict[str, Any] = {}


class TableOut(msgspec.Struct):
    id: str
    game: str
    profile: str
    mode: str
    currency: str
    name: str
    settings: dict[str, Any]
    staff: list[str]
    running: bool
    seq: int
    archived: bool = False
    authorisations: list[Authorisation] = []


class StaffOp(msgspec.Struct, forbid_unknown_fields=True):
    user: str


class ArchiveOp(msgspec.Struct, forbid_unknown_fields=True):
    reason: Text = ""


class AuthorisationOp(msgspec.Struct, forbid_unknown_fields=True):
    """A director's leave for a chef de table to suspend or close this table (Art. 15)."""

    chef: str
    action: Literal["suspend", "close"]
    reason: Text = ""
    minutes: Annotated[int, msgspec.Meta(ge=1, le=24 * 60)] = 60


class LimitsChange(msgspec.Struct, forbid_unknown_fields=True):
    """New limits from the next round: minimum and maximum (blackjack), minimum and
    maxima per combination kind (roulette: plein, cheval, ..., simple)."""

    minimum: Amount
    maximum: Amount | None = None
    maxima: dict[str, Amount] | None = None
    reason: Text = ""


_TABLE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,40}$")


def _table_out(ctx: Any, info: TableInfo) -> TableOut:
    rt = ctx.manager.runtimes.get(info.id)
    return TableOut(info.id, info.game, info.profile, info.mode, info.currency, info.name, info.settings,
                    info.staff, rt is not None and not rt.stopped, rt.seq if rt else 0, info.archived,
                    info.authorisations)


class TablesController(Controller):
    path = "/tables"
    tags = ["tables"]

    @get("/", summary="All open tables (archived ones too with archived=true)")
    async def list_tables(self, request: Request, archived: bool = False) -> list[TableOut]:
        ctx = _ctx(request)
        return [_table_out(ctx, i) for i in ctx.manager.infos.values() if archived or not i.archived]

    @get("/games", summary="Games and house profiles this server runs")
    async def games(self) -> dict[str, list[str]]:
        return {name: list(k.profiles) for name, k in KINDS.items()}

    @post("/", guards=[require_roles(*OPEN_TABLES)], summary="Open a table from a house profile")
    async def create(self, request: Request[Principal, Any, Any], data: NewTable) -> TableOut:
        ctx = _ctx(request)
        info = await ctx.create_table(request.user, data.game, data.profile, data.mode, data.currency,
                                      data.name, data.settings, data.id)
        return _table_out(ctx, info)

    @get("/{table_id:str}", summary="A table and what you may see of it")
    async def show(self, request: Request[Principal, Any, Any], table_id: str) -> dict[str, Any]:
        ctx = _ctx(request)
        rt = ctx.manager.runtime(table_id)
        seq, view = rt.snapshot_view(request.user)
        return {"table": _table_out(ctx, rt.info), "seq": seq, "view": view}

    @post("/{table_id:str}/staff", guards=[require_roles(*OPEN_TABLES)],
          summary="Assign a croupier or chef de table to this table")
    async def add_staff(self, request: Request[Principal, Any, Any], table_id: str, data: StaffOp) -> TableOut:
        ctx = _ctx(request)
        info = ctx.manager.info(table_id)
        who = await ctx.user(data.user)
        if who.role not in ("croupier", "chef"):
            raise GameError("not_staff", f"{who.id} is a {who.role}, not a croupier or chef de table.")
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():
                await store.assign_staff(conn, table_id, who.id)
                await audit.record(conn, request.user, "table.staff", table_id, {"user": who.id})
                await store.notify_table_changed(conn, table_id)  # the owner may be another process
        await ctx.manager.reload(table_id)
        return _table_out(ctx, info)

    @post("/{table_id:str}/authorisations", guards=[require_roles(*DIRECTION)],
          summary="A director lets a chef de table suspend or close this table (Art. 15)")
    async def authorise(self, request: Request[Principal, Any, Any], table_id: str,
                        data: AuthorisationOp) -> TableOut:
        ctx = _ctx(request)
        info = ctx.manager.info(table_id)
        chef = await ctx.user(data.chef)
        if chef.role != "chef" or chef.id not in info.staff:
            raise GameError("not_staff", f"{chef.id} is not a chef de table assigned to {table_id}.")
        async with ctx.pool.acquire() as conn:
            async with conn.transaction():
                grant = await store.grant_authorisation(conn, table_id, data.action, chef.id, request.user.id,
                                                        data.reason, data.minutes)
                await audit.record(conn, request.user, "table.authorise", table_id,
                                   {"chef": chef.id, "action": data.action, "reason": data.reason,
                                    "valid_until": grant.valid_until.isoformat()})
                await store.notify_table_changed(conn, table_id)
        await ctx.manager.reload(table_id)
        return _table_out(ctx, info)

    @post("/{table_id:str}/archive", guards=[require_roles(*DIRECTION)],
          summary="Close the table (every open bet returned) and archive it; its history stays")
    async def archive(self, request: Request[Principal, Any, Any], table_id: str, data: ArchiveOp) -> TableOut:
        ctx = _ctx(request)
        rt = ctx.manager.runtime(table_id)
        rt.sealed = True  # from now on only the closing command: nobody bets or reopens meanwhile
        try:
            command = rt.kind.close_command(rt.kind.load(rt.committed), request.user, data.reason or "table archived")
            if command is not None:
                answer = await rt.submit(request.user, f"http-close-{secrets.token_hex(8)}", command, closing=True)
                if isinstance(answer, Rejected):
                    raise GameError(answer.code, answer.message)
            if rt.kind.open_wagers(rt.kind.load(rt.committed)):
                raise GameError("wagers_in_play", "Bets are still in play at this table: close it between rounds.")
            async with ctx.pool.acquire() as conn:
                async with conn.transaction():
                    if not await store.archive_table(conn, table_id, request.user.id):
                        raise GameError("table_archived", f"Table {table_id!r} is already archived.")
                    await audit.record(conn, request.user, "table.archive", table_id, {"reason": data.reason})
                    await store.notify_table_changed(conn, table_id)
        except BaseException:
            rt.sealed = False  # not archived: the table plays on
            raise
        await ctx.manager.reload(table_id)
        return _table_out(ctx, ctx.manager.infos[table_id])

    @get("/{table_id:str}/limits", summary="Every version of the table's limits, from which round each applies")
    async def limits(self, request: Request, table_id: str) -> Any:
        ctx = _ctx(request)
        ctx.manager.known(table_id)
        return await ctx.limits.history(table_id)

    @put("/{table_id:str}/limits", guards=[require_roles(*LIMITS), require_assigned],
         summary="Change the limits from the next round (announced to everyone at the table)")
    async def change_limits(self, request: Request[Principal, Any, Any], table_id: str, data: LimitsChange) -> Any:
        ctx = _ctx(request)
        rt = ctx.manager.runtime(table_id)
        command = rt.kind.limits_command(rt.kind.load(rt.committed), request.user, data.minimum, data.maximum,
                                         data.maxima, data.reason)
        answer = await rt.submit(request.user, f"http-limits-{secrets.token_hex(8)}", command)
        if isinstance(answer, Rejected):
            raise GameError(answer.code, answer.message)
        return {"seq": answer.seq, "limits": await ctx.limits.current(table_id)}

    @get("/{table_id:str}/rounds/{round_id:str}",
         guards=[require_roles("player", "croupier", "chef", *OVERSIGHT), require_assigned],
         summary="The full recall of a round, step by step (a player: the rounds he played)")
    async def recall(self, request: Request[Principal, Any, Any], table_id: str, round_id: str) -> list[store.RoundStep]:
        ctx = _ctx(request)
        ctx.manager.known(table_id)  # an archived table's history stays
        who = request.user
        async with ctx.pool.acquire() as conn:
            if who.role == "player" and not await store.played_round(conn, who.id, table_id, round_id):
                raise GameError("forbidden", "You may recall only the rounds you played.")
            steps = await store.round_steps(conn, table_id, round_id)
        if not steps:
            raise GameError("unknown_round", f"No round {round_id!r} at table {table_id}.")
        return steps


class RoundsController(Controller):
    path = "/rounds"
    tags = ["rounds"]

    @get("/", guards=[require_self_or(*OVERSIGHT)], summary="The rounds a player played, newest first")
    async def mine(self, request: Request[Principal, Any, Any], user: str | None = None,
                   limit: int = Parameter(default=100, ge=1, le=1000)) -> list[store.RoundRef]:
        target = user or request.user.id
        async with _ctx(request).pool.acquire() as conn:
            return await store.player_rounds(conn, target, limit)


def table_id_for(given: str, game: str, profile: str, taken: set[str]) -> str:
    if given:
        if not _TABLE_ID.fullmatch(given):
            raise GameError("invalid_table_id", "A table id is 2-41 lowercase letters, digits or '-'.")
        return given
    n = 1
    while f"{profile}-{game}-{n}" in taken:
        n += 1
    return f"{profile}-{game}-{n}"


ROUTES = [AuthController, AccountsController, TablesController, RoundsController]
