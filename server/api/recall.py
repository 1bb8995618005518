"""Game recall (issue 17): a player's last rounds step by step with his balances, and a
dispute's replay of a round through a fresh engine (``server.recall``)."""

from __future__ import annotations

from litestar import Controller, get
from litestar.di import Provide
from litestar.params import Parameter

from server.policy import OVERSIGHT, require_roles, require_self_or
from server.recall import MAX_RECALL, RecalledRound, RecallService, ReplayReport
from server.resources import Resources


def provide_recall_service(resources: Resources) -> RecallService:
    return RecallService(resources.pool, resources.ledger, resources.manager)


class RecallController(Controller):
    path = "/"
    tags = ["rounds"]
    dependencies = {"recall_service": Provide(provide_recall_service, sync_to_thread=False)}

    @get("/players/{user:str}/recall", operation_id="RecallPlayerRounds", guards=[require_self_or(*OVERSIGHT)],
         summary="A player's last rounds, step by step, with his balance before and after each")
    async def player_recall(self, user: str, recall_service: RecallService,
                            table: str | None = Parameter(default=None, max_length=41),
                            limit: int = Parameter(default=10, ge=1, le=MAX_RECALL)) -> list[RecalledRound]:
        return await recall_service.player_recall(user, table, limit)

    @get("/tables/{table_id:str}/rounds/{round_id:str}/replay", operation_id="ReplayRound",
         guards=[require_roles(*OVERSIGHT)],
         summary="A dispute: a round run again through a fresh engine from its kept snapshot",
         description="Every command from the snapshot kept before the round through its last event is "
                     "applied again as its actor gave it and each event compared with the stored one. At an "
                     "RNG blackjack table, once the shoe is revealed, the round's cards are also checked "
                     "against the revealed order. `not_replayable`: a round played before commands were "
                     "kept, or a command missing from the log.")
    async def replay(self, table_id: str, round_id: str, recall_service: RecallService) -> ReplayReport:
        return await recall_service.replay(table_id, round_id)
