"""Tables as the floor manages them: opening one from a house profile, assigning staff,
a director's authorisations, archiving, limits and a round's recall.

Every change is written with its audit record in one transaction and announced on
``casino_table_changed``, because the table's owner may be another process.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

import asyncpg
import msgspec

from blackjack.tournament.seating import tournament_of_table
from games.errors import GameError
from games.ledger.store import Ledger
from games.money import currency as currency_of
from server import crowd, store
from server.accounts import find_user
from server.auth import Principal
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.manager import TableManager
from server.protocol import Rejected, encoder
from server.resources import Resources
from server.runtime import TableRuntime
from server.store import audit
from server.store.limits import LimitsStore, LimitsVersion


class LimitsCall(msgspec.Struct, array_like=True):
    """``change_limits`` as another process asks the table's owner to run it."""

    minimum: int
    maximum: int | None
    maxima: dict[str, int] | None
    reason: str


def serve_calls(resources: Resources) -> None:
    """What another process's ``TableService`` asks of the tables this process serves."""
    router = resources.manager.router

    async def limits(by: Principal, table_id: str, body: bytes) -> bytes:
        c = msgspec.json.decode(body, type=LimitsCall)
        seq, _ = await TableService.of(resources).change_limits(by, table_id, c.minimum, c.maximum, c.maxima,
                                                                c.reason)
        return encoder.encode(seq)

    async def archive(by: Principal, table_id: str, body: bytes) -> bytes:
        await TableService.of(resources).archive(by, table_id, msgspec.json.decode(body, type=str))
        return b"null"

    router.services.update(limits=limits, archive=archive)


_TABLE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,40}$")
def reserved_by(table_id: str, infos: dict[str, TableInfo]) -> str:
    """The tournament that keeps ``table_id`` for its phase tables, if any."""
    owner = tournament_of_table(table_id)
    info = infos.get(owner)
    return owner if info is not None and info.game == "tournament" else ""


def table_id_for(given: str, game: str, profile: str, taken: set[str]) -> str:
    """The id asked for, checked; else the next free ``<profile>-<game>-<n>``."""
    if given:
        if not _TABLE_ID.fullmatch(given):
            raise GameError("invalid_table_id", "A table id is 2-41 lowercase letters, digits or '-'.")
        return given
    n = 1
    while f"{profile}-{game}-{n}" in taken:
        n += 1
    return f"{profile}-{game}-{n}"


async def _submitted(rt: TableRuntime, by: Principal, cid: str, command: Any, *, closing: bool = False) -> int:
    """Run a console command at the table as the caller; its refusal as a GameError."""
    answer = await rt.submit(by, cid, command, closing=closing)
    if isinstance(answer, Rejected):
        raise GameError(answer.code, answer.message)
    return answer.seq


