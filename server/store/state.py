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


# The batches of one or more tables (``record_batches``) in one statement, with no BEGIN and
# COMMIT of its own (issue 14: four round trips were most of a batch's commit time; and a
# statement's fixed cost, about 0.6 ms of PostgreSQL's CPU, was most of a five-bet batch's).
# Each table's rows carry its id. In order: unless they were checked before, that none of the
# unchecked batches' commands (``$45``-``$47``: table, user, command id, refused ones too) was
# answered before at its table and none of their players (``$48``, ``$49``: each player with
# his table's currency; a late bet the chef accepts is the player's money) has play limits or
# an exclusion in force (``table_batch_unchecked``, migration 0118, raises otherwise; the two
# rules are 0120's and 0122's functions, which the replay check reads too); the ledger's
# operations of every batch, in the order given (``ledger_apply_or_raise``, migration 0005,
# raises a refusal); the fence: the lease of every table renewed, only if this process still
# owns it under the lease's epoch its runtime started with (``$4``, migration 0119;
# ``table_batch_fenced``, 0117, raises when one is not), its rows locked in the tables' order
# (as ``owners.renew_leases`` locks them: a batch and the lease loop never wait for each other
# both ways); events, who played, the accepted command ids, the commands; each table's seq,
# round, open refs where given (``$7``, the refs in ``$11``, ``$12``) and its snapshot where
# taken (``$8``; kept for disputes with ``$10``). Anything raised stops the whole statement:
# nothing of any of the batches is written. The plain SQL parts read the statement's
# snapshot, none of its own writes; the ledger's function reads afresh, after the locks it
# waits for (READ COMMITTED).
_RECORD = """
WITH unchecked AS MATERIALIZED (
    SELECT table_batch_unchecked(
        EXISTS (SELECT 1 FROM (SELECT k.table_id, array_agg(k.user_id) AS users, array_agg(k.cid) AS cids
                                 FROM unnest($45::text[], $46::text[], $47::text[]) AS k(table_id, user_id, cid)
                                GROUP BY k.table_id) g
                CROSS JOIN LATERAL commands_answered(g.table_id, g.users, g.cids)),
        EXISTS (SELECT 1 FROM (SELECT k.currency, array_agg(k.user_id) AS users
                                 FROM unnest($48::text[], $49::text[]) AS k(user_id, currency)
                                GROUP BY k.currency) g
                CROSS JOIN LATERAL players_with_limits(g.users, g.currency))) AS n
), applied AS MATERIALIZED (
    SELECT ledger_apply_or_raise($33::text[], $34::text[], $35::text[], $36::text[], $37::bigint[],
                                 $38::text[], $39::text[], $40::text[], $41::int[], $42::int[],
                                 $43::boolean[], $44::text[]) AS n
), fence AS (
    UPDATE table_owners o SET lease_until = now() + make_interval(secs => $2)
      FROM (SELECT l.table_id FROM table_owners l
              JOIN unnest($3::text[], $4::bigint[]) AS u(table_id, epoch)
                ON l.table_id = u.table_id AND l.epoch = u.epoch
             WHERE l.owner = $1
             ORDER BY l.table_id FOR UPDATE OF l) AS mine
     WHERE o.table_id = mine.table_id RETURNING 1
), events AS (
    INSERT INTO table_events (table_id, seq, round, kind, actor, payload)
    SELECT u.table_id, u.seq, u.round, u.kind, u.actor, u.payload::jsonb
    FROM unnest($13::text[], $14::bigint[], $15::text[], $16::text[], $17::text[], $18::text[])
         AS u(table_id, seq, round, kind, actor, payload)
), players AS (
    INSERT INTO round_players (table_id, round, user_id)
    SELECT u.table_id, u.round, u.user_id
    FROM unnest($19::text[], $20::text[], $21::text[]) AS u(table_id, round, user_id)
    ON CONFLICT DO NOTHING
), results AS (
    INSERT INTO command_results (user_id, cid, table_id, result)
    SELECT u.user_id, u.cid, u.table_id, u.result::jsonb
    FROM unnest($22::text[], $23::text[], $24::text[], $25::text[]) AS u(user_id, cid, table_id, result)
    ON CONFLICT DO NOTHING
), commands AS (
    INSERT INTO table_commands (table_id, n, first_seq, last_seq, actor, role, command)
    SELECT u.table_id, u.n, u.first_seq, u.last_seq, u.actor, u.role, u.command::json
    FROM unnest($26::text[], $27::bigint[], $28::bigint[], $29::bigint[], $30::text[], $31::text[], $32::text[])
         AS u(table_id, n, first_seq, last_seq, actor, role, command)
), state AS (
    -- The open refs, where given, with the ledger's position as they are written (0116): read
    -- from ``applied``, so after this statement's own holds were numbered (a sub-statement's
    -- order is otherwise the planner's).
    UPDATE table_state s
       SET seq = u.seq, round = u.round,
           open_refs = CASE WHEN u.refs THEN coalesce(r.refs, '{}') ELSE s.open_refs END,
           refs_after = CASE WHEN u.refs THEN (SELECT coalesce(pg_sequence_last_value(
                            pg_get_serial_sequence('ledger_transfers', 'seq')::regclass), 0) FROM applied)
                        ELSE s.refs_after END,
           state = coalesce(u.snapshot, s.state),
           state_seq = CASE WHEN u.snapshot IS NULL THEN s.state_seq ELSE u.seq END,
           state_command = CASE WHEN u.snapshot IS NULL THEN s.state_command ELSE u.command END,
           updated_at = now()
      FROM unnest($3::text[], $5::bigint[], $6::text[], $7::boolean[], $8::bytea[], $9::bigint[])
           AS u(table_id, seq, round, refs, snapshot, command)
      LEFT JOIN LATERAL (SELECT array_agg(f.ref ORDER BY f.i) AS refs
                           FROM unnest($11::text[], $12::text[]) WITH ORDINALITY AS f(table_id, ref, i)
                          WHERE f.table_id = u.table_id) r ON u.refs
     WHERE s.table_id = u.table_id
), kept AS (
    INSERT INTO table_snapshots (table_id, state_seq, state_command, state)
    SELECT u.table_id, u.seq, u.command, u.snapshot
      FROM unnest($3::text[], $5::bigint[], $9::bigint[], $8::bytea[], $10::boolean[])
           AS u(table_id, seq, command, snapshot, keep)
     WHERE u.keep AND u.snapshot IS NOT NULL
    ON CONFLICT DO NOTHING
)
-- The sub-statements that must run are named here (a SELECT in WITH runs only as far as
-- something reads it), in the order they run, each when first read: the checks, the ledger
-- (which may wait for its accounts' locks), and only then the fence, so the lease rows are
-- not held locked while the ledger waits (the lease loop renews them too). The other writes
-- run after all three.
SELECT (SELECT n FROM unchecked) + (SELECT n FROM applied)
       + table_batch_fenced(((SELECT count(*) FROM fence) = cardinality($3::text[]))::int)
"""

