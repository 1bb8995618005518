"""Inside locust's process: the floor ``loadtest.run`` set up (a JSON file named by
``CASINO_LOAD_FLOOR``), which account each new user plays with, and the timed login."""

from __future__ import annotations

import functools
import itertools
import json
import os
import time
from typing import Any

import requests

FLOOR_ENV = "CASINO_LOAD_FLOOR"
_counters: dict[str, itertools.count] = {}


@functools.cache
def floor() -> dict[str, Any]:
    path = os.environ.get(FLOOR_ENV)
    if not path:
        raise RuntimeError(f"{FLOOR_ENV} is not set: start the load test with `python -m loadtest.run`")
    with open(path) as f:
        return json.load(f)


def floor_or_empty() -> dict[str, Any]:
    """The floor, or an empty one where none was set up (locust imports the users to list
    them, and ``fixed_count`` is read at import)."""
    try:
        return floor()
    except RuntimeError:
        return {"roulette_live": {}, "roulette_rng": [], "blackjack_rng": {}, "blackjack_live": {}}


def take(pool: str) -> int:
    """0, 1, 2... per pool: which account or table the next user of a kind gets."""
    return next(_counters.setdefault(pool, itertools.count()))


def next_account(user: Any) -> str:
    """Croupiers take their own table's croupier; everyone else the next player account."""
    assigned = getattr(user, "croupier_account", None)
    if assigned:
        return assigned
    players = floor()["players"]
    return players[take("players") % len(players)]


def login(user: Any, account: str) -> str:
    """POST /auth/login, timed in locust's stats; the bearer token."""
    fire = user.environment.events.request.fire
    started = time.monotonic()
    exc: Exception | None = None
    token = ""
    try:
        r = requests.post(floor()["url"] + "/auth/login", json={"user": account, "password": floor()["password"]},
                          timeout=30)
        r.raise_for_status()
        token = r.json()["token"]
    except Exception as e:  # recorded, then raised: a user that cannot log in stops
        exc = e
    fire(request_type="HTTP", name="POST /auth/login", response_time=(time.monotonic() - started) * 1000,
         response_length=len(token), exception=exc, context={})
    if exc is not None:
        raise exc
    return token
