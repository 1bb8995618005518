"""What an operator watches: this process's Prometheus metrics, scraped at ``GET /metrics``
(``server.api.metrics``; docs/operations.md#metrics lists them).

Counters and histograms live in prometheus_client's default registry and are recorded
where things happen: the table runtime (accepted and refused commands, ack latency, commit
time, batch sizes), the websocket (refusals before a table, server-side closes), a chore
that times the event loop itself (``keep_timing_the_loop``) and a hook that times the
garbage collector's pauses (``watch_gc``). They are
cheap on the hot path: labels are bounded (a game kind, a command type, a refusal or close
code; never a user or a table), and each runtime holds its game's children, so recording
is an increment or an observe, no label lookup. What is a state rather than an event
(sockets open, send and table queue depths, tables owned, lease age) is read from the
process's objects at scrape time by ``LiveCollector``: nothing on the hot path at all.

With ``casino serve --workers N`` a scrape of any worker answers for all of them
(prometheus_client's multiprocess mode in the supervisor's folder: ``SharedGauges``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import logging
import os
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from server.resources import Resources

log = logging.getLogger("casino")

# No `_created` series beside each counter and histogram: timestamps of process start only.
disable_created_metrics()  # type: ignore[no-untyped-call]

ACCEPTED = Counter("casino_commands_accepted", "Commands accepted and acknowledged after their commit, "
                   "by game kind and command type (a player's place_bet is one acked bet)", ["game", "command"])
REFUSALS = Counter("casino_refusals", "Commands and frames refused, by refusal code: by a table (rules, "
                   "ledger, table unavailable; its automatic commands included) or by the socket before a "
                   "table (not subscribed, too many pending, malformed frame, ...)", ["code"])
ACK_SECONDS = Histogram("casino_ack_latency_seconds", "From a command's arrival at its table to its "
                        "acknowledgement after the commit (queue wait, engine, commit), by game kind",
                        ["game"], buckets=(.001, .0025, .005, .01, .02, .05, .1, .2, .5, 1, 2.5, 5))
COMMIT_SECONDS = Histogram("casino_commit_seconds", "Writing one batch: its rows built, the ledger "
                           "applied and its statement committed, by game kind (a statement that wrote "
                           "nothing and sent the batch back to the replay check not counted: "
                           "casino_batches_rechecked)",
                           ["game"], buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5))
BATCH_COMMANDS = Histogram("casino_batch_commands", "Commands committed in one batch (group commit, "
                           "the table's automatic ones included), by game kind",
                           ["game"], buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512))
GROUPED = Histogram("casino_batch_statement_tables", "Tables' batches committed in one statement (a "
                    "batch that finds every statement in flight waits, and goes with the others that "
                    "gather meanwhile: CASINO_COMMIT_FLIGHTS)", buckets=(1, 2, 4, 8, 16, 32))
SPLIT = Counter("casino_batch_statements_split", "Statements of several tables' batches that failed, wrote "
                "nothing, and whose batches were then each committed alone (a ledger refusal, a lost lease "
                "or a retried command in one of them)")
RECHECKED = Counter("casino_batches_rechecked", "Batches sent without the replay check whose statement "
                    "wrote nothing and sent them back to be run again with it, by why: replayed (a command "
                    "id answered before: a client's retry), limited (a player with play limits), failed "
                    "(the commit failed: a ledger refusal, a deadlock, ...)", ["why"])
for _why in ("replayed", "limited", "failed"):
    RECHECKED.labels(_why)
FORWARDED = Counter("casino_commands_forwarded", "Commands taken by this process (from its sockets, its HTTP "
                    "API or a tournament's orders) for a table another process owns, and sent there through "
                    "the broker (each once, however often it was tried): mostly sockets placed away from "
                    "their tables; the lobby's ws_url places them at the owner")
BROKER_DROPPED = Counter("casino_broker_frames_dropped", "Frames this process could not publish to the other "
                         "processes within 15 s of their publishing (2 s more at the stop): the broker away; their "
                         "sockets read what they missed from PostgreSQL")
WS_CLOSES = Counter("casino_ws_closes", "Websockets closed by the server, by close code "
                    "(4001 unauthorized, 4003 token expired, 4008 too slow to read)", ["code"])
for _code in ("4001", "4003", "4008"):  # present at 0 from the start (rate() needs a first sample)
    WS_CLOSES.labels(_code)
# The refusals an alert watches, at 0 from the start too: increase() cannot see the first one
# of a series that begins at 1 (deploy/prometheus/alerts.yml, CasinoInternalErrors).
for _code in ("internal_error", "table_unavailable"):
    REFUSALS.labels(_code)

_refusals: dict[str, Any] = {}
_closes: dict[int, Any] = {}


# How late the event loop runs a task due every LOOP_TICK seconds: how long the process kept
# the loop from everything else in one go (a full garbage collection, a core shared with
# other processes; a big frame to every socket did, before it was paced: server.fanout).
# Every table, socket and lease of the process waits that long. The buckets go past the
# lease (15 s): a hold that can cost the process its tables is told apart from a merely
# long one.
LOOP_TICK = 0.1
LOOP_LAG = Histogram("casino_event_loop_lag_seconds", "How late the event loop ran a task due every "
                     f"{LOOP_TICK:g} s: the time the process did other work without letting any table, "
                     "socket or lease renewal in", buckets=(
                         0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 15.0, 30.0))


async def keep_timing_the_loop(tick: float = LOOP_TICK) -> None:
    """``casino_event_loop_lag_seconds``, for the life of the process (the lifespan's chore),
    and the collector's pauses noted meanwhile folded into ``casino_gc_pause_seconds``."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + tick
        await asyncio.sleep(tick)
        LOOP_LAG.observe(max(0.0, loop.time() - due))
        fold_gc_pauses()


# The cyclic garbage collector's pauses: every thread and the loop stop while it runs, so a
# collection of the whole heap shows as a late tick of the loop too (a debugging run put one
# at 346 ms with 2,000 sockets open: BENCHMARKS, "A big frame paced out"). ``casino serve``
# freezes its start-up heap and collects rarely (server/serve_cli.py); this says how long
# each collection held the process when one came, by generation (2: the whole heap).
GC_PAUSE = Histogram("casino_gc_pause_seconds", "How long one run of Python's cyclic garbage collector "
                     "held the process (every table, socket and lease renewal with it), by generation "
                     "(2: the whole heap)", ["generation"], buckets=(
                         0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0))
_gc_children = [GC_PAUSE.labels(str(g)) for g in range(3)]


# A collection can begin in any allocation, in a thread holding the histogram's lock (an
# observe, a scrape) among others: the hook only appends to a deque (no lock), and the
# loop's chore folds what came into the histogram every tick (``fold_gc_pauses``).
_gc_pauses: collections.deque[tuple[int, float]] = collections.deque(maxlen=100_000)


class GcTimer:
    """A ``gc.callbacks`` entry noting each collection's pause (``watch_gc``)."""

    def __init__(self) -> None:
        self.began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.began = time.perf_counter()
        elif self.began:
            _gc_pauses.append((info["generation"], time.perf_counter() - self.began))
            self.began = 0.0


def fold_gc_pauses() -> None:
    """The pauses noted since the last call, into ``casino_gc_pause_seconds`` (a collection
    meanwhile only appends behind what is folded)."""
    while _gc_pauses:
        generation, seconds = _gc_pauses.popleft()
        _gc_children[generation].observe(seconds)


def watch_gc() -> GcTimer:
    """Time the collector's pauses from now on (the lifespan's; ``unwatch_gc`` at its end)."""
    timer = GcTimer()
    gc.callbacks.append(timer)
    return timer


def unwatch_gc(timer: GcTimer) -> None:
    with contextlib.suppress(ValueError):
        gc.callbacks.remove(timer)
    fold_gc_pauses()


def refused(code: str) -> None:
    """One refusal (codes are the server's own constants: a bounded label)."""
    child = _refusals.get(code)
    if child is None:
        child = _refusals[code] = REFUSALS.labels(code)
    child.inc()


def rechecked(why: str) -> None:
    RECHECKED.labels(why).inc()


def ws_closed(code: int) -> None:
    child = _closes.get(code)
    if child is None:
        child = _closes[code] = WS_CLOSES.labels(str(code))
    child.inc()


def _command_type(command: Any) -> str:
    tag = getattr(type(command), "__struct_config__", None)
    return str(tag.tag) if tag is not None and tag.tag is not None else type(command).__name__


class GameMetrics:
    """One game kind's children, shared by every runtime of that game in this process."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.ack = ACK_SECONDS.labels(game)
        self.commit = COMMIT_SECONDS.labels(game)
        self.batch = BATCH_COMMANDS.labels(game)
        self._accepted: dict[type, Any] = {}

    def accepted(self, command: Any) -> Any:
        """The accepted-commands counter of ``command``'s type (looked up by type: no allocation)."""
        child = self._accepted.get(type(command))
        if child is None:
            child = self._accepted[type(command)] = ACCEPTED.labels(self.game, _command_type(command))
        return child


_games: dict[str, GameMetrics] = {}


def for_game(game: str) -> GameMetrics:
    m = _games.get(game)
    if m is None:
        m = _games[game] = GameMetrics(game)
    return m


# The live gauges: states, not events, read from the process's objects (``read_live``). A
# single process reads them at each scrape (``LiveCollector``); the workers of ``casino serve
# --workers N`` write them to their shared files (``SharedGauges``). (name, help, labels).
LIVE: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("casino_ws_sockets_open", "Websockets open on this process", ()),
    ("casino_ws_send_queue_frames", "Frames waiting in the send queues of this process's sockets, all sockets "
     "together", ()),
    ("casino_ws_send_queue_frames_max", "Frames waiting in the longest send queue of one socket", ()),
    ("casino_tables_owned", "Tables this process owns (holds the lease of and runs), by game kind", ("game",)),
    ("casino_table_queue_commands", "Commands waiting for their table's next batch, all tables together", ()),
    ("casino_table_queue_commands_max", "Commands waiting at the busiest table", ()),
    ("casino_batches_waiting_commit", "Tables' batches ready and waiting for a statement in flight to land "
     "(CASINO_COMMIT_FLIGHTS), to go together in the next", ()),
    ("casino_lease_age_seconds", "Seconds since the oldest lease this process holds was last renewed (another "
     "process may take a table whose lease is older than casino_lease_seconds)", ()),
    ("casino_lease_seconds", "The lease period (CASINO_LEASE_SECONDS)", ()),
    ("casino_db_pool_max", "The most PostgreSQL connections this process's pool may hold (CASINO_DB_POOL; a "
     "worker of --workers N: its share of max_connections)", ()),
    ("casino_db_pool_connections", "PostgreSQL connections the pool holds now", ()),
    ("casino_db_pool_idle", "Of those, the ones not in use (0 with the pool at its max: work waits for one)", ()),
    ("casino_broker_publish_queue_frames", "Table frames not yet published to the other processes through the "
     "broker: waiting, and the burst on its way (0 in a single process)", ()),
    ("casino_fanout_waiting_frames", "Frames handed to some of their channel's subscribers here and waiting for "
     "a later turn of the event loop to reach the rest (a big frame to many sockets is paced: server.fanout); "
     "0 almost always", ()),
    ("casino_fanout_waiting_bytes", "Their bytes, each frame counted once", ()),
    ("casino_heartbeat_timestamp_seconds", "Unix time these gauges were read: at the scrape for a single "
     "process; with --workers, when the worker last wrote them (every second; the one answering, at the "
     "scrape). The freshest of a host's minus a worker's is how long that worker has not run", ()),
)

