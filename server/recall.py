"""Game recall (issue 17): a player's last rounds, step by step, with his balance before and
after each from the ledger's statement; and a dispute's replay of any round through a fresh
engine, with an RNG blackjack round's cards checked against the shoe the server revealed.

What ties a round to the ledger (``server.money``): every wager movement of a table carries
the ref ``<table>/<wager>`` (the hold, and its post or void, and a win or a refund), and a
jackpot paid on a wager has the ref ``<wager>`` and the id ``.../paid/<table>/<wager>``. The
wagers a player had in a round are his ``wager_placed`` events in it, so his movements of
the round are exactly those lines of his account's statement.

The replay (``replay``) loads the snapshot kept before the round's first event (the state a
round opens with is kept, ``server/migrations/0112_kept_command_log.sql``), runs every command
logged after it through the round's last event again, as its actor gave it (an RNG shoe's
order and a fair spin's seed are in the commands), and compares each event with the stored
one (``server.replay.rerun``). At an RNG blackjack table, once the shoe is over, the round's
cards are also checked against ``shoe_revealed`` (its commitment, then the cut and the burned
cards): the engine's shoe is the one committed to before the first bet. The report names
counts, seqs and event kinds only: nothing of a shoe not yet revealed.
"""

from __future__ import annotations

import re
from typing import Any

import asyncpg
import msgspec

from games.errors import GameError
from games.ledger.model import StatementLine
from games.ledger.store import Ledger
from games.shoe import commitment as shoe_commitment
from games.shoe import cut as cut_shoe
from server import crowd, store
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.manager import TableManager
from server.replay import Mismatch, rerun

MAX_RECALL = 100
_DRAWN = ("card_dealt", "hole_card_dealt", "card_burned", "card_exposed")  # a card taken from the shoe
_BOX = re.compile(r"^box (\d+)\b")


class RecalledRound(msgspec.Struct):
    """One round a player played: his steps in it and his balance around it."""

    table: str
    game: str
    round: str
    at: str  # when he first took part
    account: str  # whose balance (his wallet; at a tournament table, his points)
    currency: str
    steps: list[store.RoundStep]  # the stored events that concern him or the table's outcome
    movements: list[StatementLine]  # his account's statement lines of the round, oldest first
    # His posted balance just before his first movement of the round and after his last, and
    # what was reserved (bets held) at those points; all 0 when the round moved nothing of his.
    balance_before: int
    balance_after: int
    pending_before: int
    pending_after: int


class Difference(msgspec.Struct):
    index: int  # the round's n-th card (0 = its first)
    seq: int  # the table event that dealt it
    dealt: int  # -1: a hole card the round never showed
    expected: int  # -1: the revealed shoe holds no card there


class CardCheck(msgspec.Struct):
    """An RNG blackjack round's cards against the revealed shoe (``server.recall``'s docstring)."""

    commitment: str  # published at the shuffle
    commitment_ok: bool  # sha256(salt ‖ order) of the reveal is that commitment
    cut_at: int
    burned: int  # cards burned after the cut
    first_position: int  # where in the cut shoe the round's first card lies
    dealt: list[int]  # the round's cards in seq order (-1: a hole card never shown)
    expected: list[int]  # the revealed order's cards at those positions (-1: none left)
    matches: bool
    first_difference: Difference | None


class ServerEvent(msgspec.Struct):
    """An event of the replayed stretch that no command produced (the server's own)."""

    seq: int
    kind: str


class EngineReplay(msgspec.Struct):
    """The round run again through a fresh engine from the kept snapshot before it."""

    from_seq: int  # the snapshot was taken after this event
    through_seq: int  # the round's last event
    commands: int  # commands run again, from the snapshot through the round
    events: int  # events they gave, each equal to the stored one (kind, round and JSON)
    server_events: list[ServerEvent]  # table_interrupted / table_resumed, a jackpot pool's
    matches: bool
    first_difference: Mismatch | None


