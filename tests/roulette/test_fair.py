"""Provably fair RNG spins (``roulette.fair`` and the engine's side of it): the number is
fixed by a secret seed when the spin opens, only sha256(seed) is published, the result must
be the seed's number and reveals the seed; nobody holding only the commitment can tell the
number; a refunded spin reveals its seed too."""

from __future__ import annotations

import hashlib
import random

import msgspec
import pytest

from games.commands import Actor
from games.wagers import WagerVoided
from helpers.actors import ANN, CROUPIER, DIRECTOR
from roulette import events as E
from roulette import fair
from roulette.commands import LaunchBall, NoMoreBets, OpenSpin, PlaceBet, RefundSpin, Result
from roulette.engine import RouletteTable
from roulette.limits import default_settings

SYSTEM = Actor("system-t1", "system")
SEED = "5e" * 32


def rng_table() -> RouletteTable:
    return RouletteTable("t1", default_settings(live=False))


def test_the_number_is_the_seeds_and_anyone_can_check_it():
    assert fair.commitment(SEED) == hashlib.sha256(bytes.fromhex(SEED)).hexdigest()
    n = fair.spin_number(SEED, "t1", 1)
    assert 0 <= n <= 36 and n == fair.spin_number(SEED, "t1", 1)  # deterministic
    assert fair.verify(fair.commitment(SEED), SEED, "t1", 1, n)
    assert not fair.verify(fair.commitment(SEED), SEED, "t1", 1, (n + 1) % 37)  # another number
    assert not fair.verify(fair.commitment("00" * 32), SEED, "t1", 1, n)  # another commitment
    assert not fair.verify(fair.commitment(SEED), SEED.upper(), "t1", 1, n)  # not a seed as drawn
    # The spin and the table are in the message: a seed gives each spin its own number.
    numbers = {fair.spin_number(SEED, "t1", spin) for spin in range(1, 200)}
    assert len(numbers) > 30


def test_the_scaling_throws_away_the_values_that_would_bias_it():
    assert fair.LIMIT % 37 == 0 and fair.LIMIT <= 2**32 < fair.LIMIT + 37
    # Every pocket gets exactly LIMIT / 37 of the values kept: no pocket is likelier.
    assert [len(range(k, fair.LIMIT, 37)) for k in (0, 36)] == [fair.LIMIT // 37] * 2


def test_the_commitment_alone_predicts_nothing():
    """A client holding only the commitment: however he reads it (here: the hash as a number,
    its first byte, its last byte, each mod 37), he hits the spin's number as often as a
    blind guess, 1 in 37. 7,400 spins from seeds drawn by a seeded source (the same every
    run): each predictor's hits stay within 4 standard deviations of 200."""
    source = random.Random(37)
    guesses = {
        "hash": lambda c: int(c, 16) % 37,
        "first byte": lambda c: int(c[:2], 16) % 37,
        "last byte": lambda c: int(c[-2:], 16) % 37,
    }
    hits = dict.fromkeys(guesses, 0)
    spins = 7_400
    for spin in range(1, spins + 1):
        seed = source.randbytes(32).hex()
        committed, number = fair.commitment(seed), fair.spin_number(seed, "t1", spin)
        for name, guess in guesses.items():
            hits[name] += guess(committed) == number
    expected, sd = spins / 37, (spins * (1 / 37) * (36 / 37)) ** 0.5
    assert all(abs(h - expected) < 4 * sd for h in hits.values()), hits


def test_an_rng_spin_publishes_the_commitment_and_keeps_the_seed():
    t = rng_table()
    (opened,) = t.handle(OpenSpin(seed=SEED), SYSTEM)
    assert opened == E.SpinOpened(1, t.state.settings, [], fair.commitment(SEED))
    view = t.view("ann")
    assert view.commitment == fair.commitment(SEED)
    assert SEED not in msgspec.json.encode(view).decode()  # never in a view


def test_the_result_must_be_the_committed_number_and_reveals_the_seed(refused):
    t = rng_table()
    t.handle(OpenSpin(seed=SEED), SYSTEM)
    t.handle(PlaceBet(spot="rouge", amount=1000), ANN)
    t.handle(LaunchBall(), SYSTEM)
    t.handle(NoMoreBets(), SYSTEM)
    n = fair.spin_number(SEED, "t1", 1)
    refused(t, Result(number=(n + 1) % 37, source="rng"), SYSTEM, "not_committed_number")
    events = t.handle(Result(number=n, source="rng"), SYSTEM)
    assert isinstance(events[0], E.SpinResult) and events[0].number == n
    revealed = events[1]
    assert revealed == E.SpinRevealed(1, n, fair.commitment(SEED), SEED)
    assert fair.verify(revealed.commitment, revealed.seed, "t1", revealed.spin, revealed.number)
    assert (t.state.seed, t.state.commitment) == ("", "")  # revealed: nothing kept


def test_a_live_wheel_commits_to_nothing(refused):
    t = RouletteTable("t1")  # live: the ball's number, entered by the croupier (the event's actor)
    refused(t, OpenSpin(seed=SEED), CROUPIER, "seed_not_allowed")
    (opened,) = t.handle(OpenSpin(), CROUPIER)
    assert opened.commitment == ""
    t.handle(LaunchBall(), CROUPIER)
    t.handle(NoMoreBets(), CROUPIER)
    events = t.handle(Result(number=17, source="croupier"), CROUPIER)
    assert not [e for e in events if isinstance(e, E.SpinRevealed)]


def test_a_refunded_spin_returns_its_bets_and_reveals_its_seed(refused):
    t = rng_table()
    t.handle(OpenSpin(seed=SEED), SYSTEM)
    (placed,) = t.handle(PlaceBet(spot="plein 17", amount=500), ANN)
    refused(t, RefundSpin(reason=""), SYSTEM, "missing_reason")
    refused(t, RefundSpin(reason="x"), CROUPIER, "not_allowed")
    events = t.handle(RefundSpin(reason="the server stopped while the spin took bets"), SYSTEM)
    assert events == [WagerVoided(placed.wager, "ann", 500, "refunded"),
                      E.SpinRefunded(1, "the server stopped while the spin took bets", "system-t1",
                                     fair.commitment(SEED), SEED)]
    assert t.state.phase == "settled" and t.state.bets == [] and t.state.seed == ""
    (opened,) = t.handle(OpenSpin(seed="aa" * 32), SYSTEM)  # the next spin, a new secret
    assert opened.spin == 2 and opened.commitment == fair.commitment("aa" * 32)


@pytest.mark.parametrize("phase_steps", [[LaunchBall()], [LaunchBall(), NoMoreBets()]])
def test_only_an_open_spin_is_refunded(refused, phase_steps):
    t = rng_table()
    t.handle(OpenSpin(seed=SEED), SYSTEM)
    for c in phase_steps:
        t.handle(c, SYSTEM)
    refused(t, RefundSpin(reason="x"), DIRECTOR, "wrong_phase")


def test_a_stored_event_without_the_new_field_encodes_as_before():
    """A spin_opened stored before the commitment existed replays byte for byte (omit_defaults)."""
    t = rng_table()
    opened = E.SpinOpened(1, t.state.settings, [])
    assert "commitment" not in msgspec.json.decode(msgspec.json.encode(opened))

