"""The benchmark's reading of the server's own histograms: bucket counts summed over labels,
the observations between two scrapes, the buckets holding their median and 99th percentile."""

from __future__ import annotations

import math

import pytest

from loadtest.bench_measure import SUM, histogram_summary, scrape_histograms


def _scrape(roulette: list[int], blackjack: list[int]) -> str:
    """casino_commit_seconds with buckets 0.005, 0.01, 0.05, +Inf (cumulative counts)."""
    lines = ["# HELP casino_commit_seconds Writing one batch", "# TYPE casino_commit_seconds histogram"]
    for game, counts in (("roulette", roulette), ("blackjack", blackjack)):
        for le, n in zip(("0.005", "0.01", "0.05", "+Inf"), counts, strict=True):
            lines.append(f'casino_commit_seconds_bucket{{game="{game}",le="{le}"}} {n}.0')
        lines.append(f'casino_commit_seconds_count{{game="{game}"}} {counts[-1]}.0')
        lines.append(f'casino_commit_seconds_sum{{game="{game}"}} {counts[-1] * 0.01}')
    return "\n".join(lines) + "\n"


def test_the_buckets_are_summed_over_the_games() -> None:
    got = scrape_histograms(_scrape([1, 2, 3, 3], [0, 0, 1, 2]))["casino_commit_seconds"]
    assert got == {0.005: 1, 0.01: 2, 0.05: 4, math.inf: 5, SUM: pytest.approx(0.05)}


def test_only_the_observations_between_the_scrapes_count() -> None:
    before = scrape_histograms(_scrape([50, 90, 100, 100], [0, 0, 0, 0]))["casino_commit_seconds"]
    # Then 100 more: 10 under 5 ms, 40 more under 10 ms, 49 under 50 ms, 1 beyond.
    after = scrape_histograms(_scrape([60, 140, 199, 200], [0, 0, 0, 0]))["casino_commit_seconds"]
    # (each scrape's sum: 10 ms an observation, so 1.0 s more over the 100)
    assert histogram_summary(before, after) == {"count": 100, "mean": pytest.approx(0.01), "p50_le": 0.01,
                                                "p99_le": 0.05, "max_le": math.inf}
    assert histogram_summary({}, after)["count"] == 200
    nothing = histogram_summary(after, after)
    assert nothing["count"] == 0 and all(math.isnan(nothing[k]) for k in ("mean", "p50_le", "p99_le", "max_le"))


def test_a_tail_beyond_the_last_bound_is_infinite() -> None:
    after = scrape_histograms(_scrape([0, 0, 90, 100], [0, 0, 0, 0]))["casino_commit_seconds"]
    assert histogram_summary({}, after) == {"count": 100, "mean": pytest.approx(0.01), "p50_le": 0.05,
                                            "p99_le": math.inf, "max_le": math.inf}


def test_the_largest_observation_s_bucket() -> None:
    after = scrape_histograms(_scrape([0, 70, 100, 100], [0, 0, 0, 0]))["casino_commit_seconds"]
    assert histogram_summary({}, after)["max_le"] == 0.05
