"""The RNG and the shuffle under statistical test (FAIRNESS.md).

Spins are drawn with the server's own draw (``roulette.draw.draw_number``, what an RNG
roulette table calls in ``server/kinds/roulette.py``) and shoes shuffled with the server's
own shuffle (``games.rng.shuffled`` over ``games.cards.full_shoe``, what
``server.kinds.shoe_secret.new_shoe`` does for an RNG blackjack table). The source of
randomness is handed in: ``games.rng.SeededRng(seed)`` for the small fixed-seed form in CI,
and by default ``games.rng.SystemRng()`` (``secrets``, the operating system's CSPRNG), the
source the server uses, for the long form (``python -m tools.fairness``).

The chi-square survival function is the regularized upper incomplete gamma function
Q(df/2, x/2), computed here (series / Lentz continued fraction, Numerical Recipes 6.2), so
the tool needs no scipy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from games.cards import full_shoe
from games.rng import Rng, SystemRng, shuffled
from roulette import fair
from roulette.draw import POCKETS, draw_number
from roulette.layout import RED

Draw = Callable[[Rng], int]
Shuffle = Callable[[Sequence[int], Rng], list[int]]

_EPS = 1e-15
_TINY = 1e-300


# -- distributions ------------------------------------------------------------------------------


def gammaincc(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x) = Γ(a, x) / Γ(a), for a > 0, x >= 0."""
    if a <= 0:
        raise ValueError(f"gammaincc: a = {a} must be positive")
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # the series for P(a, x) converges fast here; Q = 1 - P
        ap, term = a, 1.0 / a
        total = term
        for _ in range(100_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    # The continued fraction for Q(a, x), modified Lentz.
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        if abs(d) < _TINY:
            d = _TINY
        c = b + an / c
        if abs(c) < _TINY:
            c = _TINY
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return min(1.0, math.exp(log_prefix) * h)


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"chi2_sf: df = {df} must be positive")
    return gammaincc(df / 2, x / 2)


def kolmogorov_sf(d: float, n: int) -> float:
    """P(D_n >= d) for the one-sample Kolmogorov-Smirnov statistic, by the asymptotic series
    with Stephens' small-sample correction (good to a few per cent for n >= 5)."""
    sq = math.sqrt(n)
    t = (sq + 0.12 + 0.11 / sq) * d
    if t < 0.2:
        return 1.0
    total = 0.0
    for k in range(1, 101):
        term = 2 * (-1) ** (k - 1) * math.exp(-2 * k * k * t * t)
        total += term
        if abs(term) < 1e-16:
            break
    return min(1.0, max(0.0, total))


# -- tests --------------------------------------------------------------------------------------


class ChiSquare(NamedTuple):
    statistic: float
    df: int
    p_value: float


def chi_square(observed: Sequence[int], expected: Sequence[float], *, variance_factor: float = 1.0) -> ChiSquare:
    """Pearson's goodness of fit, ``len(observed) - 1`` degrees of freedom. ``variance_factor``
    divides the statistic: the finite-population factor when each sample draws several cells
    without replacement (a card that is in a shoe ``decks`` times)."""
    if len(observed) != len(expected) or len(observed) < 2:
        raise ValueError("chi_square needs as many expected as observed counts, two or more")
    stat = sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True)) / variance_factor
    df = len(observed) - 1
    return ChiSquare(stat, df, chi2_sf(stat, df))


def chi_square_uniform(observed: Sequence[int], *, variance_factor: float = 1.0) -> ChiSquare:
    total = sum(observed)
    return chi_square(observed, [total / len(observed)] * len(observed), variance_factor=variance_factor)


def fisher_combined(p_values: Iterable[float]) -> ChiSquare:
    """Fisher's method: -2 Σ ln p is chi-square with 2k degrees of freedom when the k
    p-values are independent and uniform."""
    ps = list(p_values)
    stat = -2 * sum(math.log(max(p, _TINY)) for p in ps)
    return ChiSquare(stat, 2 * len(ps), chi2_sf(stat, 2 * len(ps)))


class KS(NamedTuple):
    statistic: float
    n: int
    p_value: float