Samples = list[tuple[tuple[str, ...], float]]


def read_live(r: Resources) -> dict[str, Samples]:
    """Each live gauge's samples now, by name (``LIVE``): sockets and their send queues, the
    tables owned (by game kind), their command queues, the age of their leases, the
    database pool, the frames waiting for the broker and for the fan-out."""
    from server.kinds import KINDS  # (here: the kinds import the runtime, which imports this)

    depths = [s.out.qsize() for s in list(r.sockets)]
    manager = getattr(r, "manager", None)
    runtimes = [rt for rt in (manager.runtimes.values() if manager is not None else ()) if not rt.stopped]
    games = dict.fromkeys(KINDS, 0)  # every game kind of the build, 0 where none is owned
    for rt in runtimes:
        games[rt.kind.name] = games.get(rt.kind.name, 0) + 1
    queued = [rt.queue.qsize() for rt in runtimes]
    commits = getattr(r, "commits", None)
    now = time.monotonic()
    fanout = getattr(r.channels, "fanout", None)
    values: dict[str, float | Samples] = {
        "casino_ws_sockets_open": len(depths),
        "casino_ws_send_queue_frames": sum(depths),
        "casino_ws_send_queue_frames_max": max(depths, default=0),
        "casino_tables_owned": [((game,), n) for game, n in sorted(games.items())],
        "casino_table_queue_commands": sum(queued),
        "casino_table_queue_commands_max": max(queued, default=0),
        "casino_batches_waiting_commit": commits.waiting if commits is not None else 0,
        "casino_lease_age_seconds": max((now - rt.leased_at for rt in runtimes), default=0.0),
        "casino_lease_seconds": r.settings.lease_seconds,
        "casino_db_pool_max": r.pool.get_max_size(),
        "casino_db_pool_connections": r.pool.get_size(),
        "casino_db_pool_idle": r.pool.get_idle_size(),
        "casino_broker_publish_queue_frames": getattr(r.channels, "publish_queue", 0),
        "casino_fanout_waiting_frames": fanout.frames if fanout is not None else 0,
        "casino_fanout_waiting_bytes": fanout.bytes if fanout is not None else 0,
        "casino_heartbeat_timestamp_seconds": time.time(),
    }
    return {name: v if isinstance(v, list) else [((), float(v))] for name, v in values.items()}


