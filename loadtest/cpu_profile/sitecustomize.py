"""Put on a server's ``PYTHONPATH`` by ``bench_server profile --cpu``: with
``CASINO_CPU_PROFILE`` set, SIGUSR1 starts cProfile on the process's CPU clock
(``time.process_time``) and the next SIGUSR1 stops it and writes the stats to
``$CASINO_CPU_PROFILE.<pid>``.

py-spy samples the wall clock: a thread that is runnable but not running (a write that woke
PostgreSQL, which then took the core) counts where it stopped. This counts what the process
spent on a core, function by function, at the cost of slowing every Python call (the shares
of many small calls are inflated against few big ones)."""

import os
import signal
import sys

_OUT = os.environ.get("CASINO_CPU_PROFILE")
if _OUT:
    import cProfile
    import time

    _profile = cProfile.Profile(time.process_time)
    _running = False

    def _toggle(signum: int, frame: object) -> None:
        # (Python runs the handler in the main thread, the event loop's, between two of its
        # bytecodes: an exception here would surface in whatever the server was doing.)
        global _running
        try:
            if _running:
                _running = False
                _profile.disable()
                _profile.dump_stats(f"{_OUT}.{os.getpid()}")
            else:
                _running = True
                _profile.enable()
        except Exception as exc:
            print(f"cpu profile: {exc!r}", file=sys.stderr, flush=True)

    signal.signal(signal.SIGUSR1, _toggle)
