"""Table settings: minimum, maxima per combination kind (Art. 5), the doubled plein,
the director's raises, the second-zero prison policy, and whether the table is live.
Changed settings apply from the next spin and are announced (Art. 5): ``check_change``
and ``raise_maximum`` hold what the director may change and how far."""

from __future__ import annotations

from typing import Literal

import msgspec

from games.errors import GameError
from games.money import currency
from games.validation import MAX_AMOUNT, NonNegative

from .layout import KIND_LABELS, KINDS

# Art. 5 maxima in whole units of the currency (francs).
DEFAULT_MAXIMA = {
    "plein": 500,
    "cheval": 1_000,
    "transversale": 1_500,
    "carre": 2_000,
    "quatre_premiers": 2_000,
    "sixain": 3_000,
    "douzaine": 5_000,
    "colonne": 5_000,
    "simple": 10_000,
}
# How far the director may raise (Art. 5, second paragraph).
DEFAULT_RAISE_CEILINGS = {"plein": 1_500, "cheval": 2_000}
DEFAULT_MINIMUM = 5  # francs; the house sets it per table (Art. 5)


class TableSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Amounts are bounded to int64 here; check_settings gives the precise refusals
    # (a zero minimum, a maximum under the minimum) with ``invalid_settings``.
    currency: str = "CHF"
    minimum: NonNegative  # per concrete bet (each piece of an announced bet), minor units
    maxima: dict[str, NonNegative]  # per kind, per player (or società), per spin, minor units
    doubled_plein: bool = False  # the table grants the doubled plein (Art. 5)
    raised: dict[str, NonNegative] = msgspec.field(default_factory=dict)  # director's raises
    raise_ceilings: dict[str, NonNegative] = msgspec.field(default_factory=dict)
    prison_on_zero: Literal["lose", "stay"] = "lose"
    # A live table has a wheel, a croupier and a chef de table, and players standing at
    # it with cash chips (floor players); an RNG table has none of them. Fixed for the
    # table's life: the server passes live=False for its RNG tables.
    live: bool = True

    def maximum_base(self, kind: str) -> int:
        """The maximum before any director's raise (doubled plein included)."""
        base = self.maxima[kind]
        return 2 * base if kind == "plein" and self.doubled_plein else base

    def maximum(self, kind: str) -> int:
        return self.raised.get(kind) or self.maximum_base(kind)


def default_settings(
    currency_code: str = "CHF",
    *,
    minimum: int | None = None,
    doubled_plein: bool = False,
    prison_on_zero: Literal["lose", "stay"] = "lose",
    live: bool = True,
) -> TableSettings:
    cur = currency(currency_code)
    return TableSettings(
        currency=cur.code,
        minimum=cur.units(DEFAULT_MINIMUM) if minimum is None else minimum,
        maxima={k: cur.units(v) for k, v in DEFAULT_MAXIMA.items()},
        doubled_plein=doubled_plein,
        raise_ceilings={k: cur.units(v) for k, v in DEFAULT_RAISE_CEILINGS.items()},
        prison_on_zero=prison_on_zero,
        live=live,
    )


def regulation_maximum(s: TableSettings, kind: str) -> int:
    """The Art. 5 maximum on ``kind`` in the table's currency (the plein's doubled where
    the table grants the doubled plein): the highest a settings change may set. Above it
    only the director's raise with the control officer goes (plein and cheval)."""
    ceiling = currency(s.currency).units(DEFAULT_MAXIMA[kind])
    return 2 * ceiling if kind == "plein" and s.doubled_plein else ceiling


