"""``casino serve``: run the server (uvicorn with uvloop) on DATABASE_URL or the embedded PostgreSQL;
with ``--workers N`` (N > 1), N of them behind a supervisor (``server.supervisor``)."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import socket

from server import logs

log = logging.getLogger("casino")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=os.environ.get("CASINO_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("CASINO_PORT", "8000")))
    parser.add_argument("--no-demo", action="store_true",
                        help="do not create the demo tables and accounts on a fresh database")
    # No "trace": uvicorn then dumps whole ASGI scopes, headers (tokens) included.
    parser.add_argument("--log-level", choices=logs.LEVELS, type=str.lower,
                        default=os.environ.get("CASINO_LOG_LEVEL", "info").lower())
    parser.add_argument("--log-format", choices=logs.FORMATS, type=str.lower,
                        default=os.environ.get("CASINO_LOG_FORMAT", "text").lower(),
                        help="text lines, or one JSON object per line (time, level, logger, message)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also the embedded PostgreSQL's own output (initdb, pg_ctl)")
    parser.add_argument("--no-access-log", action="store_true", help="no line per HTTP request")
    parser.add_argument("--no-migrate", action="store_true",
                        help="leave the database schema alone: refuse to start while it is behind this build "
                             "(`casino db migrate` brings it up to date)")
    parser.add_argument("--workers", type=_positive, default=os.environ.get("CASINO_WORKERS", "1"),
                        help="server processes on the one host and port (default 1, or CASINO_WORKERS); more than "
                             "one: a supervisor starts them and restarts a crashed one, their broker is REDIS_URL "
                             "or the embedded Redis (docs/operations.md, Several processes)")
    parser.add_argument("--worker-ports", type=_port, default=_worker_ports(),
                        help="with --workers N: each worker also listens on a port of its own, BASE, BASE+1, ... "
                             "(0: ports the system chooses; or CASINO_WORKER_PORTS), and the lobby sends a table's "
                             "players there, to its owner (CASINO_WS_URL says how to name it: docs/operations.md, "
                             "Placing sockets)")
    # A worker of `--workers N`: serve the listening socket its supervisor bound and passed on
    # (and with --worker-ports, its own).
    parser.add_argument("--fd", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--own-fd", type=int, default=None, help=argparse.SUPPRESS)


def _worker_ports() -> int | None:
    text = os.environ.get("CASINO_WORKER_PORTS")
    return _port(text) if text else None


def _port(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 0 <= n <= 65535:
        raise argparse.ArgumentTypeError(f"want a port number (0: the system chooses), not {text!r}")
    return n


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"want a whole number of at least 1, not {text!r}")
    return n


def serve(args: argparse.Namespace, *, bots: bool) -> int:
    if args.workers > 1 and args.fd is None:
        from server import supervisor

        return supervisor.run(args, bots=bots)
    config = logs.setup(args.log_format, args.log_level, args.verbose)
    if args.fd is None:  # one process alone: a CASINO_WS_URL template names its own host and port
        if args.worker_ports is not None:
            log.warning("--worker-ports is for --workers N: one process takes its websockets on --port")
        template = os.environ.get("CASINO_WS_URL")
        if template and "{" in template:
            from server.supervisor import worker_ws_url

            try:
                os.environ["CASINO_WS_URL"] = worker_ws_url(template, args.host, args.port, 0)
            except ValueError as exc:
                log.error("not starting: %s", exc)
                return 1
    import uvicorn

    from games.db import embedded
    from server.app import create_app
    from server.config import Settings
    from server.ws.direct import KeepSend

    # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again; with
    # SIGTERM's default action the process would die right there, before anything below
    # or at exit runs, and the embedded PostgreSQL would keep running. As KeyboardInterrupt
    # (which uvicorn.run swallows) both end here.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # A restart on the same host and port takes its tables back at once; other processes
    # (other ports or hosts) wait for the lease to run out before taking over. A worker of
    # `--workers N` gets <host>:<port>/<slot> from its supervisor.
    owner = os.environ.get("CASINO_OWNER_ID") or f"{socket.gethostname()}:{args.port}"
    try:
        settings = Settings.from_env(owner_id=owner, demo=not args.no_demo, bots=bots,
                                     public_url=f"http://{args.host}:{args.port}")
        if args.no_migrate and not _schema_is_current(settings.database_url or embedded.database_url()):
            return 1
        app = create_app(settings)

        async def ready(app_) -> None:  # the one start-up line (the table manager logs the tables)
            if args.fd is not None:  # a worker: its supervisor said where and on what
                log.info("worker %s ready (pid %d)", owner, os.getpid())
                return
            url = os.environ.get("DATABASE_URL")
            where = embedded.describe(url) if url else f"embedded PostgreSQL in {embedded.data_dir()}"
            log.info("ready on http://%s:%d (database: %s)", args.host, args.port, where)

        app.on_startup.append(ready)
        # Thousands of sockets make a big, long-lived heap; at the default thresholds the cyclic
        # collector keeps sweeping it and stalls every broadcast (issue 7: delivery p99 to 5,000
        # sockets fell from about 1.6 s to 0.7 s). Freeze what start-up built, collect less often.
        gc.freeze()
        gc.set_threshold(100_000, 20, 100)
        # log_config: uvicorn applies it after the app is built, over Litestar's own default.
        options = dict(loop="uvloop", ws="websockets-sansio", ws_max_size=1024 * 1024, ws_ping_interval=20,
                       ws_ping_timeout=20, ws_per_message_deflate=settings.ws_deflate, log_config=config,
                       log_level=args.log_level,
                       access_log=not args.no_access_log, lifespan="on")
        served = KeepSend(app)  # (a table's frames straight to the sockets' transports: server.ws.direct)
        if args.fd is None:
            uvicorn.run(served, host=args.host, port=args.port, **options)
        else:
            # uvicorn's own fd= takes any descriptor for a unix socket; this one is TCP (the
            # family is read from the descriptor), served as uvicorn serves its own workers.
            server = uvicorn.Server(uvicorn.Config(served, host=args.host, port=args.port, **options))
            sockets = [socket.socket(fileno=fd) for fd in (args.fd, args.own_fd) if fd is not None]
            server.run(sockets=sockets)
            if not server.started:
                return 3  # uvicorn's STARTUP_FAILURE, as uvicorn.run exits
    except KeyboardInterrupt:  # a signal before uvicorn took over, or during its start
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second signal must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        embedded.release_all()  # stops the embedded PostgreSQL if no other process uses it
        log.info("stopped" if args.fd is None else f"worker {owner} stopped")
    return 0


def _schema_is_current(url: str) -> bool:
    """Whether every migration of this build is recorded in the database at ``url`` (read
    only: with it, the app's own ``migrate`` at start finds nothing to do and changes nothing)."""
    import asyncio

    import asyncpg

    from games.db.migrate import SchemaBehind, require_current
    from server.store import SCHEMA

    async def check() -> None:
        conn = await asyncpg.connect(url)
        try:
            await require_current(conn, SCHEMA)
        finally:
            await conn.close()

    try:
        asyncio.run(check())
    except SchemaBehind as exc:
        log.error("not starting (--no-migrate): %s", exc)
        return False
    return True


def run(args: argparse.Namespace) -> int:
    return serve(args, bots=False)
