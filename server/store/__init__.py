"""Every SQL statement of the server, one module per kind of row:

- ``users``: people, the login throttle and the tokens ended by a logout;
- ``tables``: tables as configured, their staff and authorisations, the change notice;
- ``state``: a table's committed engine state (a snapshot and the log of the commands
  applied since), and the statement that commits a batch;
- ``events``: the tables' events; ``rounds``: who played which round;
- ``commands``: the answers to accepted commands (retries);
- ``owners``: table leases and process heartbeats;
- ``audit``: the append-only audit log; ``audit_chain``: its seals (a hash chain) and their check;
- ``limits``: table limits, versioned;
- ``accounts``: what the accounts and cashier API asks beside the ledger;
- ``jackpots``: the linked jackpot pools.

The ledger's own tables are the ledger's (``games.ledger.store``). What the callers use most
is re-exported here (``store.load_tables``).
"""

from server.store import audit
from server.store.commands import answered, limited_among
from server.store.events import RoundStep, events_after, kinds_after, last_seq, round_steps
from server.store.owners import (
    TableLease,
    beat,
    hand_back,
    hand_back_all,
    lease_epoch,
    live_processes,
    open_table_leases,
    renew_leases,
    stopped,
    table_lease,
    take_lease,
)
from server.store.rounds import RoundRef, played_round, player_rounds
from server.store.state import (
    Batch,
    LoggedCommand,
    Snapshot,
    StoredEvent,
    Unanswered,
    Unchecked,
    create_state,
    kept_snapshot,
    load_state,
    logged_commands,
    record_batch,
    record_batches,
    replace_state,
    stored_events,
)
from server.store.tables import (
    TABLE_CHANGED,
    any_table,
    archive_table,
    assign_staff,
    grant_authorisation,
    insert_table,
    load_tables,
    notify_table_changed,
)
from server.store.users import (
    authenticate,
    create_user,
    excluded_among,
    get_user,
    list_users,
    new_user,
    revoke_token,
    revoked_among,
)

# The packages whose migrations make this server's schema, in the order they apply.
SCHEMA: tuple[str, ...] = ("games.ledger", "server")

__all__ = [
    "SCHEMA",
    "audit",
    "answered", "limited_among",
    "RoundStep", "events_after", "kinds_after", "last_seq", "round_steps",
    "TableLease", "beat", "hand_back", "hand_back_all", "live_processes", "open_table_leases",
    "lease_epoch", "renew_leases", "stopped", "table_lease", "take_lease",
    "RoundRef", "played_round", "player_rounds",
    "LoggedCommand", "Snapshot", "StoredEvent", "create_state", "kept_snapshot", "load_state", "logged_commands",
    "Batch", "record_batch", "record_batches", "replace_state", "stored_events", "Unanswered", "Unchecked",
    "TABLE_CHANGED", "any_table", "archive_table", "assign_staff", "grant_authorisation", "insert_table", "load_tables",
    "notify_table_changed",
    "authenticate", "create_user", "excluded_among", "get_user", "list_users", "new_user", "revoke_token",
    "revoked_among",
]