def check_settings(s: TableSettings) -> None:
    """Refuse settings the table could not run on."""
    currency(s.currency)
    if type(s.minimum) is not int or not 0 < s.minimum <= MAX_AMOUNT:
        raise GameError("invalid_settings", "The table minimum must be a positive whole amount.")
    if set(s.maxima) != set(KINDS):
        raise GameError(
            "invalid_settings", f"Maxima must be set for exactly these kinds: {', '.join(KINDS)}."
        )
    for kind in KINDS:
        m = s.maxima[kind]
        if type(m) is not int or not s.minimum <= m <= MAX_AMOUNT:
            raise GameError(
                "invalid_settings", f"The maximum on {kind} must be a whole amount >= the minimum."
            )
    for kind, ceiling in s.raise_ceilings.items():
        if kind not in KINDS or type(ceiling) is not int or not 0 < ceiling <= MAX_AMOUNT:
            raise GameError(
                "invalid_settings", "A raise ceiling is a whole amount on a combination kind."
            )
    for kind, m in s.raised.items():
        raise_ceiling = s.raise_ceilings.get(kind)
        if raise_ceiling is None or type(m) is not int or not s.maximum_base(kind) <= m <= raise_ceiling:
            raise GameError(
                "invalid_settings", f"A raise on {kind} must lie between its maximum and ceiling."
            )
    if s.prison_on_zero not in ("lose", "stay"):
        raise GameError("invalid_settings", "prison_on_zero is 'lose' or 'stay'.")
    if type(s.doubled_plein) is not bool or type(s.live) is not bool:
        raise GameError("invalid_settings", "doubled_plein and live are true or false.")



def _fmt(s: TableSettings, amount: int) -> str:
    return currency(s.currency).format(amount)


def check_change(current: TableSettings, base: TableSettings, new: object) -> TableSettings:
    """The director's new settings (from the next spin), checked against the table's
    ``current`` ones and ``base``, those in force from the next spin: the minimum and
    maxima no higher than the regulation's (Art. 5); the currency and whether the table
    is live never change, and a raise comes only through ``raise_maximum``."""
    if not isinstance(new, TableSettings):
        raise GameError("invalid_settings", "Settings are a TableSettings.")
    check_settings(new)
    if new.currency != current.currency:
        raise GameError("invalid_settings", "A table's currency cannot change.")
    if new.live != current.live:
        raise GameError("invalid_settings", "Whether a table is live or RNG cannot change.")
    if (new.raised, new.raise_ceilings) != (base.raised, base.raise_ceilings):
        # Art. 5: a raise is agreed with the control service, so only RaiseLimit,
        # which names the officer, may grant one or move its ceiling.
        raise GameError(
            "missing_authorisation",
            "The plein and cheval raises are granted only as the director's raise naming "
            "the control officer (Art. 5), not with a settings change.",
        )
    for kind in KINDS:
        # Art. 5: maxima are fixed with the municipal administration; the director may
        # lower them, or raise them back up to the regulation's, no higher.
        ceiling = regulation_maximum(new, kind)
        if new.maximum_base(kind) > ceiling:
            label = KIND_LABELS[kind]
            beyond = (
                "only the director's raise agreed with the control officer goes above it (RaiseLimit)"
                if kind in new.raise_ceilings
                else "it cannot be raised"
            )
            raise GameError(
                "above_regulation_maximum",
                f"The regulation's maximum on {label} is {_fmt(new, ceiling)} (Art. 5): a settings "
                f"change may set up to that; {beyond}.",
                kind=kind, ceiling=ceiling,
            )  # fmt: skip
    return new


def raise_maximum(base: TableSettings, kind: str, maximum: int, control_officer: str) -> TableSettings:
    """``base`` with the director's raise of the ``kind`` maximum (Art. 5: plein or cheval,
    up to its ceiling, agreed with the municipal control service's ``control_officer``);
    raising it back to the base maximum takes the raise off."""
    ceiling = base.raise_ceilings.get(kind)
    if ceiling is None:
        raise GameError("raise_not_allowed", f"The maximum on {kind} cannot be raised.")
    if not control_officer.strip():
        raise GameError(
            "missing_authorisation",
            "A raise is agreed with the municipal control service: name the officer (Art. 5).",
        )
    floor = base.maximum_base(kind)
    if type(maximum) is not int or not floor <= maximum <= ceiling:
        raise GameError(
            "raise_out_of_range",
            f"The {KIND_LABELS[kind]} maximum can be raised from {_fmt(base, floor)} up to {_fmt(base, ceiling)}.",
            ceiling=ceiling,
        )
    raised = {k: v for k, v in base.raised.items() if k != kind}
    if maximum > floor:
        raised[kind] = maximum
    return msgspec.structs.replace(base, raised=raised)
