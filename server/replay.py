"""Running logged commands again through an engine and checking that each gives exactly the
events stored for it: one rule for a table's restart (``TableRuntime.restore``: a mismatch
refuses the table) and a dispute's replay of a past round (``server.recall``: a mismatch is
reported). Pure: the caller reads the log and the events and owns the engine.

A command's events are seqs ``first_seq``..``last_seq`` of the table's events. The events no
command produced (the server's ``table_interrupted`` and ``table_resumed``, a jackpot pool's)
are not the engine's and are not compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from server.auth import Principal
from server.kinds.base import GameKind, TableInfo
from server.protocol import encoder
from server.store.state import LoggedCommand, StoredEvent


class Mismatch(msgspec.Struct):
    """Where a command run again stops agreeing with the stored history."""

    seq: int  # the first event that differs (or is missing, or is extra)
    command: int  # the table's command counter
    why: str


def event_tag(event: Any) -> str:
    """An event's wire name (its msgspec tag)."""
    tag = getattr(type(event), "__struct_config__", None)
    return str(tag.tag) if tag is not None and tag.tag is not None else type(event).__name__


def rerun(kind: GameKind, info: TableInfo, engine: Any, logged: Sequence[LoggedCommand],
          stored: Sequence[StoredEvent], last: int) -> tuple[int, Mismatch | None]:
    """Apply ``logged`` to ``engine`` in order, each as its actor gave it, and check each
    command's events against ``stored`` (kind, round and JSON) up to seq ``last``. Returns
    how many events were compared and the first mismatch (the engine is not to be trusted
    after one: the run stops there)."""
    by_seq = {e.seq: e for e in stored}
    compared = 0
    for c in logged:
        try:
            command = kind.decode_command(c.command)
            before = kind.round_id(engine)
            events = kind.engine_events(engine, command, kind.actor(Principal(c.actor, c.role, info.currency)))
        except Exception as exc:  # accepted when it was applied: a replay must accept it too
            return compared, Mismatch(c.first_seq, c.n, f"command {c.n} ({c.role} {c.actor}) now fails: "
                                                        f"{type(exc).__name__}: {exc}")
        rounds = kind.label_rounds(events, before, kind.round_id(engine))
        for i, (ev, round_id) in enumerate(zip(events, rounds, strict=True)):
            seq, tag = c.first_seq + i, event_tag(ev)
            row = by_seq.get(seq) if seq <= min(c.last_seq, last) else None
            if row is None:
                return compared, Mismatch(seq, c.n, f"command {c.n} gives {tag}, none is stored there for it")
            if row.kind != tag or row.round != round_id:
                return compared, Mismatch(seq, c.n, f"command {c.n} gives {tag} in {round_id}, "
                                                    f"stored: {row.kind} in {row.round}")
            if msgspec.json.decode(row.payload) != msgspec.json.decode(encoder.encode(ev)):
                return compared, Mismatch(seq, c.n, f"command {c.n} gives a {tag} event that differs from "
                                                    f"the stored one")
            compared += 1
        if len(events) < c.last_seq - c.first_seq + 1:
            return compared, Mismatch(c.first_seq + len(events), c.n,
                                      f"command {c.n} gives {len(events)} events, {c.last_seq - c.first_seq + 1} "
                                      f"stored")
    return compared, None
