"""``casino serve --workers N`` (N > 1): one supervisor process and N server processes.

The supervisor does once what the workers share: it resolves the database (``DATABASE_URL``,
else it starts or joins the embedded PostgreSQL) and the broker (``REDIS_URL``, else it
starts or joins the embedded Redis, ``server.redis_embedded``), migrates the schema, and
binds the listening socket. Then it starts N workers, each ``casino serve --fd <fd>
--no-migrate`` (the hidden ``--fd``: uvicorn serves the inherited socket, so every worker
accepts on the one host and port and the kernel spreads the connections), with
``DATABASE_URL``, ``REDIS_URL`` and ``CASINO_OWNER_ID=<host>:<port>/<slot>``: a worker
restarted in its slot is the same owner and takes its tables back at once, without waiting
for their leases to run out. Only slot 0 seeds the demo floor (and runs ``casino demo``'s
bots).

With ``--worker-ports BASE`` each worker also serves a listening socket of its own, bound
here once per slot (BASE + slot; 0: a port the system chooses) so that a restart keeps it,
and is told its websocket URL (``CASINO_WS_URL``, a template with ``{host}``, ``{port}``
and ``{slot}``; ``ws://{host}:{port}/ws`` by default), which it advertises: the lobby sends
a table's players to its owner's (SCALING.md, placing sockets).

A worker that exits unexpectedly (a crash, a kill -9) is started again in its slot after a
short backoff (0.5 s, doubling with each further exit of the slot within a minute); a slot
that exits ``CRASH_LIMIT`` times within ``CRASH_WINDOW`` seconds is crash-looping, and the
supervisor stops everything and exits 1 instead of spinning. On SIGTERM or SIGINT it sends
SIGTERM to every worker (each closes its tables and hands their leases over), kills those
still running after ``STOP_SECONDS`` (at once on a second signal), then stops the embedded
Redis it started and lets go of the embedded PostgreSQL, and exits 0.

The workers' metrics are in one folder of the supervisor's (``PROMETHEUS_MULTIPROC_DIR``, a
fresh one under the system's temporary folder, named with its pid, removed at the stop; the
next start removes one whose supervisor died): a scrape of any worker answers for every
worker (``server.metrics``); a worker that exits takes its gauges along.

Workers live in a process group of their own (a terminal's Ctrl-C reaches the supervisor
only, which stops them in order) and, on Linux, get SIGTERM if the supervisor dies.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from games.db.pool import POOL_MAX
from server import logs

log = logging.getLogger("casino")

BACKOFF_SECONDS = 0.5  # before the first restart of a slot; doubles with each further exit
BACKOFF_MAX_SECONDS = 10.0
CRASH_WINDOW = 60.0
CRASH_LIMIT = 5  # exits of one slot within CRASH_WINDOW: it crash-loops, give up
STOP_SECONDS = 30.0  # a worker's graceful stop, before it is killed
BACKLOG = 2048  # uvicorn's default
WS_URL = "ws://{host}:{port}/ws"  # a worker's websocket URL where CASINO_WS_URL gives no template
METRICS_PREFIX = "casino-metrics-"  # + the supervisor's pid: its workers' metrics folder, in the temporary one


@dataclass
class Slot:
    index: int
    owner: str
    own: socket.socket | None = None  # its own listening socket (--worker-ports)
    ws_url: str | None = None  # where it takes websockets of its own (CASINO_WS_URL)
    proc: subprocess.Popen[bytes] | None = None
    due: float = 0.0  # monotonic time of its next start, while proc is None
    exits: list[float] = field(default_factory=list)  # monotonic times of its recent exits


class Supervisor:
    def __init__(self, args: argparse.Namespace, *, bots: bool) -> None:
        self.args = args
        self.bots = bots
        self.stopping = False
        self.hurry = False  # a second signal: kill the workers now
        self.slots: list[Slot] = []
        self.listener: socket.socket | None = None
        self.env: dict[str, str] = {}
        self.pool = POOL_MAX  # each worker's database connections (set from the database in _schema)
        self.metrics_dir: str | None = None  # every worker's metrics files (PROMETHEUS_MULTIPROC_DIR)

    # ---- signals ----------------------------------------------------------------------------

    def _signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            self.hurry = True
        self.stopping = True

    def _stop_requested(self) -> bool:
        """A signal came (a call, not the attribute: the handler sets it at any line)."""
        return self.stopping

    # ---- the run ----------------------------------------------------------------------------

    def run(self) -> int:
        from games.db import embedded
        from server import redis_embedded

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._signal)
        # The workers' metrics folder is the supervisor's own (before anything here imports
        # prometheus_client, which would write its files in one found in the environment).
        if os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None):
            log.warning("PROMETHEUS_MULTIPROC_DIR is ignored: the workers' metrics are in a folder of the "
                        "supervisor's own")
        sweep_metrics_dirs()
        started_redis: Path | None = None
        try:
            database_url = os.environ.get("DATABASE_URL") or None
            db_where = embedded.describe(database_url) if database_url else \
                f"embedded PostgreSQL in {embedded.data_dir()}"
            if database_url is None:
                database_url = embedded.start_embedded()
            if self._stop_requested():
                return 0
            if not self._schema(database_url):
                return 1
            redis_url = os.environ.get("REDIS_URL") or None
            if redis_url is not None:
                broker = redis_embedded.describe(redis_url)
                if not redis_embedded.answers(redis_url, timeout=3):
                    log.error("not starting: the broker (REDIS_URL %s) does not answer", broker)
                    return 1
            else:
                folder = redis_embedded.redis_dir()
                try:
                    redis_url = redis_embedded.start_redis(folder)
                except redis_embedded.EmbeddedRedisError as exc:
                    log.error("not starting: %s", exc)
                    return 1
                started_redis = folder
                broker = f"embedded Redis on {redis_url}"
            if self._stop_requested():
                return 0
            try:
                self.listener = _listen(self.args.host, self.args.port)
            except OSError as exc:
                log.error("not starting: cannot listen on %s:%d: %s", self.args.host, self.args.port, exc)
                return 1
            port = self.listener.getsockname()[1]  # --port 0: the one the system chose
            base = os.environ.get("CASINO_OWNER_ID") or f"{socket.gethostname()}:{port}"
            self.metrics_dir = tempfile.mkdtemp(prefix=f"{METRICS_PREFIX}{os.getpid()}-")
            self.env = {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": redis_url,
                        "CASINO_DB_POOL": str(self.pool), "PROMETHEUS_MULTIPROC_DIR": self.metrics_dir}
            self.slots = [Slot(i, f"{base}/{i}") for i in range(self.args.workers)]
            try:
                self._placement(port)
            except (OSError, OverflowError) as exc:
                log.error("not starting: cannot listen on the workers' own ports: %s", exc)
                return 1
            except ValueError as exc:
                log.error("not starting: %s", exc)
                return 1
            for slot in self.slots:
                self._start(slot, port)
            log.info("%d workers on http://%s:%d (database: %s, broker: %s)",
                     len(self.slots), self.args.host, port, db_where, broker)
            log.info("GET /metrics on any of them answers for all (their files in %s)", self.metrics_dir)
            return self._watch(port)
        finally:
            self._stop_workers()
            if self.listener is not None:
                self.listener.close()
            for slot in self.slots:
                if slot.own is not None:
                    slot.own.close()
            if self.metrics_dir is not None:
                shutil.rmtree(self.metrics_dir, ignore_errors=True)
            if started_redis is not None:
                redis_embedded.stop_redis(started_redis)
            embedded.release_all()  # stops the embedded PostgreSQL if no other process uses it
            log.info("stopped")

    def _placement(self, port: int) -> None:
        """Each slot's websocket URL: with --worker-ports, at a listening socket of its own
        (bound once, kept across its restarts); else, where CASINO_WS_URL names one, the
        host's (``{port}``: the shared one), which places a player on the right host."""
        base = self.args.worker_ports
        template = os.environ.get("CASINO_WS_URL")
        if base is None and not template:
            return
        if base is None and template and "{slot}" in template:
            raise ValueError("CASINO_WS_URL names each worker ({slot}) but the workers share one port: "
                             "give them ports of their own (--worker-ports)")
        if base is not None and base + len(self.slots) - 1 > 65535:
            raise ValueError(f"--worker-ports {base}: {len(self.slots)} workers need ports up to "
                             f"{base + len(self.slots) - 1}, past 65535")
        host = self.args.host if self.args.host not in ("0.0.0.0", "::", "") else socket.gethostname()
        template = template or WS_URL
        worker_ws_url(template, host, 1, 0)  # (a bad template: ValueError before any port is bound)
        for slot in self.slots:
            if base is not None:
                slot.own = _listen(self.args.host, base + slot.index if base else 0)
            own_port = slot.own.getsockname()[1] if slot.own is not None else port
            slot.ws_url = worker_ws_url(template, host, own_port, slot.index)
            log.info("worker %d takes its players' websockets at %s", slot.index, slot.ws_url)

    def _schema(self, url: str) -> bool:
        """Migrate once for every worker (they start with --no-migrate; with --no-migrate,
        only check that the schema is current), and size each worker's pool from the
        database's connections (``self.pool``)."""
        import asyncio

        import asyncpg

        from games.db.migrate import MigrationError, migrate
        from games.db.pool import connection_limits
        from server.serve_cli import _schema_is_current
        from server.store import SCHEMA

        if self.args.no_migrate and not _schema_is_current(url):
            return False

        async def apply() -> None:
            conn = await asyncpg.connect(url)
            try:
                if not self.args.no_migrate:
                    await migrate(conn, SCHEMA)  # logs what it applied
                limit, reserved = await connection_limits(conn)
            finally:
                await conn.close()
            self.pool = _pool_for_workers(limit, reserved, self.args.workers)

        try:
            asyncio.run(apply())
        except ValueError as exc:  # CASINO_DB_POOL
            log.error("not starting: %s", exc)
            return False
        except (MigrationError, OSError, asyncpg.PostgresError) as exc:
            what = "reading" if self.args.no_migrate else "migrating"
            log.error("not starting: %s the database failed: %s", what, exc)
            return False
        return True

    def _watch(self, port: int) -> int:
        """Restart workers that exit until a signal (0) or a crash loop (1)."""
        while not self.stopping:
            now = time.monotonic()
            for slot in self.slots:
                if slot.proc is not None and (code := slot.proc.poll()) is not None:
                    slot.exits = [t for t in slot.exits if now - t < CRASH_WINDOW] + [now]
                    if len(slot.exits) >= CRASH_LIMIT:
                        log.error("worker %d (pid %d) %s: %d exits within %.0f s, it crash-loops; "
                                  "stopping every worker", slot.index, slot.proc.pid, _how(code),
                                  len(slot.exits), CRASH_WINDOW)
                        slot.proc = None
                        return 1
                    delay = min(BACKOFF_SECONDS * 2 ** (len(slot.exits) - 1), BACKOFF_MAX_SECONDS)
                    log.warning("worker %d (pid %d) %s; restarting it in %.1f s",
                                slot.index, slot.proc.pid, _how(code), delay)
                    self._forget(slot.proc.pid)
                    slot.proc, slot.due = None, now + delay
                if slot.proc is None and now >= slot.due:
                    self._start(slot, port)
            time.sleep(0.05)
        return 0

    def _forget(self, pid: int) -> None:
        """A worker that exited: its gauges leave the scrapes (a crash could not remove them
        itself); its counters stay in the sums."""
        from prometheus_client.multiprocess import mark_process_dead

        if self.metrics_dir is not None:
            mark_process_dead(pid, self.metrics_dir)

    def _start(self, slot: Slot, port: int) -> None:
        assert self.listener is not None
        a = self.args
        command = "demo" if self.bots and slot.index == 0 else "serve"
        argv = [sys.executable, "-m", "server.cli", command, "--fd", str(self.listener.fileno()),
                "--workers", "1", "--no-migrate", "--host", a.host, "--port", str(port),
                "--log-level", a.log_level, "--log-format", a.log_format]
        argv += ["--no-access-log"] if a.no_access_log else []
        argv += ["-v"] if a.verbose else []
        argv += ["--no-demo"] if a.no_demo or slot.index > 0 else []
        env = {**self.env, "CASINO_OWNER_ID": slot.owner}
        fds = [self.listener.fileno()]
        if slot.own is not None:
            argv += ["--own-fd", str(slot.own.fileno())]
            fds.append(slot.own.fileno())
        env.pop("CASINO_WS_URL", None)  # (a template, for the supervisor)
        if slot.ws_url is not None:
            env["CASINO_WS_URL"] = slot.ws_url
        slot.proc = subprocess.Popen(argv, env=env, pass_fds=fds, stdin=subprocess.DEVNULL,
                                     process_group=0, preexec_fn=_die_with(os.getpid()))
        log.info("worker %d started: pid %d, owner %s", slot.index, slot.proc.pid, slot.owner)

    def _stop_workers(self) -> None:
        live = [s for s in self.slots if s.proc is not None and s.proc.poll() is None]
        if not live:
            return
        log.info("stopping %d worker%s", len(live), "s" if len(live) > 1 else "")
        for slot in live:
            assert slot.proc is not None
            slot.proc.terminate()
        deadline = time.monotonic() + STOP_SECONDS
        while time.monotonic() < deadline and not self.hurry and \
                any(s.proc is not None and s.proc.poll() is None for s in live):
            time.sleep(0.05)
        for slot in live:
            assert slot.proc is not None
            if slot.proc.poll() is None:
                log.warning("worker %d (pid %d) still running%s: killed", slot.index, slot.proc.pid,
                            "" if self.hurry else f" after {STOP_SECONDS:.0f} s")
                slot.proc.kill()
            slot.proc.wait()


