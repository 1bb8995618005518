"""What rides along with a table: its companions (a linked jackpot pool, a tournament).

The runtime knows companions through this one typed hook, never by name: the game kind
lists a table's (``GameKind.companions``), and the runtime calls each

* ``start()`` when the table starts here: commands the table takes first (a pool's meters);
* ``forward(conn, events)`` inside the batch's commit transaction, before the ledger ops:
  their own writes (a pool's state and money, accounts to open), and events that join the
  table's stream (the pool's); a failure rolls the whole batch back;
* ``committed(events)`` after the commit, with every event of the batch: news for others
  (the pool's meters to linked tables, a tournament's orders and reports);
* ``stop()`` when the table stops here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from games.ledger.accounts import Kind

if TYPE_CHECKING:
    from server.runtime import TableRuntime


class Companion:
    """Does nothing; subclasses override what they need."""

    def __init__(self, runtime: TableRuntime) -> None:
        self.runtime = runtime

    async def start(self) -> list[Any]:
        return []

    async def forward(self, conn: Any, events: list[Any]) -> list[Any]:
        return []

    def committed(self, events: list[Any]) -> None:
        return None

    async def stop(self) -> None:
        return None


async def open_accounts(runtime: TableRuntime, conn: Any, wanted: list[tuple[str, Kind]]) -> None:
    """Open (idempotently) the accounts a batch is about to move money through."""
    for account, kind in dict.fromkeys(wanted):
        await runtime.ctx.ledger.open_account(account, None, kind, conn=conn)
