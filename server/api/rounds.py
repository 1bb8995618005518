"""Rounds: the ones a player played, and a round's full recall, step by step."""

from __future__ import annotations

from litestar import Controller, get
from litestar.params import Parameter

from server import store
from server.auth import Principal
from server.policy import OVERSIGHT, RECALL, require_assigned, require_own_round, require_roles, require_self_or
from server.tables import TableService


class RoundsController(Controller):
    path = "/"
    tags = ["rounds"]

    @get("/rounds", operation_id="ListPlayedRounds", guards=[require_self_or(*OVERSIGHT)],
         summary="The rounds a player played, newest first")
    async def played(self, caller: Principal, table_service: TableService, user: str | None = None,
                     limit: int = Parameter(default=100, ge=1, le=1000)) -> list[store.RoundRef]:
        return await table_service.player_rounds(user or caller.id, limit)

    @get("/tables/{table_id:str}/rounds/{round_id:str}", operation_id="RecallRound",
         guards=[require_roles(*RECALL), require_assigned, require_own_round],
         summary="The full recall of a round, step by step (a player: the rounds he played)")
    async def recall(self, caller: Principal, table_id: str, round_id: str,
                     table_service: TableService) -> list[store.RoundStep]:
        return await table_service.recall(table_id, round_id, caller)