def ks_uniform(p_values: Iterable[float]) -> KS:
    """Kolmogorov-Smirnov: are the p-values uniform on [0, 1]?"""
    xs = sorted(p_values)
    n = len(xs)
    if n == 0:
        raise ValueError("ks_uniform needs at least one value")
    d = max(max((i + 1) / n - x, x - i / n) for i, x in enumerate(xs))
    return KS(d, n, kolmogorov_sf(d, n))


# -- spins --------------------------------------------------------------------------------------

BLACK = frozenset(range(1, 37)) - RED


def _groups(counts: Sequence[int], cells: Sequence[frozenset[int]]) -> ChiSquare:
    n = sum(counts)
    observed = [sum(counts[k] for k in cell) for cell in cells]
    return chi_square(observed, [n * len(cell) / POCKETS for cell in cells])


ZERO = frozenset({0})
COLOURS = (RED, BLACK, ZERO)
DOZENS = (ZERO, *(frozenset(range(12 * d + 1, 12 * d + 13)) for d in range(3)))
COLUMNS = (ZERO, *(frozenset(range(c, 37, 3)) for c in (1, 2, 3)))


def committed_spin(rng: Rng) -> int:
    """An RNG spin as the server makes it now (provably fair, ``roulette.fair``): a fresh
    32-byte seed from ``rng`` (the server: ``secrets.token_hex(32)``), then the number the
    seed gives by HMAC-SHA256 and rejection sampling."""
    seed = bytes(rng.randbelow(256) for _ in range(fair.SEED_BYTES)).hex()
    return fair.spin_number(seed, "fairness", 1)


class SpinReport(NamedTuple):
    spins: int
    counts: list[int]  # per number 0-36
    numbers: ChiSquare  # 37 cells, 36 df
    colours: ChiSquare  # red / black / green, 2 df
    dozens: ChiSquare  # zero and the three dozens, 3 df
    columns: ChiSquare  # zero and the three columns, 3 df
    pairs: ChiSquare  # serial test: non-overlapping consecutive pairs, 37 x 37 cells, 1368 df


def spin_test(spins: int, rng: Rng | None = None, draw: Draw = draw_number) -> SpinReport:
    """Draw ``spins`` numbers with ``draw`` (the server's) from ``rng`` (default: the system
    CSPRNG) and test them for uniformity, alone and in consecutive pairs."""
    if spins < 2:
        raise ValueError("spin_test needs at least two spins")
    source: Rng = SystemRng() if rng is None else rng
    counts = [0] * POCKETS
    pairs = [0] * (POCKETS * POCKETS)
    first = -1
    for _ in range(spins):
        x = draw(source)
        counts[x] += 1
        if first < 0:
            first = x
        else:
            pairs[first * POCKETS + x] += 1
            first = -1
    return SpinReport(
        spins=spins,
        counts=counts,
        numbers=chi_square_uniform(counts),
        colours=_groups(counts, COLOURS),
        dozens=_groups(counts, DOZENS),
        columns=_groups(counts, COLUMNS),
        pairs=chi_square_uniform(pairs),
    )


# -- shoes --------------------------------------------------------------------------------------


class ShoeReport(NamedTuple):
    shoes: int
    decks: int
    buckets: int  # positions in the shoe grouped in this many buckets of equal size
    cards: list[int]  # the card ints tested (each is in the shoe ``decks`` times)
    per_card: list[ChiSquare]  # each card's positions over the buckets, buckets - 1 df
    fisher: ChiSquare  # the per-card p-values combined (Fisher's method)
    ks: KS  # the per-card p-values against the uniform distribution


