"""Locust users for the casino: roulette and blackjack players, observers, croupiers (the
roulette and blackjack users live in ``locust_roulette`` and ``locust_blackjack``; locust
runs every User class this module holds).

Start it with ``python -m loadtest.run`` (which sets up a server, the floor and this file);
every user speaks the real websocket protocol through ``loadtest.locust_ws``.

Rejections listed as ``ok_codes`` are the table's clock winning a race (a bet arriving as
the ball drops, a decision after its time-out): real players meet them too, so they are
counted as ``... refused:<code>`` successes. Any other rejection is a failure.
"""

from __future__ import annotations

import random

from locust import between, task

from loadtest.locust_blackjack import BlackjackCroupier, BlackjackPlayer
from loadtest.locust_roulette import RouletteCroupier, RoulettePlayer
from loadtest.locust_ws import CasinoWsUser

__all__ = ["BlackjackCroupier", "BlackjackPlayer", "Observer", "RouletteCroupier", "RoulettePlayer"]


class Observer(CasinoWsUser):
    """Follows a few tables and only watches; a ping now and then (round trip, no table)."""

    weight = 2
    wait_time = between(1, 3)

    def on_start(self) -> None:
        super().on_start()
        f = self.floor
        tables = (list(f["roulette_live"]) + list(f["roulette_rng"]) + list(f["blackjack_rng"])
                  + list(f["blackjack_live"]))
        for table in random.sample(tables, k=min(3, len(tables))):
            self.sock.subscribe(table)

    @task
    def watch(self) -> None:
        while self.next_frame(0) is not None:  # drain: the reader already timed every event
            pass
        self.sock.command("ping", {"type": "ping"})