class ReplayReport(msgspec.Struct):
    """A dispute's replay of one round (``server.recall``'s docstring)."""

    table: str
    round: str
    game: str
    mode: str
    engine: EngineReplay
    # At an RNG blackjack table once its shoe is revealed; else None, and ``cards_note`` says
    # why: live_table (the croupier's cards), no_shoe (not blackjack), no_cards (none dealt:
    # still taking bets, a tournament hand of absent players), shoe_not_revealed, shoe_replaced
    # (a new shoe mid-round), shoe_unrecorded (its shuffle or cut missing: ``matches`` false).
    cards: CardCheck | None
    cards_note: str
    matches: bool  # the engine's run, and the cards where checked


def concerns(event: Any, player: str, boxes: set[int]) -> bool:
    """Whether a stored event concerns ``player`` (his wagers, his boxes, his decisions) or
    the table's outcome (the dealer, the number, the round's start and end)."""
    if not isinstance(event, dict):
        return True
    if "player" in event:
        return event["player"] == player
    if "players" in event and isinstance(event["players"], list):
        return player in event["players"]
    if "box" in event:
        return event["box"] == 0 or event["box"] in boxes
    return True


def his_boxes(steps: list[store.RoundStep], player: str) -> set[int]:
    boxes: set[int] = set()
    for s in steps:
        ev = s.event
        if s.kind == "wager_placed" and ev.get("player") == player:
            m = _BOX.match(ev.get("spot", ""))
            if m:
                boxes.add(int(m.group(1)))
        elif s.kind == "bets_closed":
            boxes |= {b for b, h in zip(ev.get("order", []), ev.get("holders", []), strict=False) if h == player}
        elif s.kind == "seat_taken" and ev.get("player") == player:
            boxes.add(ev["box"])
    return boxes


async def _movements(conn: asyncpg.Connection, ledger: Ledger, account: str, table: str,
                     wagers: list[str]) -> list[StatementLine]:
    """The statement lines of ``account`` that move ``wagers`` of ``table``."""
    if not wagers:
        return []
    refs = [f"{table}/{w}" for w in wagers]
    seqs = [r["seq"] for r in await conn.fetch(
        """SELECT seq FROM ledger_transfers WHERE (debit = $1 OR credit = $1)
           AND (ref = ANY($2::text[]) OR (code = 'jackpot_win' AND ref = ANY($3::text[])
                AND strpos(id, '/paid/' || $4 || '/') > 0))
           ORDER BY seq""", account, refs, wagers, table)]
    if not seqs:
        return []
    between = await conn.fetchval(
        "SELECT count(*) FROM ledger_transfers WHERE (debit = $1 OR credit = $1) AND seq BETWEEN $2 AND $3",
        account, seqs[0], seqs[-1])
    lines = await ledger.statement(account, limit=int(between), before=seqs[-1] + 1, conn=conn)
    wanted = set(seqs)
    # (the ledger's sums may come back as Decimal: amounts are whole minor units)
    return [msgspec.structs.replace(line, change=int(line.change), pending_change=int(line.pending_change),
                                    balance=int(line.balance), pending=int(line.pending))
            for line in lines if line.seq in wanted]


