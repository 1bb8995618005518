"""Currencies and amounts.

Money is always an ``int`` in the currency's minor unit (CHF 5.00 == 500).
Floats never hold money anywhere in this project.
"""

from __future__ import annotations

import msgspec


class Currency(msgspec.Struct, frozen=True):
    code: str
    minor_digits: int
    # Tournament points are not money: they cannot be bought, cashed or passed on.
    cash: bool = True

    @property
    def scale(self) -> int:
        return int(10**self.minor_digits)  # minor_digits >= 0: int ** int is typed as Any

    def units(self, major: int) -> int:
        """Whole units (francs, euros) to minor units."""
        return major * self.scale

    def format(self, amount: int) -> str:
        sign = "-" if amount < 0 else ""
        whole, frac = divmod(abs(amount), self.scale)
        if self.minor_digits == 0:
            return f"{sign}{whole:,} {self.code}"
        return f"{sign}{whole:,}.{frac:0{self.minor_digits}d} {self.code}"


CHF = Currency("CHF", 2)
EUR = Currency("EUR", 2)
# Tournament points (Titano Art. 25): whole points, no cash value.
PTS = Currency("PTS", 0, cash=False)

CURRENCIES: dict[str, Currency] = {c.code: c for c in (CHF, EUR, PTS)}

# The largest amount any stake, payment, limit or transfer may be, in minor units: far below
# 2**63, so that sums of many (a balance, a day's drop) still fit PostgreSQL's bigint.
MAX_AMOUNT = 10**15


def currency(code: str) -> Currency:
    try:
        return CURRENCIES[code]
    except KeyError:
        from games.errors import GameError

        raise GameError("unknown_currency", f"Unknown currency {code!r}.") from None
