"""``/tables``: the floor's tables, opening one, its staff, a director's authorisations,
archiving, and its limits."""

from __future__ import annotations

from litestar import Controller, get, post, put

from server.api.schemas import (
    Archiving,
    ChefAuthorisation,
    LimitsChange,
    LimitsChanged,
    NewTable,
    StaffAssignment,
    TableDetail,
    TableSummary,
)
from server.auth import Principal
from server.kinds import KINDS
from server.kinds.base import TableInfo
from server.manager import TableManager
from server.policy import DIRECTION, LIMITS, OPEN_TABLES, require_assigned, require_roles
from server.store.limits import LimitsVersion
from server.tables import TableService


def summary(manager: TableManager, info: TableInfo) -> TableSummary:
    """The table, and whether it runs in this process (at which seq)."""
    rt = manager.runtimes.get(info.id)
    return TableSummary(info.id, info.game, info.profile, info.mode, info.currency, info.name, info.settings,
                        info.staff, rt is not None and not rt.stopped, rt.seq if rt else 0, info.archived,
                        info.authorisations, manager.router.owner(info.id) or "", manager.ws_url(info.id))


class TablesController(Controller):
    path = "/tables"
    tags = ["tables"]

    @get("/", operation_id="ListTables", summary="All open tables (archived ones too with archived=true)")
    async def list_tables(self, table_service: TableService, manager: TableManager,
                          archived: bool = False) -> list[TableSummary]:
        return [summary(manager, info) for info in table_service.listed(archived)]

    @get("/games", operation_id="ListGames", summary="Games and house profiles this server runs")
    async def games(self) -> dict[str, list[str]]:
        return {name: list(k.profiles) for name, k in KINDS.items()}

    @post("/", operation_id="CreateTable", guards=[require_roles(*OPEN_TABLES)],
          summary="Open a table from a house profile")
    async def create(self, caller: Principal, data: NewTable, table_service: TableService,
                     manager: TableManager) -> TableSummary:
        info = await table_service.create(caller, data.game, data.profile, data.mode, data.currency, data.name,
                                          data.settings, data.id)
        return summary(manager, info)

    @get("/{table_id:str}", operation_id="GetTable", summary="A table and what you may see of it")
    async def show(self, caller: Principal, table_id: str, table_service: TableService,
                   manager: TableManager) -> TableDetail:
        info, seq, view = await table_service.view(caller, table_id)
        return TableDetail(summary(manager, info), seq, view)

    @post("/{table_id:str}/staff", operation_id="AssignStaff", guards=[require_roles(*OPEN_TABLES)],
          summary="Assign a croupier or chef de table to this table")
    async def add_staff(self, caller: Principal, table_id: str, data: StaffAssignment,
                        table_service: TableService, manager: TableManager) -> TableSummary:
        return summary(manager, await table_service.assign_staff(caller, table_id, data.user))

    @post("/{table_id:str}/authorisations", operation_id="AuthoriseChef", guards=[require_roles(*DIRECTION)],
          summary="A director lets a chef de table suspend or close this table (Art. 15)")
    async def authorise(self, caller: Principal, table_id: str, data: ChefAuthorisation,
                        table_service: TableService, manager: TableManager) -> TableSummary:
        info = await table_service.authorise(caller, table_id, data.chef, data.action, data.reason, data.minutes)
        return summary(manager, info)

    @post("/{table_id:str}/archive", operation_id="ArchiveTable", guards=[require_roles(*DIRECTION)],
          summary="Close the table (every open bet returned) and archive it; its history stays")
    async def archive(self, caller: Principal, table_id: str, data: Archiving, table_service: TableService,
                      manager: TableManager) -> TableSummary:
        return summary(manager, await table_service.archive(caller, table_id, data.reason))

    @get("/{table_id:str}/limits", operation_id="ListLimits",
         summary="Every version of the table's limits, from which round each applies")
    async def limits(self, table_id: str, table_service: TableService) -> list[LimitsVersion]:
        return await table_service.limits_history(table_id)

    @put("/{table_id:str}/limits", operation_id="ChangeLimits", guards=[require_roles(*LIMITS), require_assigned],
         summary="Change the limits from the next round (announced to everyone at the table)")
    async def change_limits(self, caller: Principal, table_id: str, data: LimitsChange,
                            table_service: TableService) -> LimitsChanged:
        seq, limits = await table_service.change_limits(caller, table_id, data.minimum, data.maximum, data.maxima,
                                                        data.reason)
        return LimitsChanged(seq, limits)