class RecallService:
    def __init__(self, pool: asyncpg.Pool, ledger: Ledger, manager: TableManager) -> None:
        self.pool = pool
        self.ledger = ledger
        self.manager = manager

    async def player_recall(self, player: str, table: str | None, limit: int) -> list[RecalledRound]:
        """The player's last ``limit`` rounds (at ``table``, or any), newest first."""
        if table:
            self.manager.known(table)
        async with self.pool.acquire() as conn:
            if not await conn.fetchval("SELECT 1 FROM users WHERE id = $1", player):
                raise GameError("unknown_user", f"No user {player!r}.")
            rows = await conn.fetch(
                """SELECT table_id, round, first_at FROM round_players
                   WHERE user_id = $1 AND ($2::text IS NULL OR table_id = $2)
                   ORDER BY first_at DESC LIMIT $3""", player, table or None, limit)
            out = []
            for r in rows:
                out.append(await self._round(conn, player, r["table_id"], r["round"], r["first_at"].isoformat()))
        return out

    async def _round(self, conn: asyncpg.Connection, player: str, table_id: str, round_id: str,
                     at: str) -> RecalledRound:
        info = self.manager.known(table_id)
        account = game_kind(info.game).accounts(info).of(player)
        steps = await store.round_steps(conn, table_id, round_id)
        boxes = his_boxes(steps, player)
        mine = [s for s in steps if concerns(s.event, player, boxes)]
        if crowd.is_crowd(info):  # a spin's result lists his entries only, as his stream had it
            mine = [msgspec.structs.replace(s, event=crowd.his_event(s.event, player)) for s in mine]
        wagers = list(dict.fromkeys(s.event["wager"] for s in steps
                                    if s.kind == "wager_placed" and s.event.get("player") == player))
        lines = await _movements(conn, self.ledger, account, table_id, wagers)
        before = after = p_before = p_after = 0
        if lines:
            before, p_before = lines[0].balance - lines[0].change, lines[0].pending - lines[0].pending_change
            after, p_after = lines[-1].balance, lines[-1].pending
        return RecalledRound(table_id, info.game, round_id, at, account, info.currency, mine, lines,
                             before, after, p_before, p_after)

    async def replay(self, table_id: str, round_id: str) -> ReplayReport:
        info = self.manager.known(table_id)
        async with self.pool.acquire() as conn:
            steps = await store.round_steps(conn, table_id, round_id)
            if not steps:
                raise GameError("unknown_round", f"No round {round_id!r} at table {table_id}.")
            engine = await rerun_stretch(conn, info, steps[0].seq, steps[-1].seq)
            cards, note = None, "no_shoe"
            if info.game == "blackjack":
                note = "live_table" if info.mode != "rng" else ""
            if not note:
                try:
                    cards = await self._cards(conn, table_id, round_id, steps)
                except GameError as exc:  # no card check for this round: the note says why
                    note = exc.code
        # A shoe whose shuffle or cut is missing from the history does not match; a round with
        # no cards, a shoe still in play or replaced mid-round simply has no card check.
        matches = engine.matches and (cards.matches if cards is not None else note != "shoe_unrecorded")
        return ReplayReport(table_id, round_id, info.game, info.mode, engine, cards, note, matches)

    async def _cards(self, conn: asyncpg.Connection, table_id: str, round_id: str,
                     steps: list[store.RoundStep]) -> CardCheck:
        first_card = next((s.seq for s in steps if s.kind in ("card_dealt", "hole_card_dealt")), None)
        if first_card is None:  # still taking bets, or a tournament hand of absent players
            raise GameError("no_cards", f"No card was dealt in {round_id}.")
        shuffled = await conn.fetchrow(
            """SELECT seq, payload::text AS payload FROM table_events WHERE table_id = $1
               AND kind = 'shoe_shuffled' AND seq < $2 ORDER BY seq DESC LIMIT 1""", table_id, first_card)
        if shuffled is None:
            raise GameError("shoe_unrecorded", "The shoe's shuffle is not recorded.")
        kinds = ["shoe_shuffled", "shoe_cut", "cards_burned", "card_dealt", "hole_card_dealt",
                 "hole_card_shown", "card_burned", "card_exposed", "shoe_revealed"]
        events = await store.kinds_after(conn, table_id, shuffled["seq"], kinds, limit=20_000)
        return replay_cards(msgspec.json.decode(shuffled["payload"]),
                            [(seq, kind, msgspec.json.decode(p)) for seq, kind, p in events],
                            {s.seq for s in steps if s.kind in _DRAWN})


