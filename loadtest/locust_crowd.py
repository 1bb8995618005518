"""Locust's crowd (issue 14): every player at one live wheel placing ``CASINO_CROWD_BETS``
straight bets per spin over a ``CASINO_CROWD_WINDOW`` s betting window, and its croupier.

    .venv/bin/python -m loadtest.run --crowd --users 101 --bets 5 --window 15

Each locust user is a gevent greenlet that decodes every frame and times every event it
receives, so one locust process holds a few hundred such players at most on this machine;
the 2,000-player figure comes from ``python -m loadtest.bench_server crowd`` (asyncio +
uvloop drivers that only read each frame's head).
"""

from __future__ import annotations

from loadtest.locust_roulette import CrowdCroupier, CrowdPlayer

__all__ = ["CrowdCroupier", "CrowdPlayer"]