# (table, seq, round, event kind, actor, event as JSON)
EventRow = tuple[str, int, str, str, str, str]
# (user, command id, table, the Accepted answer as JSON)
ResultRow = tuple[str, str, str, str]
# (command counter, first event seq, last event seq, actor, role, the command as JSON)
CommandRow = tuple[int, int, int, str, str, str]


class Batch(NamedTuple):
    """What one table's batch writes (``record_batches``)."""

    table_id: str
    epoch: int | None  # the lease's epoch the table's runtime started under (fencing)
    seq: int  # the table's last event after the batch
    round_id: str
    events: Sequence[EventRow]
    players: Sequence[tuple[str, str]]  # (player, round) who played
    results: Sequence[ResultRow]  # each accepted command's answer (a retry gets it again)
    open_refs: list[str] | None  # the ledger refs of the wagers it holds in play; None: the list stands
    commands: Sequence[CommandRow]  # appended to the log
    last_command: int  # the table's command counter after the batch
    snapshot: bytes | None = None  # the state after the batch
    keep: bool = False  # the snapshot kept for disputes
    ops: Sequence[Op] = ()  # the ledger's, in order
    unchecked: Unanswered | None = None  # sent without the replay check first


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
    return await record_batches(conn, owner, lease_seconds, [Batch(
        table_id, epoch, seq, round_id, events, list(players), results, open_refs, commands, last_command,
        snapshot, keep, list(ops), unchecked)])


async def record_batches(conn: asyncpg.Connection, owner: str, lease_seconds: float, batches: Sequence[Batch]) -> bool:
    """Commit the batches of one or more tables, at most one each, in one statement, all or
    nothing, as ``record_batch`` commits one (the ledger's operations in the order of
    ``batches``). Raises what ``record_batch`` raises, or returns False, when one of them
    would: nothing of any of them was written then."""
    if not batches:
        return True
    if len({b.table_id for b in batches}) != len(batches):
        raise ValueError("two batches of one table in one statement")
    ops, ledger_args = apply_args([op for b in batches for op in b.ops])
    try:
        await conn.fetchval(_RECORD, *_arguments(owner, lease_seconds, batches), *ledger_args,
                            *_check_arguments(batches))
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == FENCE_LOST:
            return False
        if exc.sqlstate in (REPLAYED, LIMITED):
            raise Unchecked("replayed" if exc.sqlstate == REPLAYED else "limited") from None
        refused = raised_refusal(ops, exc)
        if refused is not None:
            raise refused from None
        raise
    return True


def _columns(rows: list[tuple], width: int) -> list[tuple[object, ...]]:
    """Rows as ``width`` columns (arrays for ``unnest``)."""
    return list(zip(*rows, strict=True)) if rows else [()] * width


def _arguments(owner: str, lease_seconds: float, batches: Sequence[Batch]) -> tuple[object, ...]:
    """``_RECORD``'s ``$1`` to ``$32``: the tables' own values, then their rows."""
    tables = [(b.table_id, b.epoch, b.seq, b.round_id, b.open_refs is not None, b.snapshot, b.last_command,
               b.snapshot is not None and b.keep) for b in batches]
    refs = [(b.table_id, ref) for b in batches if b.open_refs is not None for ref in b.open_refs]
    events = [row for b in batches for row in b.events]
    players = [(b.table_id, r, p) for b in batches for p, r in b.players]
    results = [row for b in batches for row in b.results]
    commands = [(b.table_id, *row) for b in batches for row in b.commands]
    return (owner, lease_seconds, *_columns(tables, 8), *_columns(refs, 2), *_columns(events, 6),
            *_columns(players, 3), *_columns(results, 4), *_columns(commands, 7))


def _check_arguments(batches: Sequence[Batch]) -> tuple[object, ...]:
    """``$45`` to ``$49``: what the unchecked batches ask the statement to check."""
    answered = [(b.table_id, user, cid) for b in batches if b.unchecked is not None
                for user, cid in b.unchecked.commands]
    limits = [(p, b.unchecked.currency) for b in batches if b.unchecked is not None for p, _ in b.players]
    return (*_columns(answered, 3), *_columns(limits, 2))
