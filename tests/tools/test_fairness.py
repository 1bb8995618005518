"""The RNG and the shuffle under statistical test, the small fixed-seed form (FAIRNESS.md;
the long form on the system CSPRNG is ``python -m tools.fairness``).

Seeded, so every p-value here is the same on every run: the thresholds are not flaky. The
tests with teeth show that the same N rejects a biased draw and a biased shuffle."""

from __future__ import annotations

import hashlib
import hmac
import math
import random
from types import SimpleNamespace

import pytest

import games.rng
import roulette.draw
import roulette.fair
from games.cards import full_shoe
from games.rng import SeededRng, SystemRng
from server.kinds import roulette as roulette_kind
from server.kinds import shoe_secret
from tools.fairness import (
    chi2_sf,
    chi_square_uniform,
    committed_spin,
    fisher_combined,
    ks_uniform,
    shoe_test,
    spin_test,
)

SPINS = 100_000
SHOES = 2_000
SEED = 17
PASS = 1e-3  # a fair source passes (the seed fixes the p-value: no flakes)
REJECT = 1e-6  # a biased one is rejected


# -- the distributions --------------------------------------------------------------------------


def test_chi2_survival_matches_known_values():
    for x in (0.1, 1.0, 5.0, 30.0, 200.0):  # closed forms for 1 and 2 degrees of freedom
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
    # the tables' critical values for 36 degrees of freedom
    assert chi2_sf(50.998, 36) == pytest.approx(0.05, rel=1e-3)
    assert chi2_sf(67.985, 36) == pytest.approx(0.001, rel=1e-3)
    assert chi2_sf(0.0, 36) == 1.0
    assert chi2_sf(1e6, 1368) == 0.0


def test_combined_p_values():
    assert fisher_combined([0.5] * 10).p_value > 0.5
    assert fisher_combined([1e-4] * 10).p_value < 1e-20
    assert ks_uniform([(i + 0.5) / 50 for i in range(50)]).p_value > 0.99
    assert ks_uniform([0.01 * i / 50 for i in range(50)]).p_value < 1e-20


# -- the server draws with what is tested here ---------------------------------------------------


def test_the_server_draws_with_the_tested_functions():
    # An RNG spin's number is its seed's (roulette.fair: committed_spin below); a spin opened
    # before seeds existed is still drawn with draw_number.
    assert roulette_kind.fair is roulette.fair and roulette_kind.draw_number is roulette.draw.draw_number
    assert isinstance(roulette_kind._rng, SystemRng)
    assert shoe_secret.shuffled is games.rng.shuffled
    assert isinstance(shoe_secret._rng, SystemRng)


def test_the_system_draw_is_rejection_sampling(monkeypatch):
    """Fed every byte the OS could return, once each, ``secrets.randbelow(37)`` keeps the top
    6 bits and rejects 37-63: each pocket comes out exactly 4 times. ``byte % 37`` would give
    0-33 seven times and 34-36 six times."""
    stream = iter(range(256))

    def urandom(n: int) -> bytes:
        return bytes(next(stream) for _ in range(n))

    monkeypatch.setattr(random, "_urandom", urandom)
    rng = SystemRng()
    drawn = []
    with pytest.raises(RuntimeError):  # (the StopIteration of the exhausted stream)
        while True:
            drawn.append(roulette.draw.draw_number(rng))
    assert sorted(drawn) == sorted(list(range(37)) * 4)
    modulo = [sum(1 for b in range(256) if b % 37 == k) for k in range(37)]
    assert modulo == [7] * 34 + [6] * 3


# -- spins --------------------------------------------------------------------------------------


def test_seeded_spins_are_uniform():
    r = spin_test(SPINS, SeededRng(SEED))
    assert sum(r.counts) == SPINS and len(r.counts) == 37
    assert r.numbers.df == 36 and r.colours.df == 2 and r.dozens.df == 3 and r.columns.df == 3
    assert r.pairs.df == 37 * 37 - 1
    for test in (r.numbers, r.colours, r.dozens, r.columns, r.pairs):
        assert test.p_value > PASS, test


