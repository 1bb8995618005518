"""Tournament players for tests and the tournament benchmark: each follows its tournament's
channel to the table it is drawn to, and there bets every hand and answers every decision
through the same websocket protocol as any client (``server.client``).

A bot bets ``stake(bot, min_bet, max_bet)`` points every hand (the minimum by default;
Art. 27: a bet between the minimum and the maximum is mandatory, all in below the minimum),
stands on every hand, declines insurance, and follows the
tournament from phase to phase until it is out or the tournament ends. An ``absent`` bot
sits where it is drawn and never bets: the table charges it the minimum every hand.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from server.client import CasinoClient, Rejected

# What a bot bets this hand, given itself (its table, box, stack) and the limits; 0: it sits out.
Stake = Callable[["TournamentBot", int, int], int]


def minimum(bot: TournamentBot, min_bet: int, max_bet: int) -> int:
    return min(bot.stack, min_bet)


async def tournament_command(client: CasinoClient, tournament: str, command: dict[str, Any],
                             cid: str | None = None) -> dict[str, Any]:
    """A command for the tournament's coordinator over HTTP (``POST /tournaments/{id}/commands``)."""
    body: dict[str, Any] = {"command": command}
    if cid:
        body["cid"] = cid
    return await client.request("POST", f"/tournaments/{tournament}/commands", json=body)


class TournamentBot:
    def __init__(self, client: CasinoClient, tournament: str, *, absent: bool = False,
                 stake: Stake = minimum) -> None:
        self.client = client
        self.user = client.user
        self.tournament = tournament
        self.absent = absent
        self.stake = stake
        self.table = ""
        self.box = 0
        self.stack = 0
        self.out = ""  # why it stopped: "finished", "eliminated", "cancelled", "expelled"
        self.hands = 0
        self.refused: list[str] = []
        self.errors: list[str] = []
        self._sending: set[asyncio.Task] = set()
        self._done = asyncio.Event()

    # ---- following the tournament ------------------------------------------------------------
    async def run(self, timeout: float = 600) -> str:
        """Play until the bot is out or the tournament is over; why it stopped."""
        c = self.client
        if c.ws is None:
            await c.connect()
        await c.subscribe(self.tournament)
        snap = c.snapshots.get(self.tournament)
        if snap is not None:
            self._from_tournament_view(snap.get("view") or {})
        watcher = asyncio.create_task(self._watch())
        try:
            await asyncio.wait_for(self._done.wait(), timeout)
        finally:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher
        return self.out

    def _from_tournament_view(self, view: dict[str, Any]) -> None:
        if view.get("status") in ("finished", "cancelled"):
            self._stop(str(view["status"]))
            return
        for table in (view.get("phase") or {}).get("tables", []):
            for seat in table.get("seats", []):
                if seat["player"] == self.user and not seat["out"] and not table["done"]:
                    self.table, self.box = table["table"], seat["box"]

    def _stop(self, why: str) -> None:
        if not self.out:
            self.out = why
        self._done.set()

    async def _watch(self) -> None:
        c, joined = self.client, ""
        tq = c._queue(self.tournament)
        while not self._done.is_set():
            if self.table and self.table != joined:
                joined = self.table
                await self._join(joined)
            getters = [asyncio.ensure_future(tq.get())]
            if joined:
                getters.append(asyncio.ensure_future(c._queue(joined).get()))
            finished, pending = await asyncio.wait(getters, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
            for g in pending:
                g.cancel()
            for g in finished:
                msg = g.result()
                try:
                    if msg.get("table") == self.tournament:
                        self._on_tournament(msg)
                    else:
                        await self._on_table(msg)
                except Exception as exc:  # kept for the caller: a bot must not die silently
                    self.errors.append(f"{type(exc).__name__}: {exc}")

    def _on_tournament(self, msg: dict[str, Any]) -> None:
        if msg.get("type") == "snapshot":
            self._from_tournament_view(msg.get("view") or {})
            return
        ev = msg.get("event") or {}
        kind = ev.get("type")
        if kind == "phase_started":
            for table in ev["tables"]:
                if self.user in table["seats"]:
                    self.table, self.box = table["table"], table["seats"][self.user]
        elif kind in ("finished", "cancelled"):
            self._stop(kind)
        elif kind == "expelled" and ev.get("player") == self.user:
            self._stop("expelled")

    async def _join(self, table: str) -> None:
        """Follow the table drawn for it (the tournament opens it just after the draw: until
        then it is ``unknown_table``, or not yet served)."""
        for _ in range(100):
            try:
                await self.client.subscribe(table)
                return
            except Rejected as exc:
                if exc.code not in ("unknown_table", "table_unavailable"):
                    return  # e.g. archived: its phase is already over
                await asyncio.sleep(0.1)

    # ---- at the table ------------------------------------------------------------------------
    async def _on_table(self, msg: dict[str, Any]) -> None:
        if msg.get("type") == "snapshot":
            await self._from_table_view(msg.get("view") or {})
            return
        ev = msg.get("event") or {}
        kind = ev.get("type")
        if kind == "tournament_seated" and self.user in ev["stacks"]:
            self.stack = ev["stacks"][self.user]
        elif kind == "hand_standings":
            self.stack = ev["stacks"].get(self.user, 0)
        elif kind == "round_opened":
            await self._bet(ev["min_bet"], ev["max_bet"])
        elif kind == "turn" and ev.get("player") == self.user:
            await self._decide(ev["box"], ev["hand"])
        elif kind == "offers_opened" and f"{self.user}@{self.box}" in ev.get("waiting", []):
            await self._play({"type": "decline_offer", "box": self.box})
        elif kind == "player_eliminated" and ev["player"] == self.user:
            self._stop("eliminated")
        elif kind == "tournament_paused" and not ev["paused"]:  # resumed: bet in the window still open
            await self._from_table_view((await self.client.request("GET", f"/tables/{self.table}"))["view"])

    async def _from_table_view(self, view: dict[str, Any]) -> None:
        t = view.get("tournament") or {}
        self.stack = (t.get("stacks") or {}).get(self.user, self.stack)
        if view.get("phase") == "betting" and not any(b.get("player") == self.user for b in view.get("bets", [])):
            await self._bet(view["min_bet"], view["max_bet"])
        turn = view.get("turn") or []
        if view.get("phase") == "play" and turn and turn[0] == self.box:
            await self._decide(turn[0], turn[1])

    async def _bet(self, min_bet: int, max_bet: int) -> None:
        if self.absent or self.stack <= 0:
            return
        self.hands += 1
        amount = min(self.stake(self, min_bet, max_bet), self.stack)
        if amount <= 0:
            return
        await self._play({"type": "place_bet", "box": self.box, "amount": amount})

    async def _decide(self, box: int, hand: int) -> None:
        await self._play({"type": "stand", "box": box, "hand": hand})

    async def _play(self, command: dict[str, Any]) -> None:
        """Send it and go on following the table (the answer is awaited apart, as a client
        does: a slow answer never holds up the events)."""
        task = asyncio.create_task(self._send(command))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, command: dict[str, Any]) -> None:
        try:
            await self.client.play(self.table, command)
        except Rejected as exc:  # late (the window closed), or the hand moved on: the table decides
            self.refused.append(str(exc.answer.get("code", "")))
        except TimeoutError:
            self.errors.append(f"{command['type']} at {self.table}: no answer")
