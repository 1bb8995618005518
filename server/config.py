"""Server settings, read once from the environment."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field

from games.db.embedded import PROJECT_DIR
from games.db.pool import POOL_MAX, parse_pool_size


def _secret() -> str:
    """CASINO_JWT_SECRET, else a secret kept in .casino/ so tokens survive a restart."""
    env = os.environ.get("CASINO_JWT_SECRET")
    if env:
        return env
    path = PROJECT_DIR / ".casino" / "jwt-secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


@dataclass
class Settings:
    database_url: str | None = None  # None: DATABASE_URL or the embedded PostgreSQL
    # REDIS_URL: the broker several processes share (table events, forwarded commands); None:
    # this process alone, its channels in memory (``casino serve --workers N`` sets it).
    redis_url: str | None = None
    jwt_secret: str = field(default_factory=_secret)
    token_minutes: int = 12 * 60
    # Seconds: betting window on RNG tables, a player's decision time, pause between rounds.
    betting_seconds: float = 15.0
    decision_seconds: float = 20.0
    pause_seconds: float = 3.0
    heartbeat_seconds: float = 15.0
    # A socket whose unsent frames pass this is closed (4008): it never slows a table.
    send_queue_frames: int = 2000
    send_queue_bytes: int = 8 * 1024 * 1024  # ... or unsent bytes (a few snapshots can be large)
    # ... once it is full and the socket has sent nothing for this long (a burst is not a stall).
    send_stall_seconds: float = 2.0
    max_frame_bytes: int = 16 * 1024
    # permessage-deflate on the websockets: off, because it compresses every frame again for
    # each socket it goes to (one event to 5,000 browsers: the server's CPU +52%, delivery
    # p99 ≈ 330 ms against 204–239 ms; BENCHMARKS.md). On where bandwidth costs more than cores.
    ws_deflate: bool = False
    # A seated player whose last connection to the table closed loses his seat after this
    # long, between rounds (his open bets go back to him).
    seat_release_seconds: float = 120.0
    # Identifies this process in table_owners; leases are renewed every lease_seconds / 3.
    owner_id: str = field(default_factory=lambda: f"{os.uname().nodename}:{os.getpid()}")
    lease_seconds: float = 15.0
    # A table's engine state is written at least every this many batches (and at each new
    # round; between, its commands are logged): 0 is the runtime's SNAPSHOT_BATCHES.
    snapshot_batches: int = 0
    # The most database connections this process holds (CASINO_DB_POOL). `--workers N` sets it
    # to each worker's share of the server's max_connections (games.db.pool.pool_share).
    db_pool: int = POOL_MAX
    # The tables' batch statements in flight at once (CASINO_COMMIT_FLIGHTS; 0: no limit, each
    # batch its own statement at once): a batch that finds them all taken waits, and goes with
    # the others that gather meanwhile, in one statement (server.commit_group). For a floor whose
    # PostgreSQL is the bottleneck: it costs the primary a third less CPU a bet and the server
    # more (smaller batches), so it is off by default (BENCHMARKS.md, "Tables committed together").
    commit_flights: int = 0
    demo: bool = False  # create the demo tables and accounts on a fresh database
    bots: bool = False  # and start bots that play at them
    public_url: str = "http://127.0.0.1:8000"
    # CASINO_WS_URL: where this process takes websockets of its own (a worker's port, or this
    # host's address behind the load balancer), handed by the lobby to the players of the
    # tables it owns (``/tables``' ``ws_url``). None: it names none.
    ws_url: str | None = None
    # With it, GET /metrics wants "Authorization: Bearer <it>" (else anyone who reaches the port).
    metrics_token: str | None = None
    # Responsible gaming (server/responsible.py): a raised deposit limit applies this long after
    # it was asked for; a "minute" of the reality check and session limit is this many seconds
    # (60; tests use 1).
    limit_raise_hours: float = 24.0
    reality_check_unit_seconds: float = 60.0
    # Each process looks its open sockets' tokens and players up in PostgreSQL this often, and
    # closes those logged out or excluded where it never heard of it (server.sessions).
    socket_recheck_seconds: float = 60.0

    @classmethod
    def from_env(cls, **overrides) -> Settings:
        def num(name: str, default: float) -> float:
            return float(os.environ.get(name, default))

        s = cls(
            database_url=os.environ.get("DATABASE_URL") or None,
            redis_url=os.environ.get("REDIS_URL") or None,
            token_minutes=int(num("CASINO_TOKEN_MINUTES", 12 * 60)),
            betting_seconds=num("CASINO_BETTING_SECONDS", 15.0),
            decision_seconds=num("CASINO_DECISION_SECONDS", 20.0),
            pause_seconds=num("CASINO_PAUSE_SECONDS", 3.0),
            heartbeat_seconds=num("CASINO_HEARTBEAT_SECONDS", 15.0),
            send_queue_frames=int(num("CASINO_SEND_QUEUE_FRAMES", 2000)),
            send_queue_bytes=int(num("CASINO_SEND_QUEUE_BYTES", 8 * 1024 * 1024)),
            send_stall_seconds=num("CASINO_SEND_STALL_SECONDS", 2.0),
            ws_deflate=os.environ.get("CASINO_WS_DEFLATE", "").lower() in ("1", "true", "yes", "on"),
            lease_seconds=num("CASINO_LEASE_SECONDS", 15.0),
            seat_release_seconds=num("CASINO_SEAT_RELEASE_SECONDS", 120.0),
            snapshot_batches=int(num("CASINO_SNAPSHOT_BATCHES", 0)),
            ws_url=os.environ.get("CASINO_WS_URL") or None,
            db_pool=parse_pool_size(os.environ.get("CASINO_DB_POOL") or str(POOL_MAX)),
            commit_flights=max(int(num("CASINO_COMMIT_FLIGHTS", 0)), 0),
            metrics_token=os.environ.get("CASINO_METRICS_TOKEN") or None,
            limit_raise_hours=num("CASINO_LIMIT_RAISE_HOURS", 24.0),
            reality_check_unit_seconds=num("CASINO_REALITY_CHECK_UNIT_SECONDS", 60.0),
            socket_recheck_seconds=max(num("CASINO_SOCKET_RECHECK_SECONDS", 60.0), 1.0),  # (0: a tight loop)
        )
        for k, v in overrides.items():
            setattr(s, k, v)
        return s
