"""Announced bets (Art. 17): each is a list of concrete pieces (combination, units).

Canonical names: "tiers du cylindre", "voisins du zéro", "orphelins",
"finale en plein 7", "finale à cheval 1/2", "17 et 2 voisins".

Finales à cheval follow the scheme that reproduces every example of the seed
(3/6: 4 pieces, 4/7: 3, 1/2: 5): for each ten (0-9, 10-19, 20-29, 30-36) the numbers
ending in a and b are played as one cheval when they sit side by side on the layout, as
two pleins when they do not (21 and 22), and not at all when one of them does not exist
(34 has no 37). So a/b exists for digit pairs one apart (row neighbours) or three apart
(column neighbours): 0/1 ... 8/9 and 0/3 ... 6/9.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from games.errors import GameError

from .layout import BY_NAME, WHEEL, neighbours, normalise

MAX_NEIGHBOURS = 9  # each side: 19 pleins, half the wheel


class Piece(NamedTuple):
    spot: str  # canonical combination name
    units: int


class Announced(NamedTuple):
    name: str  # canonical announcement
    pieces: tuple[Piece, ...]

    @property
    def units(self) -> int:
        return sum(p.units for p in self.pieces)


def _pieces(*spots: str, units: int = 1) -> tuple[Piece, ...]:
    return tuple(Piece(BY_NAME[s].name, units) for s in spots)


TIERS = Announced(
    "tiers du cylindre",
    _pieces(
        "cheval 5/8", "cheval 10/11", "cheval 13/16",
        "cheval 23/24", "cheval 27/30", "cheval 33/36",
    ),
)  # fmt: skip
VOISINS = Announced(
    "voisins du zéro",
    _pieces("transversale 0-2-3", units=2)
    + _pieces("cheval 4/7", "cheval 12/15", "cheval 18/21", "cheval 19/22", "cheval 32/35")
    + _pieces("carré 25-26-28-29", units=2),
)
ORPHELINS = Announced(
    "orphelins",
    _pieces("plein 1", "cheval 6/9", "cheval 14/17", "cheval 17/20", "cheval 31/34"),
)


def finale_en_plein(digit: int) -> Announced:
    if not 0 <= digit <= 9:
        raise GameError(
            "unknown_announcement",
            f"A finale en plein is on a last digit from 0 to 9, not {digit}.",
        )
    return Announced(
        f"finale en plein {digit}",
        _pieces(*(f"plein {n}" for n in range(digit, 37, 10))),
    )


def finale_a_cheval(a: int, b: int) -> Announced:
    a, b = min(a, b), max(a, b)
    if not (a >= 0 and b <= 9 and b - a in (1, 3)):
        raise GameError(
            "unknown_announcement",
            f"There is no finale à cheval {a}/{b}: the two last digits must be one apart "
            "(numbers side by side in a row) or three apart (in a column), e.g. 1/2 or 3/6.",
        )
    spots: list[str] = []
    for ten in range(0, 40, 10):
        x, y = ten + a, ten + b
        if y > 36:
            continue
        cheval = f"cheval {x}/{y}"
        spots += [cheval] if cheval in BY_NAME else [f"plein {x}", f"plein {y}"]
    return Announced(f"finale à cheval {a}/{b}", _pieces(*spots))


def neighbours_bet(number: int, each_side: int) -> Announced:
    if not 0 <= number <= 36:
        raise GameError(
            "number_out_of_range",
            f"There is no number {number} on this wheel: numbers run from 0 to 36.",
        )
    if not 1 <= each_side <= MAX_NEIGHBOURS:
        raise GameError(
            "unknown_announcement",
            f"A neighbours bet takes 1 to {MAX_NEIGHBOURS} neighbours each side, not {each_side}.",
        )
    return Announced(
        f"{number} et {each_side} voisins",
        _pieces(*(f"plein {n}" for n in neighbours(number, each_side))),
    )


_FIXED = {
    "tiers du cylindre": TIERS, "tiers": TIERS, "le tiers": TIERS, "serie 5/8": TIERS,
    "la serie 5/8": TIERS, "tiers du cylindre 5/8": TIERS,
    "voisins du zero": VOISINS, "les voisins du zero": VOISINS, "voisins": VOISINS, "vicini dello zero": VOISINS,
    "i vicini dello zero": VOISINS, "neighbours of zero": VOISINS,
    "orphelins": ORPHELINS, "les orphelins": ORPHELINS, "orfanelli": ORPHELINS,
    "gli orfanelli": ORPHELINS, "orphans": ORPHELINS,
}  # fmt: skip
_FORBIDDEN = re.compile(r"(le )?jeu de (monsieur|madame)|(il )?gioco del(la)? (signore|signora)")
_FINALE = re.compile(r"finale (en plein |a cheval |in pieno |a cavallo )?([0-9]+)(?:/([0-9]+))?")
_NEIGHBOURS = [
    re.compile(r"([0-9]+) (?:et|and|\+|avec|with|e) ([0-9]+) (?:voisins|neighbours|neighbors|vicini)"),
    re.compile(r"(?:voisins|neighbours|neighbors|vicini) (?:de |of |del )?([0-9]+) (?:par |by |x)?([0-9]+)"),
    re.compile(r"([0-9]+) (?:et les|and the|e i) (?:voisins|neighbours|neighbors|vicini)()"),
]  # fmt: skip


def parse_announced(text: str) -> Announced:
    """The announced bet ``text`` names; "le jeu de Monsieur/Madame" is refused (Art. 17)."""
    if not isinstance(text, str):
        raise GameError("unknown_announcement", f"{text!r} is not an announced bet.")
    s = normalise(text).replace("+", " + ")
    s = " ".join(s.split())
    if _FORBIDDEN.search(s):
        raise GameError(
            "announcement_forbidden",
            "\"Le jeu de Monsieur / de Madame\" cannot be accepted at this table (Art. 17).",
        )
    if s in _FIXED:
        return _FIXED[s]
    m = _FINALE.fullmatch(s)
    if m:
        how, a, b = m.group(1) or "", int(m.group(2)), m.group(3)
        if b is None:
            if how.strip() in ("a cheval", "a cavallo"):
                raise GameError(
                    "unknown_announcement",
                    "A finale à cheval names two last digits, e.g. 'finale à cheval 1/2'.",
                )
            return finale_en_plein(a)
        if how.strip() in ("en plein", "in pieno"):
            raise GameError(
                "unknown_announcement",
                "A finale en plein names one last digit, e.g. 'finale en plein 7'.",
            )
        return finale_a_cheval(a, int(b))
    for pattern in _NEIGHBOURS:
        m = pattern.fullmatch(s)
        if m:
            return neighbours_bet(int(m.group(1)), int(m.group(2) or 2))
    raise GameError(
        "unknown_announcement",
        f"{text!r} is not an announced bet. Announce 'tiers du cylindre', 'voisins du zéro', "
        "'orphelins', 'finale en plein 7', 'finale à cheval 1/2' or '17 et 2 voisins'.",
    )


def every_announced() -> list[Announced]:
    """Every announcement the table accepts (the odds report enumerates them)."""
    out = [TIERS, VOISINS, ORPHELINS]
    out += [finale_en_plein(d) for d in range(10)]
    out += [finale_a_cheval(a, a + step) for step in (1, 3) for a in range(10 - step)]
    out += [neighbours_bet(n, k) for k in range(1, MAX_NEIGHBOURS + 1) for n in WHEEL]
    return out
