"""A table's committed engine state (``table_state``), the log of the commands it applied
(``table_commands``), the snapshots kept for disputes (``table_snapshots``), and the one
statement that commits a batch of its commands, with no transaction of its own: the ledger's
operations, the lease fence, the events, who played, the accepted command ids, the batch's
commands appended to the log and, at a snapshot, the state after the batch, together.

The state is not rewritten per batch (issue 14): ``seq`` and ``round`` follow every batch,
``open_refs`` a batch that releases holds and every snapshot (migration 0116), the state
itself only at a snapshot (``server.runtime`` says when). A restart
loads the snapshot and replays the commands logged after it through the engine, checking each
one's events against ``table_events`` (``TableRuntime.restore``). The log is kept whole and the
snapshot a round opens with is kept beside it, so a dispute can run any round again through a
fresh engine (``server.replay``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import asyncpg

from games.ledger.model import Op
from games.ledger.store import apply_args, raised_refusal

# ``table_batch_fenced`` (migration 0117): another process owns the table.
FENCE_LOST = "TF001"
# ``table_batch_unchecked`` (0118): an unchecked batch holds a retry or a player with limits.
REPLAYED, LIMITED = "RP001", "LM001"


class Unanswered(NamedTuple):
    """What a batch sent without the replay check first asks its statement to check."""

    currency: str  # the table's: play limits in it
    commands: list[tuple[str, str]]  # (user, command id) of every player's command in the batch


class Unchecked(Exception):
    """A batch sent without the replay check needs it: a command of it was answered before
    (``REPLAYED``) or a player of it has play limits (``LIMITED``). Nothing was written."""


class Snapshot(NamedTuple):
    """A table's row in ``table_state``."""

    seq: int  # the table's last committed event
    state_seq: int  # the snapshot ``state`` was taken after this event ...
    state_command: int  # ... and after this logged command (the table's command counter)
    state: bytes


class LoggedCommand(NamedTuple):
    """A command the table applied, as applied, with who gave it."""

    n: int  # the table's command counter
    first_seq: int  # its events: first_seq..last_seq (none when last_seq < first_seq)
    last_seq: int
    actor: str
    role: str
    command: bytes  # JSON as written (key order kept), tagged: the kind's ``decode_command`` reads it


class StoredEvent(NamedTuple):
    seq: int
    round: str
    kind: str
    payload: bytes  # JSON (as jsonb gives it back: keys reordered, spaces added)


async def load_state(conn: asyncpg.Connection, table_id: str) -> Snapshot | None:
    """The table's last snapshot and seq, None for a table that never ran."""
    row = await conn.fetchrow(
        "SELECT seq, state_seq, state_command, state FROM table_state WHERE table_id = $1", table_id)
    return Snapshot(row["seq"], row["state_seq"], row["state_command"], bytes(row["state"])) if row else None


async def logged_commands(conn: asyncpg.Connection, table_id: str, after: int,
                          through_seq: int | None = None) -> list[LoggedCommand]:
    """The commands logged after command ``after`` (a snapshot's), in order; with
    ``through_seq``, only those whose events start at or before that seq."""
    rows = await conn.fetch(
        """SELECT n, first_seq, last_seq, actor, role, command::text AS command FROM table_commands
           WHERE table_id = $1 AND n > $2 AND ($3::bigint IS NULL OR first_seq <= $3) ORDER BY n""",
        table_id, after, through_seq,
    )
    return [LoggedCommand(r["n"], r["first_seq"], r["last_seq"], r["actor"], r["role"], r["command"].encode())
            for r in rows]


async def stored_events(conn: asyncpg.Connection, table_id: str, after: int,
                        through: int | None = None) -> list[StoredEvent]:
    """The table's events after seq ``after`` (through seq ``through``), in order: what a
    replay is checked against."""
    rows = await conn.fetch(
        """SELECT seq, round, kind, payload::text AS payload FROM table_events
           WHERE table_id = $1 AND seq > $2 AND ($3::bigint IS NULL OR seq <= $3) ORDER BY seq""",
        table_id, after, through,
    )
    return [StoredEvent(r["seq"], r["round"], r["kind"], r["payload"].encode()) for r in rows]


async def kept_snapshot(conn: asyncpg.Connection, table_id: str, before_seq: int) -> Snapshot | None:
    """The last snapshot kept for disputes that was taken before event ``before_seq``."""
    row = await conn.fetchrow(
        """SELECT state_seq, state_command, state FROM table_snapshots
           WHERE table_id = $1 AND state_seq < $2 ORDER BY state_seq DESC, state_command DESC LIMIT 1""",
        table_id, before_seq,
    )
    return Snapshot(row["state_seq"], row["state_seq"], row["state_command"], bytes(row["state"])) if row else None