class TableService:
    def __init__(self, pool: asyncpg.Pool, ledger: Ledger, limits: LimitsStore, manager: TableManager) -> None:
        self.pool = pool
        self.ledger = ledger
        self.limits = limits
        self.manager = manager

    @classmethod
    def of(cls, resources: Resources) -> TableService:
        return cls(resources.pool, resources.ledger, resources.limits, resources.manager)

    def listed(self, archived: bool) -> list[TableInfo]:
        """The floor's tables (tournaments are listed apart: ``/tournaments``)."""
        return [i for i in self.manager.infos.values()
                if (archived or not i.archived) and i.game != "tournament"]

    async def create(self, by: Principal, game: str, profile: str, mode: str, currency: str,
                     name: str = "", settings: dict[str, Any] | None = None, table_id: str = "") -> TableInfo:
        kind = game_kind(game)
        if profile not in kind.profiles:
            raise GameError("unknown_profile", f"{game} profiles: {', '.join(kind.profiles)}.")
        if mode not in ("rng", "live"):
            raise GameError("unknown_mode", "A table is 'rng' (the server draws) or 'live' (a croupier runs it).")
        currency = currency or kind.default_currency(profile)
        currency_of(currency)
        tid = table_id_for(table_id, game, profile, set(self.manager.infos))
        owner = reserved_by(tid, self.manager.infos)
        if owner and (settings or {}).get("tournament") != owner:
            raise GameError("table_exists", f"{tid!r} is a name tournament {owner!r} keeps for its own tables.")
        info = TableInfo(tid, game, profile, mode, currency, name or tid, settings or {}, [])
        unknown = sorted(set(info.settings) - set(kind.settings_keys))
        if unknown:
            raise GameError("invalid_settings", f"A {game} table's settings are {', '.join(kind.settings_keys)}; "
                                                f"not {', '.join(unknown)}.")
        kind.new_engine(info)  # refuse bad settings before anything is written
        async with self.pool.acquire() as conn:
            async with conn.transaction():  # the table and its accounts, or nothing
                await store.insert_table(conn, info, by.id)
                for account, account_kind in kind.accounts(info).to_open():
                    await self.ledger.open_account(account, None, account_kind, conn=conn)
                await audit.record(conn, by, "table.create", tid,
                                   {"game": game, "profile": profile, "mode": mode, "currency": currency})
                await store.notify_table_changed(conn, tid)  # every process knows it at once
        await self.manager.add(info)
        return info

    async def view(self, who: Principal, table_id: str) -> tuple[TableInfo, int, Any]:
        """The table, the seq of its last committed event and what ``who`` may see of it
        (from its owner, in this process or another)."""
        info = self.manager.info(table_id)
        self.manager.router.reachable(table_id)
        seq, view = await self.manager.router.view(table_id, who)
        return info, seq, view

    async def staff_member(self, user: str) -> Principal:
        """``user``, if he may work a table: a croupier or a chef de table."""
        who = await find_user(self.pool, user)
        if who.role not in ("croupier", "chef"):
            raise GameError("not_staff", f"{who.id} is a {who.role}, not a croupier or chef de table.")
        return who

    async def assign_staff(self, by: Principal, table_id: str, user: str) -> TableInfo:
        info = self.manager.info(table_id)
        who = await self.staff_member(user)
        async with self.pool.acquire() as conn:
            async with conn.transaction():
                await store.assign_staff(conn, table_id, who.id)
                await audit.record(conn, by, "table.staff", table_id, {"user": who.id})
                await store.notify_table_changed(conn, table_id)
        await self.manager.reload(table_id)
        return info

    async def authorise(self, by: Principal, table_id: str, chef_id: str, action: str, reason: str,
                        minutes: int) -> TableInfo:
        """A director's leave for a chef de table to suspend or close this table (Art. 15)."""
        info = self.manager.info(table_id)
        chef = await find_user(self.pool, chef_id)
        if chef.role != "chef" or chef.id not in info.staff:
            raise GameError("not_staff", f"{chef.id} is not a chef de table assigned to {table_id}.")
        async with self.pool.acquire() as conn:
            async with conn.transaction():
                grant = await store.grant_authorisation(conn, table_id, action, chef.id, by.id, reason, minutes)
                await audit.record(conn, by, "table.authorise", table_id,
                                   {"chef": chef.id, "action": action, "reason": reason,
                                    "valid_until": grant.valid_until.isoformat()})
                await store.notify_table_changed(conn, table_id)
        await self.manager.reload(table_id)
        return info

    def _elsewhere(self, table_id: str) -> bool:
        """Whether the table's runtime is another process's (the call goes there)."""
        self.manager.info(table_id)
        return self.manager.router.shared and self.manager.router.owner(table_id) != self.manager.ctx.settings.owner_id

    async def archive(self, by: Principal, table_id: str, reason: str) -> TableInfo:
        """Close the table for good (every open bet returned) and archive it; its history stays."""
        if self._elsewhere(table_id):
            await self.manager.router.service("archive", table_id, by, encoder.encode(reason))
            await self.manager.reload(table_id)
            return self.manager.infos[table_id]
        rt = self.manager.runtime(table_id)
        rt.sealed = True  # from now on only the closing command: nobody bets or reopens meanwhile
        try:
            command = rt.kind.close_command(rt.committed_engine, by, reason or "table archived")
            if command is not None:
                await _submitted(rt, by, f"http-close-{secrets.token_hex(8)}", command, closing=True)
            if rt.kind.open_wagers(rt.committed_engine):
                raise GameError("wagers_in_play", "Bets are still in play at this table: close it between rounds.")
            async with self.pool.acquire() as conn:
                async with conn.transaction():
                    if not await store.archive_table(conn, table_id, by.id):
                        raise GameError("table_archived", f"Table {table_id!r} is already archived.")
                    await audit.record(conn, by, "table.archive", table_id, {"reason": reason})
                    await store.notify_table_changed(conn, table_id)
        except BaseException:
            rt.sealed = False  # not archived: the table plays on
            raise
        await self.manager.reload(table_id)
        return self.manager.infos[table_id]

    async def limits_history(self, table_id: str) -> list[LimitsVersion]:
        self.manager.known(table_id)  # an archived table's limits stay readable
        return await self.limits.history(table_id)

    async def change_limits(self, by: Principal, table_id: str, minimum: int, maximum: int | None,
                            maxima: dict[str, int] | None, reason: str) -> tuple[int, LimitsVersion | None]:
        """New limits from the next round, announced at the table: the seq of the announcement
        and the limits now in force."""
        if self._elsewhere(table_id):
            change = LimitsCall(minimum, maximum, maxima, reason)
            seq = int(await self.manager.router.service("limits", table_id, by, encoder.encode(change)))
            return seq, await self.limits.current(table_id)
        rt = self.manager.runtime(table_id)
        command = rt.kind.limits_command(rt.committed_engine, by, minimum, maximum, maxima, reason)
        seq = await _submitted(rt, by, f"http-limits-{secrets.token_hex(8)}", command)
        return seq, await self.limits.current(table_id)

    async def recall(self, table_id: str, round_id: str, caller: Principal | None = None) -> list[store.RoundStep]:
        """A round, step by step (who may recall which round: ``server.policy``); a player at a
        crowd table gets his share of it, as his stream had it (``server.crowd``)."""
        info = self.manager.known(table_id)  # an archived table's history stays
        async with self.pool.acquire() as conn:
            steps = await store.round_steps(conn, table_id, round_id)
        if not steps:
            raise GameError("unknown_round", f"No round {round_id!r} at table {table_id}.")
        if caller is not None and crowd.filtered_for(info, caller):
            shown = ((s, crowd.his_event(s.event, caller.id)) for s in steps)
            steps = [msgspec.structs.replace(s, event=e) for s, e in shown if e is not None]
        return steps

    async def player_rounds(self, user_id: str, limit: int) -> list[store.RoundRef]:
        async with self.pool.acquire() as conn:
            return await store.player_rounds(conn, user_id, limit)