def sweep_metrics_dirs() -> None:
    """The metrics folders of supervisors that died without removing theirs (kill -9, the OOM
    killer): each is named with its supervisor's pid."""
    from games.db.pids import alive

    for folder in Path(tempfile.gettempdir()).glob(f"{METRICS_PREFIX}*-*"):
        pid = folder.name[len(METRICS_PREFIX):].split("-", 1)[0]
        if folder.is_dir() and pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _listen(host: str, port: int) -> socket.socket:
    """The one listening socket every worker accepts on."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def worker_ws_url(template: str, host: str, port: int, slot: int) -> str:
    """A worker's websocket URL from ``CASINO_WS_URL``'s template (``{host}``, ``{port}``,
    ``{slot}``; an IPv6 host in brackets); ValueError for a template that is not one."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    try:
        url = template.format(host=host, port=port, slot=slot)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"CASINO_WS_URL {template!r} is not a template of {{host}}, {{port}} and {{slot}}: "
                         f"{exc!r}") from None
    if not url.startswith(("ws://", "wss://")):
        raise ValueError(f"CASINO_WS_URL {template!r} does not name a websocket URL (ws:// or wss://)")
    return url


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _die_with(parent: int):  # type: ignore[no-untyped-def]
    """In the child before exec: SIGTERM when the supervisor dies (Linux), so a kill -9 of
    the supervisor leaves no worker behind."""
    def preexec() -> None:
        if sys.platform.startswith("linux"):
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
            if os.getppid() != parent:  # it died before the line above
                os._exit(1)
    return preexec


def run(args: argparse.Namespace, *, bots: bool) -> int:
    logs.setup(args.log_format, args.log_level, args.verbose)
    return Supervisor(args, bots=bots).run()


def _pool_for_workers(max_connections: int, reserved: int, workers: int) -> int:
    """Each worker's pool size: ``CASINO_DB_POOL`` where the operator set it, else its share of
    the database's connections (``pool_share``); a warning where they cannot all fit."""
    from games.db.pool import HEADROOM, connections_fit, parse_pool_size, pool_share

    chosen = os.environ.get("CASINO_DB_POOL")
    size = parse_pool_size(chosen) if chosen else pool_share(max_connections, reserved, workers)
    if not connections_fit(max_connections, reserved, workers, size):
        log.warning("%d workers x %d database connections (and each its LISTEN connection) leave less than %d of "
                    "the server's %d (max_connections): raise it, or run fewer workers",
                    workers, size, HEADROOM, max_connections)
    else:
        log.info("database pool: %d connections per worker (max_connections %d)", size, max_connections)
    return size