async def rerun_stretch(conn: asyncpg.Connection, info: TableInfo, first: int, last: int) -> EngineReplay:
    """Run the table's commands again from the snapshot kept before seq ``first`` through seq
    ``last`` (a round's first and last events) and compare their events with the stored ones."""
    kind = game_kind(info.game)
    snap = await store.kept_snapshot(conn, info.id, first)
    if snap is None:
        raise GameError("not_replayable", "This round was played before its table's commands were kept "
                                          "(migration 0112): it cannot be run again.")
    logged = await store.logged_commands(conn, info.id, snap.state_command, through_seq=last)
    numbers = [c.n for c in logged]
    # The log must hold every command from the snapshot on, the round's last included: the
    # next command logged (or the table's counter) must follow the last one read.
    after = numbers[-1] if numbers else snap.state_command
    # (None logged after it: the table's counter, which counts an unlogged last command too.)
    nxt, counter = await conn.fetchrow(
        """SELECT (SELECT min(n) FROM table_commands WHERE table_id = $1 AND n > $2),
                  (SELECT state_command FROM table_state WHERE table_id = $1)""", info.id, after)
    missing = nxt > after + 1 if nxt is not None else (counter or 0) > after
    if numbers != list(range(snap.state_command + 1, after + 1)) or missing:
        raise GameError("not_replayable", "A command of this stretch is not in the log (one the log could "
                                          "not hold, or a gap): the round cannot be run again.")
    through = max([last, *(c.last_seq for c in logged)])
    stored = await store.stored_events(conn, info.id, snap.state_seq, through)
    engine = kind.load(snap.state)
    kind.upgrade(engine, info)
    compared, mismatch = rerun(kind, info, engine, logged, stored, through)
    produced = {seq for c in logged for seq in range(c.first_seq, c.last_seq + 1)}
    own = [ServerEvent(e.seq, e.kind) for e in stored if e.seq not in produced and e.seq <= last]
    return EngineReplay(snap.state_seq, last, len(logged), compared, own, mismatch is None, mismatch)


def replay_cards(shuffled: dict[str, Any], events: list[tuple[int, str, dict[str, Any]]],
                 round_seqs: set[int]) -> CardCheck:
    """Pure: the cards the shoe dealt (from its shuffle on, ``events`` in seq order) against
    the revealed order, cut and burned, for the round's cards (``round_seqs``: the seqs of
    its events that took a card from the shoe)."""
    cut_at = burned = -1
    drawn: list[list[int]] = []  # [seq, card or -1]: every card taken from the shoe, in order
    reveal = None
    for seq, kind, ev in events:
        if kind == "shoe_cut":
            cut_at = ev["at"]
        elif kind == "cards_burned":
            burned = ev["count"]
        elif kind in ("card_dealt", "card_burned", "card_exposed"):
            drawn.append([seq, ev["card"]])
        elif kind == "hole_card_dealt":
            drawn.append([seq, -1])
        elif kind == "hole_card_shown":
            hidden = [d for d in drawn if d[1] < 0]
            if hidden:
                hidden[-1][1] = ev["card"]
        elif kind == "shoe_revealed":
            reveal = ev
            break
        elif kind == "shoe_shuffled":  # a new shoe before this one was revealed: not one shoe's round
            raise GameError("shoe_replaced", "The round's shoe was replaced before it was revealed.")
    if reveal is None:
        raise GameError("shoe_not_revealed", "The round's shoe is still in play: its order is revealed at its end.")
    if cut_at < 0 or burned < 0:
        raise GameError("shoe_unrecorded", "The shoe's cut is not recorded.")
    shoe = cut_shoe(list(reveal["order"]), cut_at)[burned:]
    positions = [i for i, (seq, _) in enumerate(drawn) if seq in round_seqs]
    if len(positions) != len(round_seqs):  # cards after the reveal: a mid-round reshuffle
        raise GameError("shoe_replaced", "The round's shoe was replaced mid-round.")
    dealt = [drawn[i][1] for i in positions]
    expected = [shoe[i] if i < len(shoe) else -1 for i in positions]
    difference = None
    for n, (i, got, want) in enumerate(zip(positions, dealt, expected, strict=True)):
        if got < 0 <= want:
            continue  # a hole card never shown: nothing to compare
        if got != want:
            difference = Difference(n, drawn[i][0], got, want)
            break
    ok = shuffled.get("commitment") == reveal["commitment"] and \
        shoe_commitment(list(reveal["order"]), reveal["salt"]) == reveal["commitment"]
    return CardCheck(shuffled.get("commitment", ""), ok, cut_at, burned,
                        positions[0] + burned if positions else -1, dealt, expected,
                        difference is None and ok and bool(positions), difference)