def shoe_test(
    shoes: int,
    decks: int = 6,
    buckets: int = 26,
    cards: Sequence[int] = tuple(range(52)),
    rng: Rng | None = None,
    shuffle: Shuffle = shuffled,
) -> ShoeReport:
    """Shuffle ``shoes`` shoes of ``decks`` decks in factory order with ``shuffle`` (the
    server's Fisher-Yates) from ``rng`` (default: the system CSPRNG) and test, for each card
    in ``cards``, that its positions fall evenly in ``buckets`` equal runs of the shoe.

    A card is in the shoe ``decks`` times, at distinct positions: the bucket counts of one
    shoe are multivariate hypergeometric, whose covariance is the multinomial's times
    (N - n) / (N - 1) (N cards, n copies), so the statistic is divided by that factor."""
    size = 52 * decks
    if buckets < 2 or size % buckets:
        raise ValueError(f"{buckets} buckets do not split a {size}-card shoe evenly")
    if shoes < 1:
        raise ValueError("shoe_test needs at least one shoe")
    source: Rng = SystemRng() if rng is None else rng
    width = size // buckets
    bucket_of = [p // width for p in range(size)]
    tested = list(cards)
    index = {c: i for i, c in enumerate(tested)}
    slot = [index.get(c, -1) for c in range(52)]
    counts = [[0] * buckets for _ in tested]
    factory = full_shoe(decks)
    for _ in range(shoes):
        order = shuffle(factory, source)
        if len(order) != size:
            raise ValueError(f"the shuffle returned {len(order)} cards, not {size}")
        for pos, card in enumerate(order):
            i = slot[card]
            if i >= 0:
                counts[i][bucket_of[pos]] += 1
    factor = (size - decks) / (size - 1)
    per_card = [chi_square_uniform(row, variance_factor=factor) for row in counts]
    ps = [r.p_value for r in per_card]
    return ShoeReport(shoes, decks, buckets, tested, per_card, fisher_combined(ps), ks_uniform(ps))


# -- the long form ------------------------------------------------------------------------------

LONG_SPINS = 10_000_000
LONG_COMMITTED_SPINS = 2_000_000  # (a seed of 32 draws and an HMAC each: slower)
LONG_SHOES = ((6, 26, 100_000), (4, 26, 100_000), (1, 52, 200_000))  # (decks, buckets, shoes)


def _line(name: str, r: ChiSquare) -> str:
    return f"  {name:<34} chi2 = {r.statistic:12.2f}  df = {r.df:5d}  p = {r.p_value:.4f}"


def spin_lines(r: SpinReport, draw: str = "roulette.draw.draw_number") -> list[str]:
    return [
        f"spins: {r.spins:,} with {draw}",
        _line("numbers (37 cells)", r.numbers),
        _line("red / black / green", r.colours),
        _line("zero + dozens", r.dozens),
        _line("zero + columns", r.columns),
        _line(f"pairs (37x37, {r.spins // 2:,} pairs)", r.pairs),
        f"  counts: min {min(r.counts):,}, max {max(r.counts):,}, expected {r.spins / POCKETS:,.1f}",
    ]


def shoe_lines(r: ShoeReport) -> list[str]:
    worst = min(r.per_card, key=lambda c: c.p_value)
    return [
        f"shoes: {r.shoes:,} of {r.decks} deck(s) with games.rng.shuffled, {len(r.cards)} cards x "
        f"{r.buckets} buckets of {52 * r.decks // r.buckets}",
        f"  per card: {r.buckets - 1} df, smallest p = {worst.p_value:.4f} of {len(r.per_card)}",
        _line("Fisher's method", r.fisher),
        f"  {'Kolmogorov-Smirnov on the p-values':<34} D = {r.ks.statistic:12.4f}  n = {r.ks.n:5d}  "
        f"p = {r.ks.p_value:.4f}",
    ]


def main() -> None:
    """The long form on the system CSPRNG (FAIRNESS.md)."""
    clock = time.perf_counter()
    print(f"source: games.rng.SystemRng (secrets.randbelow, os.urandom); {time.strftime('%Y-%m-%d')}")
    start = time.perf_counter()
    print("\n".join(spin_lines(spin_test(LONG_SPINS))))
    print(f"  time: {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    committed = spin_test(LONG_COMMITTED_SPINS, draw=committed_spin)
    print("\n".join(spin_lines(committed, "a fresh seed each, roulette.fair.spin_number (what RNG tables use)")))
    print(f"  time: {time.perf_counter() - start:.1f} s")
    for decks, buckets, shoes in LONG_SHOES:
        start = time.perf_counter()
        print("\n".join(shoe_lines(shoe_test(shoes, decks, buckets))))
        print(f"  time: {time.perf_counter() - start:.1f} s")
    print(f"total: {time.perf_counter() - clock:.1f} s")


if __name__ == "__main__":
    main()
