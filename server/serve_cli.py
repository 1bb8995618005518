"""``casino serve``: run the server (uvicorn with uvloop) on DATABASE_URL or the embedded PostgreSQL."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import socket


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=os.environ.get("CASINO_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("CASINO_PORT", "8000")))
    parser.add_argument("--no-demo", action="store_true",
                        help="do not create the demo tables and accounts on a fresh database")
    parser.add_argument("--log-level", default="info")


def serve(args: argparse.Namespace, *, bots: bool) -> int:
    import uvicorn

    from server.app import create_app
    from server.config import Settings

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the demo bots' requests
    # A restart on the same host and port takes its tables back at once; other processes
    # (other ports or hosts) wait for the lease to run out before taking over.
    owner = os.environ.get("CASINO_OWNER_ID") or f"{socket.gethostname()}:{args.port}"
    settings = Settings.from_env(owner_id=owner, demo=not args.no_demo, bots=bots,
                                 public_url=f"http://{args.host}:{args.port}")
    app = create_app(settings)
    # Thousands of sockets make a big, long-lived heap; at the default thresholds the cyclic
    # collector keeps sweeping it and stalls every broadcast (issue 7: delivery p99 to 5,000
    # sockets fell from about 1.6 s to 0.7 s). Freeze what start-up built, collect less often.
    gc.freeze()
    gc.set_threshold(100_000, 20, 100)
    uvicorn.run(app, host=args.host, port=args.port, loop="uvloop", ws="websockets-sansio",
                ws_max_size=1024 * 1024, ws_ping_interval=20, ws_ping_timeout=20,
                log_level=args.log_level, lifespan="on")
    return 0


def run(args: argparse.Namespace) -> int:
    return serve(args, bots=False)
