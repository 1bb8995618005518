"""``/unclaimed``: the tables' register of unclaimed chips and wins (roulette Art. 19,
blackjack Campione Art. 37; ``server.unclaimed``): listed for the cashier and oversight,
claimed by the cashier for the player who left them, countersigned by an inspector (the
Controllore comunale) before what nobody claims may go to the table's float."""

from __future__ import annotations

from typing import Annotated

import asyncpg
import msgspec
from litestar import Controller, get, post
from litestar.params import Parameter

from games.ledger.store import Ledger
from server import unclaimed
from server.auth import Principal
from server.policy import CASHIER, COUNTERSIGN, UNCLAIMED_REGISTER, require_roles


class UnclaimedClaim(msgspec.Struct, forbid_unknown_fields=True):
    """The cashier pays an unclaimed item to the player who left it (named as the register
    names him: ``floor:<label>`` for a floor player, paid in cash; an online player's id,
    paid to his wallet)."""

    player: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class UnclaimedController(Controller):
    path = "/"
    tags = ["cashier"]

    @get("/unclaimed", operation_id="ListUnclaimed", guards=[require_roles(*UNCLAIMED_REGISTER)],
         summary="The unclaimed register (Art. 19): chips and wins left at the tables, open, claimed or expired")
    async def list_items(self, pool: asyncpg.Pool,
                         status: str | None = Parameter(default=None, pattern="^(open|claimed|expired)$",
                                                        description="open, claimed or expired"),
                         table: str | None = Parameter(default=None, description="one table's register")
                         ) -> list[unclaimed.UnclaimedItem]:
        return await unclaimed.register(pool, status=status, table=table)

    @post("/unclaimed/{item_id:str}/claim", operation_id="ClaimUnclaimed", status_code=200,
          guards=[require_roles(*CASHIER)],
          summary="Pay an unclaimed item to its player at the cashier (once: a second claim is already_claimed)")
    async def claim(self, caller: Principal, item_id: str, data: UnclaimedClaim, pool: asyncpg.Pool,
                    ledger: Ledger) -> unclaimed.UnclaimedItem:
        return await unclaimed.claim(pool, ledger, caller, item_id, data.player)

    @post("/unclaimed/{item_id:str}/countersign", operation_id="CountersignUnclaimed", status_code=200,
          guards=[require_roles(*COUNTERSIGN)],
          summary="The Controllore comunale's countersignature on an open item (Art. 19): needed before it "
                  "may go to the table's float; once (the same inspector again: unchanged; another: "
                  "already_countersigned), never by whoever recorded it (own_unclaimed)")
    async def countersign(self, caller: Principal, item_id: str, pool: asyncpg.Pool) -> unclaimed.UnclaimedItem:
        return await unclaimed.countersign(pool, caller, item_id)