async def create_state(conn: asyncpg.Connection, table_id: str, round_id: str, state: bytes) -> None:
    """A new table's first state, at seq 0 (a table that has one keeps it), kept for disputes too."""
    await conn.execute(
        """WITH first AS (
               INSERT INTO table_state (table_id, seq, round, state) VALUES ($1, 0, $2, $3)
               ON CONFLICT DO NOTHING RETURNING table_id
           )
           INSERT INTO table_snapshots (table_id, state_seq, state_command, state)
           SELECT table_id, 0, 0, $3 FROM first""",
        table_id, round_id, state,
    )


async def replace_state(conn: asyncpg.Connection, table_id: str, state: bytes) -> None:
    """The same snapshot in a newer form (an engine upgraded it on load): its seq stays."""
    await conn.execute("UPDATE table_state SET state = $2 WHERE table_id = $1", table_id, state)


# The whole batch in one statement, with no BEGIN and COMMIT of its own (issue 14: four round
# trips were most of a batch's commit time): unless it was checked before, that none of its
# commands (``$36``, ``$37``: each user and command id, refused ones too) was answered before
# and none of the players whose wagers it places (``$12``, whoever sent the command: a late
# bet the chef accepts is the player's money) has play limits or an exclusion in force
# (``$35``, the table's currency, when unchecked:
# ``table_batch_unchecked``, migration 0118, raises otherwise; the two rules are 0120's
# functions, which the replay check reads too); the ledger's operations
# (``ledger_apply_or_raise``, migration 0005, raises a refusal); the fence (renew the lease
# only if this process still owns the table, under the lease's epoch its runtime started
# with, ``$38``, migration 0119; ``table_batch_fenced``, 0117, raises otherwise); events,
# who played, the accepted command ids and the commands; then seq, round and open refs (and
# at a snapshot the state). Anything raised stops the whole statement: nothing is written.
# The plain SQL parts read the statement's snapshot, none of its own writes; the ledger's
# function reads afresh, after the locks it waits for (READ COMMITTED).
_BATCH = """
WITH unchecked AS MATERIALIZED (
    SELECT table_batch_unchecked(
        $35::text IS NOT NULL AND EXISTS (SELECT 1 FROM commands_answered($1, $36::text[], $37::text[])),
        $35::text IS NOT NULL AND EXISTS (SELECT 1 FROM players_with_limits($12::text[], $35))) AS n
), applied AS MATERIALIZED (
    SELECT ledger_apply_or_raise($23::text[], $24::text[], $25::text[], $26::text[], $27::bigint[],
                                 $28::text[], $29::text[], $30::text[], $31::int[], $32::int[],
                                 $33::boolean[], $34::text[]) AS n
), fence AS (
    UPDATE table_owners SET lease_until = now() + make_interval(secs => $3)
    WHERE table_id = $1 AND owner = $2 AND epoch = $38 RETURNING 1
), events AS (
    INSERT INTO table_events (table_id, seq, round, kind, actor, payload)
    SELECT $1, u.seq, u.round, u.kind, u.actor, u.payload::jsonb
    FROM unnest($6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[]) AS u(seq, round, kind, actor, payload)
), players AS (
    INSERT INTO round_players (table_id, round, user_id)
    SELECT $1, u.round, u.user_id FROM unnest($11::text[], $12::text[]) AS u(round, user_id)
    ON CONFLICT DO NOTHING
), results AS (
    INSERT INTO command_results (user_id, cid, table_id, result)
    SELECT u.user_id, u.cid, $1, u.result::jsonb
    FROM unnest($13::text[], $14::text[], $15::text[]) AS u(user_id, cid, result)
    ON CONFLICT DO NOTHING
), commands AS (
    INSERT INTO table_commands (table_id, n, first_seq, last_seq, actor, role, command)
    SELECT $1, u.n, u.first_seq, u.last_seq, u.actor, u.role, u.command::json
    FROM unnest($17::bigint[], $18::bigint[], $19::bigint[], $20::text[], $21::text[], $22::text[])
         AS u(n, first_seq, last_seq, actor, role, command)
)"""

# The open refs, when given, with the ledger's position as they are written (0116): read from
# ``applied``, so after this batch's own holds were numbered (a sub-statement's order is
# otherwise the planner's).
_REFS = """open_refs = coalesce($16::text[], open_refs),
    refs_after = CASE WHEN $16::text[] IS NULL THEN refs_after ELSE (SELECT coalesce(
        pg_sequence_last_value(pg_get_serial_sequence('ledger_transfers', 'seq')::regclass), 0) FROM applied) END"""

