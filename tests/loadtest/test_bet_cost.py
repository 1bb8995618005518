"""A bet's CPU counted in the echo's round trips (``peak``'s cost line): each group's CPU a
bet against all of the echo's CPU a round trip, and the ratios those costs allow."""

from __future__ import annotations

import math

import pytest

from loadtest.bench_measure import cpu_per_operation, cpu_used, in_echo_round_trips
from loadtest.bench_server import bet_cost, half_cost

# 1,000 round trips: the server and the driver 50 ms each, so 100 µs a round trip in all.
ECHO = {"done": 1000, "cpu_s": {"server": 0.05, "postgres": 0.0, "redis": 0.0, "driver": 0.05, "other": 0.4}}
# 100 bets: the server and PostgreSQL 30 ms each, the driver 10 ms: 700 µs a bet in all.
BETS = {"done": 100, "cpu_s": {"server": 0.03, "postgres": 0.03, "redis": 0.0, "driver": 0.01, "other": 0.9}}


def test_each_group_in_round_trips_of_the_whole_echo() -> None:
    # The machine's other jobs ("other") count in neither phase.
    assert in_echo_round_trips(ECHO, BETS) == {"server": pytest.approx(3.0), "postgres": pytest.approx(3.0),
                                               "redis": 0.0, "driver": pytest.approx(1.0),
                                               "all": pytest.approx(7.0)}


def test_the_ratios_those_costs_allow() -> None:
    # 1 / 7 on the same cores; without the server's 3, 1 / 4.
    assert bet_cost(ECHO, BETS) == ("a bet's CPU in echo round trips: server 3.0, PostgreSQL 3.0, Redis 0.0, "
                                    "driver 1.0; 7.0 in all: a ratio of 0.14 at this CPU use, 0.25 were the "
                                    "server's free")


def test_the_peaks_rounds_are_taken_together() -> None:
    # Two peak rounds: 100 bets for 70 ms and 300 bets for 90 ms, so 160 ms over 400 bets,
    # 400 µs a bet (not the last round's 300 µs); at half load 100 bets for 60 ms, 600 µs.
    rounds = [BETS, {"done": 300, "cpu_s": {"server": 0.04, "postgres": 0.04, "redis": 0.0, "driver": 0.01,
                                            "other": 5.0}}]
    assert cpu_per_operation(*rounds) == pytest.approx(0.0004)
    half = {"done": 100, "cpu_s": {"server": 0.02, "postgres": 0.03, "redis": 0.0, "driver": 0.01, "other": 0.0}}
    assert half_cost(half, rounds) == pytest.approx(1.5)


def test_a_phase_that_did_nothing_gives_no_figure() -> None:
    idle = {"done": 0, "cpu_s": dict.fromkeys(("server", "postgres", "redis", "driver", "other"), 0.1)}
    assert math.isnan(cpu_per_operation(idle))
    assert all(math.isnan(v) for v in in_echo_round_trips(ECHO, idle).values())
    assert all(math.isnan(v) for v in in_echo_round_trips(idle, BETS).values())
    assert math.isnan(half_cost(idle, [BETS])) and math.isnan(half_cost(BETS, [idle]))
    assert bet_cost(idle, BETS).endswith("nan in all: a ratio of nan at this CPU use, nan were the server's free")


def test_cpu_is_counted_per_process_between_the_readings() -> None:
    before = {1: ("server", 10.0), 2: ("postgres", 5.0), 3: ("postgres", 7.0)}
    # 1 used 2 s more; 2 ended (missing, not subtracted); 3 used 1 s; 4 started (all of its 0.5 s);
    # 5's pid was reused by another group's process (all of it).
    after = {1: ("server", 12.0), 3: ("postgres", 8.0), 4: ("driver", 0.5), 5: ("other", 3.0)}
    before[5] = ("driver", 2.0)
    assert cpu_used(before, after) == {"server": 2.0, "postgres": 1.0, "redis": 0.0, "driver": 0.5, "other": 3.0}