class LiveCollector(Collector):
    """A single process's live gauges, read at each scrape: nothing on the hot path at all."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    def describe(self) -> Iterable[GaugeMetricFamily]:
        return [GaugeMetricFamily(name, help_, labels=list(labels)) for name, help_, labels in LIVE]

    def collect(self) -> Iterator[GaugeMetricFamily]:
        values = read_live(self.resources)
        for name, help_, labels in LIVE:
            family = GaugeMetricFamily(name, help_, labels=list(labels))
            for label_values, value in values[name]:
                family.add_metric(list(label_values), value)
            yield family


# ---- several processes: every worker's metrics at any worker's scrape -----------------------
# The supervisor of ``casino serve --workers N`` gives its workers a folder of their own
# (PROMETHEUS_MULTIPROC_DIR, read by prometheus_client at import): each process's counters
# and histograms live in files there, and a scrape of any worker reads them all (summed:
# a worker that exited still counts what it did). Its live gauges cannot be read from
# another process's objects, so each worker writes them there too, every SHARE_SECONDS and
# at each scrape it answers itself; each keeps its ``pid`` label (prometheus_client's
# ``liveall``: a worker that exits takes its gauges along, ``mark_process_dead``). The process
# figures less often: reading them counts the open files, 18 ms with 20,000 sockets open.
SHARE_SECONDS = 1.0
FIGURES_EVERY = 15  # shares


def shared_dir() -> str | None:
    """Where every worker's metrics files are (the supervisor's folder), or None: one process."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


