"""The single-zero wheel and layout: every legal combination, named one way, parsed many.

Layout rows are 1-2-3, 4-5-6, ... 34-35-36 with 0 above the first row; a cheval joins two
numbers side by side (n/n+1 in one row, n/n+3 in one column) or 0 with 1, 2 or 3.
Canonical names are what a croupier says and what a client sends ("plein 17",
"cheval 0/3", "transversale 0-1-2", "carré 1-2-4-5", "quatre premiers", "sixain 1-6",
"douzaine 2", "colonne 3", "rouge" ...); ``parse_spot`` also takes common aliases
(English, Italian, no accents, P12/M12/D12).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

from games.errors import GameError

WHEEL: tuple[int, ...] = (
    0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10,
    5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26,
)  # fmt: skip
RED = frozenset({1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36})
NUMBERS = range(37)


def colour(n: int) -> str:
    return "green" if n == 0 else ("red" if n in RED else "black")


# What each kind pays *to one* (Art. 1-2).
PAYS: dict[str, int] = {
    "plein": 35,
    "cheval": 17,
    "transversale": 11,
    "carre": 8,
    "quatre_premiers": 8,
    "sixain": 5,
    "douzaine": 2,
    "colonne": 2,
    "simple": 1,
}
KINDS: tuple[str, ...] = tuple(PAYS)
KIND_LABELS: dict[str, str] = {
    "plein": "plein",
    "cheval": "cheval",
    "transversale": "transversale pleine",
    "carre": "carré",
    "quatre_premiers": "quatre premiers",
    "sixain": "sixain",
    "douzaine": "douzaine",
    "colonne": "colonne",
    "simple": "simple chance",
}


class Combination(NamedTuple):
    kind: str
    numbers: frozenset[int]
    name: str

    @property
    def pays(self) -> int:
        return PAYS[self.kind]

    @property
    def simple(self) -> bool:
        return self.kind == "simple"


SIMPLE_CHANCES: dict[str, frozenset[int]] = {
    "rouge": RED,
    "noir": frozenset(range(1, 37)) - RED,
    "pair": frozenset(range(2, 37, 2)),
    "impair": frozenset(range(1, 37, 2)),
    "manque": frozenset(range(1, 19)),
    "passe": frozenset(range(19, 37)),
}


def _build() -> list[Combination]:
    out: list[Combination] = []

    def add(kind: str, nums: Iterable[int], name: str) -> None:
        out.append(Combination(kind, frozenset(nums), name))

    def dash(nums: Iterable[int]) -> str:
        return "-".join(map(str, sorted(nums)))

    for n in NUMBERS:
        add("plein", [n], f"plein {n}")
    pairs = [(0, 1), (0, 2), (0, 3)]
    for n in range(1, 37):
        if n % 3 != 0:
            pairs.append((n, n + 1))
        if n <= 33:
            pairs.append((n, n + 3))
    for a, b in sorted(pairs):
        add("cheval", [a, b], f"cheval {a}/{b}")
    for row in [(0, 1, 2), (0, 2, 3)] + [(n, n + 1, n + 2) for n in range(1, 37, 3)]:
        add("transversale", row, f"transversale {dash(row)}")
    for n in range(1, 34):
        if n % 3 != 0:
            sq = (n, n + 1, n + 3, n + 4)
            add("carre", sq, f"carré {dash(sq)}")
    add("quatre_premiers", [0, 1, 2, 3], "quatre premiers")
    for n in range(1, 32, 3):
        add("sixain", range(n, n + 6), f"sixain {n}-{n + 5}")
    for d in (1, 2, 3):
        add("douzaine", range(12 * d - 11, 12 * d + 1), f"douzaine {d}")
    for c in (1, 2, 3):
        add("colonne", range(c, 37, 3), f"colonne {c}")
    for name, nums in SIMPLE_CHANCES.items():
        add("simple", nums, name)
    return out


COMBINATIONS: tuple[Combination, ...] = tuple(_build())
BY_NAME: dict[str, Combination] = {c.name: c for c in COMBINATIONS}
_BY_KEY: dict[tuple[str, frozenset[int]], Combination] = {
    (c.kind, c.numbers): c for c in COMBINATIONS
}
# number -> names of every combination that wins on it (settlement's hot path).
WINNERS: tuple[frozenset[str], ...] = tuple(
    frozenset(c.name for c in COMBINATIONS if n in c.numbers) for n in NUMBERS
)
PAYS_BY_NAME: dict[str, int] = {c.name: c.pays for c in COMBINATIONS}
KIND_BY_NAME: dict[str, str] = {c.name: c.kind for c in COMBINATIONS}
SIMPLE_NAMES = frozenset(SIMPLE_CHANCES)


def neighbours(n: int, each_side: int) -> list[int]:
    """``n`` and ``each_side`` pockets either side of it on the wheel, in wheel order."""
    i = WHEEL.index(n)
    return [WHEEL[(i + k) % 37] for k in range(-each_side, each_side + 1)]


# ---------------------------------------------------------------- parsing

_KIND_WORDS: dict[str, str] = {
    "plein": "plein", "en plein": "plein", "pieno": "plein", "numero": "plein",
    "straight": "plein", "straight up": "plein", "number": "plein",
    "cheval": "cheval", "a cheval": "cheval", "cavallo": "cheval", "split": "cheval",
    "transversale": "transversale", "transversale pleine": "transversale",
    "trasversale": "transversale", "trasversale piena": "transversale",
    "terzina": "transversale", "street": "transversale",
    "carre": "carre", "quadrato": "carre", "corner": "carre", "square": "carre",
    "sixain": "sixain", "sestina": "sixain", "transversale simple": "sixain",
    "trasversale semplice": "sixain", "six line": "sixain", "line": "sixain",
    "douzaine": "douzaine", "douzaines": "douzaine", "dozzina": "douzaine",
    "dozzine": "douzaine", "dozen": "douzaine", "dozens": "douzaine",
    "colonne": "colonne", "colonnes": "colonne", "colonna": "colonne",
    "colonne pleine": "colonne", "column": "colonne", "columns": "colonne",
}  # fmt: skip
_WHOLE_ALIASES: dict[str, str] = {
    "red": "rouge", "rosso": "rouge",
    "black": "noir", "nero": "noir",
    "even": "pair", "pari": "pair",
    "odd": "impair", "dispari": "impair",
    "low": "manque", "1-18": "manque",
    "high": "passe", "19-36": "passe",
    "quatre premiers": "quatre premiers", "quattro primi": "quatre premiers",
    "first four": "quatre premiers", "0-1-2-3": "quatre premiers",
    "p12": "douzaine 1", "premiere douzaine": "douzaine 1", "1-12": "douzaine 1",
    "m12": "douzaine 2", "moyenne douzaine": "douzaine 2", "13-24": "douzaine 2",
    "d12": "douzaine 3", "derniere douzaine": "douzaine 3", "25-36": "douzaine 3",
}  # fmt: skip
_OUTSIDE_WORDS = frozenset(SIMPLE_CHANCES) | {
    "red", "rosso", "black", "nero", "even", "pari", "odd", "dispari", "low", "high",
    "p12", "m12", "d12",
}  # fmt: skip
_EXAMPLES = {
    "plein": "plein 17",
    "cheval": "cheval 17/20",
    "transversale": "transversale 16-17-18",
    "carre": "carré 1-2-4-5",
    "sixain": "sixain 1-6",
}
_SPOT_RE = re.compile(r"([a-z][a-z ]*?)\s*([0-9][0-9/\-,+ ]*)?")


def normalise(text: str) -> str:
    """Lower case, no accents, single spaces, separators without spaces around them."""
    s = unicodedata.normalize("NFKD", text)
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower().strip()
    s = re.sub(r"\s*([/\-])\s*", r"\1", s)
    return re.sub(r"\s+", " ", s)


def _unknown(text: str) -> GameError:
    return GameError(
        "unknown_combination",
        f"{text!r} is not a roulette bet. Name it as the croupier would: "
        "'plein 17', 'cheval 0/3', 'transversale 1-2-3', 'carré 1-2-4-5', "
        "'quatre premiers', 'sixain 1-6', 'douzaine 2', 'colonne 3', 'rouge'.",
        spot=text,
    )


# Spots repeat (a wheel's bets name a few dozen of them, over and over): a name parsed once
# is looked up after. Only names a bet could be: a refusal is not kept, nor a long text.
_CACHED_NAMES = 1024
_CACHED_LENGTH = 64


def parse_spot(text: str) -> Combination:
    """The combination a person means by ``text``; a GameError names what is wrong."""
    if not isinstance(text, str):
        raise _unknown(repr(text))
    # (exactly a str: a subclass may define its own equality, and the cache would answer it)
    return _parse_known(text) if type(text) is str and len(text) <= _CACHED_LENGTH else _parse(text)


def _parse(text: str) -> Combination:
    s = normalise(text)
    if s in BY_NAME:
        return BY_NAME[s]
    if s in _WHOLE_ALIASES:
        return BY_NAME[_WHOLE_ALIASES[s]]
    if s.replace("carre", "carré", 1) in BY_NAME:
        return BY_NAME[s.replace("carre", "carré", 1)]
    if _astride_named(s):
        raise _astride(text)
    m = _SPOT_RE.fullmatch(s)
    if m is None:
        if re.fullmatch(r"[0-9]+", s):
            m = _SPOT_RE.fullmatch(f"plein {s}")
        elif re.fullmatch(r"[0-9]+/[0-9]+", s):
            m = _SPOT_RE.fullmatch(f"cheval {s}")
        if m is None:
            raise _unknown(text)
    word = m.group(1).strip()
    if word.startswith("a cheval ") or word.startswith("cheval "):
        inner = word.split(" ", 2 if word.startswith("a ") else 1)[-1]
        if _KIND_WORDS.get(inner) in ("douzaine", "colonne"):
            raise _astride(text)
    kind = _KIND_WORDS.get(word)
    if kind is None:
        raise _unknown(text)
    nums = [int(x) for x in re.findall(r"[0-9]+", m.group(2) or "")]
    if kind in ("douzaine", "colonne"):
        if len(nums) >= 2:
            raise _astride(text)
        if len(nums) != 1 or not 1 <= nums[0] <= 3:
            raise GameError(
                "unknown_combination",
                f"There are three {kind}s: say '{kind} 1', '{kind} 2' or '{kind} 3'.",
                spot=text,
            )
        return BY_NAME[f"{kind} {nums[0]}"]
    for n in nums:
        if not 0 <= n <= 36:
            raise GameError(
                "number_out_of_range",
                f"There is no number {n} on this wheel: numbers run from 0 to 36.",
                spot=text,
            )
    label = KIND_LABELS[kind]
    need = {"plein": (1,), "cheval": (2,), "transversale": (3,), "carre": (2, 4), "sixain": (2, 6)}
    if len(nums) not in need[kind]:
        counts = " or ".join(map(str, need[kind]))
        raise GameError(
            "unknown_combination",
            f"A {label} is named with {counts} number(s), e.g. '{_EXAMPLES[kind]}'.",
            spot=text,
        )
    want = frozenset(nums)
    if kind == "carre" and len(nums) == 2:  # two opposite corners, as in "carré 25/29"
        lo, hi = min(nums), max(nums)
        want = frozenset({lo, lo + 1, hi - 1, hi}) if hi - lo == 4 else frozenset({-1})
    if kind == "sixain" and len(nums) == 2:  # first and last, "sixain 1-6"
        lo, hi = min(nums), max(nums)
        want = frozenset(range(lo, hi + 1)) if hi - lo == 5 else frozenset({-1})
    if kind == "carre" and want == frozenset({0, 1, 2, 3}):
        return BY_NAME["quatre premiers"]
    combo = _BY_KEY.get((kind, want))
    if combo is None:
        shown = "/".join(map(str, nums)) if kind == "cheval" else "-".join(map(str, nums))
        why = {
            "cheval": "a cheval joins two numbers side by side on the layout (or 0 with 1, 2 or 3)",
            "transversale": "a transversale is one row of three (or 0-1-2, 0-2-3)",
            "carre": "a carré is four numbers meeting at one corner",
            "sixain": "a sixain is two neighbouring rows, e.g. 1-6 or 4-9",
            "plein": "",
        }[kind]
        raise GameError(
            "not_on_layout",
            f"There is no {label} {shown} on the layout: {why}.",
            spot=text,
        )
    return combo


_parse_known = functools.lru_cache(maxsize=_CACHED_NAMES)(_parse)

_JOINERS = re.compile(r"\s*(?:[/+&,]|\s(?:et|and|e|ou|or)\s)\s*")
_OUTSIDE_KINDS = ("simple", "douzaine", "colonne")


def _astride_named(s: str) -> bool:
    """Art. 4: ``s`` (normalised) joins two simple chances, dozens or columns, however
    spelt: "rouge/noir", "1-18/19-36", "douzaine 1/douzaine 2", "colonnes 1 et 2"."""
    words = [w for w in re.split(r"[\s/\-+&,]+", s) if w]
    if sum(w in _OUTSIDE_WORDS for w in words) >= 2:
        return True
    parts = _JOINERS.split(s)
    outside = [p for p in parts if _alias_kind(p) in _OUTSIDE_KINDS]
    if len(outside) >= 2:
        return True
    dozen_word = any(_KIND_WORDS.get(w) in ("douzaine", "colonne") for w in words)
    return dozen_word and len(re.findall(r"[0-9]+", s)) >= 2


def _alias_kind(part: str) -> str | None:
    combo = BY_NAME.get(_WHOLE_ALIASES.get(part, part))
    return combo.kind if combo else None


def _astride(text: str) -> GameError:
    return GameError(
        "astride_forbidden",
        f"{text!r}: bets astride two simple chances, dozens or columns are not allowed (Art. 4).",
        spot=text,
    )