# The sub-statements that must run are named here (a SELECT in WITH runs only as far as
# something reads it), in the order they run, each when first read: the checks, the ledger
# (which may wait for its accounts' locks), and only then the fence, so the lease row is not
# held locked while the ledger waits (the lease loop renews it too). The other writes run
# after all three.
_FENCED = """
SELECT (SELECT n FROM unchecked) + (SELECT n FROM applied) + table_batch_fenced((SELECT count(*) FROM fence))
"""

# Most batches: seq and round follow (and the open refs where given).
_RECORD_BATCH = _BATCH + """, state AS (
    UPDATE table_state SET seq = $4, round = $5, """ + _REFS + """, updated_at = now()
    WHERE table_id = $1
)""" + _FENCED

# A snapshot: the state after the batch (a restart replays only the commands after it); one
# a round opens with is kept for disputes.
_RECORD_SNAPSHOT = _BATCH + """, state AS (
    UPDATE table_state SET seq = $4, round = $5, """ + _REFS + """, state = $39, state_seq = $4,
                           state_command = $40, updated_at = now()
    WHERE table_id = $1
), kept AS (
    INSERT INTO table_snapshots (table_id, state_seq, state_command, state)
    SELECT $1, $4, $40, $39 WHERE $41 ON CONFLICT DO NOTHING
)""" + _FENCED

# (table, seq, round, event kind, actor, event as JSON)
EventRow = tuple[str, int, str, str, str, str]
# (user, command id, table, the Accepted answer as JSON)
ResultRow = tuple[str, str, str, str]
# (command counter, first event seq, last event seq, actor, role, the command as JSON)
CommandRow = tuple[int, int, int, str, str, str]


async def record_batch(conn: asyncpg.Connection, table_id: str, owner: str, lease_seconds: float, seq: int,
                       round_id: str, events: Sequence[EventRow], players: Iterable[tuple[str, str]],
                       results: Sequence[ResultRow], open_refs: list[str] | None, commands: Sequence[CommandRow],
                       last_command: int, snapshot: bytes | None, keep: bool = False,
                       ops: Iterable[Op] = (), unchecked: Unanswered | None = None,
                       *, epoch: int | None) -> bool:
    """Commit a batch in one statement, one round trip, all or nothing (on its own it is a
    transaction; inside the caller's, a part of it): the ledger's ``ops``, in order; renew
    ``owner``'s lease on the table, append ``events``, the ``(player, round)`` pairs who
    played, each accepted command's answer (a retry gets it again), the batch's ``commands``
    appended to the log, the table's ``seq``, ``round_id`` and, unless None, the ledger refs
    of the wagers it still holds in play (None: the list stands, and the holds made since
    count as in play); and with ``snapshot`` the state after the batch (taken at ``seq`` and
    command ``last_command``, the table's command counter), also kept for disputes with
    ``keep``. Raises the ledger's refusal (a LedgerError) when it refuses an operation;
    False if ``owner`` no longer holds the table under ``epoch``, the lease's epoch when his
    runtime started (``owners.lease_epoch``; fencing). With ``unchecked``, a batch sent
    without the replay check (``commands.answered``) first: raises Unchecked if one of its
    commands was answered before or a player whose wager it places has play limits in the
    table's currency or an exclusion in force. Whatever it raises or returns False, nothing was written."""
    batch, ledger_args = apply_args(ops)
    columns: list[tuple[object, ...]] = list(zip(*events, strict=True))[1:] if events else [()] * 5
    pairs = list(players)
    head = (
        table_id, owner, lease_seconds, seq, round_id, *columns,
        [r for _, r in pairs], [p for p, _ in pairs],
        [r[0] for r in results], [r[1] for r in results], [r[3] for r in results],
        open_refs,
    )
    logged: list[tuple[object, ...]] = list(zip(*commands, strict=True)) if commands else [()] * 6
    check = (unchecked.currency, [u for u, _ in unchecked.commands], [c for _, c in unchecked.commands]) \
        if unchecked is not None else (None, [], [])
    args = (*head, *logged, *ledger_args, *check, epoch)
    try:
        if snapshot is not None:
            await conn.fetchval(_RECORD_SNAPSHOT, *args, snapshot, last_command, keep)
        else:
            await conn.fetchval(_RECORD_BATCH, *args)
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == FENCE_LOST:
            return False
        if exc.sqlstate in (REPLAYED, LIMITED):
            raise Unchecked("replayed" if exc.sqlstate == REPLAYED else "limited") from None
        refused = raised_refusal(batch, exc)
        if refused is not None:
            raise refused from None
        raise
    return True