class SharedGauges:
    """This worker's live gauges, its process figures (resident memory, CPU, open files;
    prometheus_client's ``process_*``) and ``casino_process_info``, in the shared files."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources
        self.gauges = {name: Gauge(name, help_, list(labels), registry=None, multiprocess_mode="liveall")
                       for name, help_, labels in LIVE}
        info = Gauge("casino_process_info", "1 for each live process, with its owner id (CASINO_OWNER_ID: "
                     "host:port/slot) beside its pid", ["owner"], registry=None, multiprocess_mode="liveall")
        info.labels(resources.settings.owner_id).set(1)
        self.process = ProcessCollector(registry=None)  # type: ignore[no-untyped-call]
        self.figures: dict[str, Gauge] = {}
        self.failing = False  # the last refresh of the chore raised (logged once a minute)

    def refresh(self, figures: bool = True) -> None:
        for name, samples in read_live(self.resources).items():
            gauge = self.gauges[name]
            for label_values, value in samples:
                (gauge.labels(*label_values) if label_values else gauge).set(value)
        if not figures:
            return
        for family in self.process.collect():
            for sample in family.samples:
                figure = self.figures.get(sample.name)
                if figure is None:
                    figure = self.figures[sample.name] = Gauge(sample.name, family.documentation, registry=None,
                                                               multiprocess_mode="liveall")
                figure.set(sample.value)

    def close(self) -> None:
        """This process stops: its gauges leave the scrapes (its counters stay in the sums)."""
        mark_process_dead(os.getpid(), shared_dir())


async def keep_sharing(shared: SharedGauges, every: float = SHARE_SECONDS) -> None:
    """The lifespan's chore with several processes: this worker's gauges at most ``every`` old
    at another worker's scrape (its process figures ``FIGURES_EVERY`` times that)."""
    shares = 0
    while True:
        await asyncio.sleep(every)
        shares += 1
        try:
            shared.refresh(figures=shares % FIGURES_EVERY == 0)
        except Exception:  # (a full disk under the folder): again at the next, the gauges kept as they were
            if shares % 60 == 1 or not shared.failing:
                log.exception("could not write this worker's gauges for the scrapes")
            shared.failing = True
        else:
            shared.failing = False


async def scrape(resources: Resources) -> bytes:
    """What ``GET /metrics`` answers: this process's registry, or with several processes
    every worker's files, this one's gauges refreshed first (its process figures as the
    chore last wrote them), read in a thread: reading and parsing every worker's files
    (those of workers that exited too) would hold the loop."""
    if resources.shared_metrics is None:
        return generate_latest(REGISTRY)
    resources.shared_metrics.refresh(figures=False)
    registry = CollectorRegistry()
    MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return await asyncio.to_thread(generate_latest, registry)


def watch(resources: Resources) -> LiveCollector | SharedGauges:
    """The process's live gauges from now on (the lifespan's; ``unwatch`` at its end): read
    at each scrape, or with several processes written to the shared files (then
    ``resources.shared_metrics``, which the lifespan keeps fresh with ``keep_sharing``)."""
    if shared_dir() is None:
        collector = LiveCollector(resources)
        REGISTRY.register(collector)
        return collector
    shared = resources.shared_metrics = SharedGauges(resources)
    shared.refresh()
    return shared


def unwatch(live: LiveCollector | SharedGauges) -> None:
    if isinstance(live, LiveCollector):
        REGISTRY.unregister(live)
    else:
        live.resources.shared_metrics = None
        live.close()