class ModuloDraw:
    """The bias the server must never have: one random byte ``% n``."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return self._r.getrandbits(8) % n


class FavouredNumber:
    """A wheel that lands on 17 on 1% of spins more than it should."""

    def __init__(self, seed: int) -> None:
        self._r = random.Random(seed)

    def randbelow(self, n: int) -> int:
        return 17 if self._r.random() < 0.01 else self._r.randrange(n)


@pytest.mark.parametrize("source", [ModuloDraw(SEED), FavouredNumber(SEED)], ids=["modulo", "favoured"])
def test_a_biased_draw_is_rejected(source):
    assert spin_test(SPINS, source).numbers.p_value < REJECT


def test_a_serially_dependent_draw_is_rejected():
    """Uniform numbers one by one, but the second of each pair repeats the first 5% of the time."""
    r = random.Random(SEED)
    last = [0]

    def sticky(rng: object) -> int:
        last[0] = last[0] if r.random() < 0.05 else r.randrange(37)
        return last[0]

    report = spin_test(SPINS, SeededRng(SEED), draw=sticky)
    assert report.numbers.p_value > PASS
    assert report.pairs.p_value < REJECT


# -- shoes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("decks", "buckets"), [(6, 26), (1, 52)])
def test_seeded_shoes_are_uniform(decks, buckets):
    r = shoe_test(SHOES, decks, buckets, rng=SeededRng(SEED))
    assert len(r.per_card) == 52 and all(c.df == buckets - 1 for c in r.per_card)
    assert r.fisher.p_value > PASS, r.fisher
    assert r.ks.p_value > PASS, r.ks


def test_the_servers_new_shoe_is_uniform(monkeypatch):
    """Through ``server.kinds.shoe_secret.new_shoe`` itself, its system RNG swapped for a seed."""
    rules = SimpleNamespace(decks=6, cut_margin=10, burn_cards=5)

    def server_shuffle(items, rng):
        monkeypatch.setattr(shoe_secret, "_rng", rng)
        secret = shoe_secret.new_shoe(rules)
        assert secret.commitment == shoe_secret.commitment(secret.order, secret.salt)
        return secret.order

    r = shoe_test(1_000, 6, 26, rng=SeededRng(SEED), shuffle=server_shuffle)
    assert r.fisher.p_value > PASS and r.ks.p_value > PASS


def test_the_servers_random_cut_is_uniform(monkeypatch):
    rules = SimpleNamespace(decks=6, cut_margin=10, burn_cards=5)
    monkeypatch.setattr(shoe_secret, "_rng", SeededRng(SEED))
    cards = 52 * rules.decks
    counts = [0] * (cards + 1)
    for _ in range(100_000):
        counts[shoe_secret.random_cut(rules, cards)] += 1
    inside = counts[rules.cut_margin : cards - rules.cut_margin + 1]
    assert sum(inside) == 100_000  # never outside the bounds
    assert chi_square_uniform(inside).p_value > PASS


def naive_shuffle(items, rng):
    """The classic mistake: swap each position with any position (n^n paths, n! orders)."""
    out = list(items)
    for i in range(len(out)):
        j = rng.randbelow(len(out))
        out[i], out[j] = out[j], out[i]
    return out


def sattolo_shuffle(items, rng):
    """An off-by-one Fisher-Yates (``randbelow(i)``): only cyclic orders, no card stays put."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.randbelow(i)
        out[i], out[j] = out[j], out[i]
    return out


def unshuffled(items, rng):
    return list(items)


@pytest.mark.parametrize(
    ("shuffle", "decks", "buckets"),
    [(naive_shuffle, 1, 52), (sattolo_shuffle, 1, 52), (unshuffled, 6, 26)],
    ids=["naive", "sattolo", "unshuffled"],
)
def test_a_biased_shuffle_is_rejected(shuffle, decks, buckets):
    r = shoe_test(SHOES, decks, buckets, rng=SeededRng(SEED), shuffle=shuffle)
    assert r.fisher.p_value < REJECT
    assert r.ks.p_value < REJECT


def test_bad_arguments():
    with pytest.raises(ValueError):
        shoe_test(10, 6, 25)  # 312 cards do not split in 25 buckets
    with pytest.raises(ValueError):
        spin_test(1)
    with pytest.raises(ValueError):
        shoe_test(10, 1, 52, rng=SeededRng(1), shuffle=lambda items, rng: list(items)[:-1])
    assert full_shoe(1) == list(range(52))


def test_the_committed_draw_is_uniform_and_the_test_sees_a_biased_one():
    """The draw RNG tables use now (a fresh seed per spin, HMAC-SHA256, rejection sampling):
    50,000 seeded spins pass; the same HMAC read as ``first byte % 37`` (the bias rejection
    sampling avoids) is caught."""
    fair_report = spin_test(50_000, SeededRng(23), draw=committed_spin)
    assert min(fair_report.numbers.p_value, fair_report.colours.p_value, fair_report.pairs.p_value) > 0.001

    def modulo_draw(rng):
        seed = bytes(rng.randbelow(256) for _ in range(32))
        return hmac.new(seed, b"fairness:1:0", hashlib.sha256).digest()[0] % 37

    assert spin_test(50_000, SeededRng(23), draw=modulo_draw).numbers.p_value < 1e-6
