"""What a tournament is before it starts: the director's settings, with the house's defaults
(Titano Art. 23-26; Appendix 1 for the Sit&Go), and the entry fee rule."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from games.errors import GameError
from games.validation import Amount, Name, Text

Percent = Annotated[int, msgspec.Meta(ge=1, le=100)]


class TournamentSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A tournament as the director creates it. Money in EUR cents; points are whole."""

    name: Name
    format: Literal["tournament", "sit_and_go"] = "tournament"
    starts_at: int = 0  # epoch seconds (a Sit&Go starts when full enough: 0)
    buy_in: Amount  # to the prize pool
    currency: Literal["EUR"] = "EUR"
    max_entrants: Annotated[int, msgspec.Meta(ge=2, le=700)] = 70
    max_tables: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10
    min_entrants: Annotated[int, msgspec.Meta(ge=2, le=700)] = 2  # a Sit&Go starts at this many (5)
    min_bet: Amount = 10  # points
    max_bet: Amount = 100
    shoes: Annotated[int, msgspec.Meta(ge=1, le=20)] = 6  # per phase ("6 taglie")
    finalists: Annotated[int, msgspec.Meta(ge=1, le=7)] = 7
    stack: Amount = 200  # points at each phase start: 20 x 1 + 9 x 20
    prizes: Annotated[list[Percent], msgspec.Meta(min_length=1, max_length=7)] = msgspec.field(
        default_factory=lambda: [60, 25, 15])
    decks: Annotated[int, msgspec.Meta(ge=1, le=8)] = 6
    mode: Literal["rng", "live"] = "rng"  # who deals at the tournament's tables
    staff: Annotated[list[Name], msgspec.Meta(max_length=50)] = []  # croupiers/chefs of a live tournament's tables
    note: Text = ""


# Art. 23: 10% with a minimum of EUR 20; Appendix 1 (Sit&Go): 10%, minimum EUR 10, buy-ins
# up to EUR 100.
FEE_PERCENT = 10
FEE_MINIMUM = {"tournament": 2000, "sit_and_go": 1000}
SIT_AND_GO_MAX_BUY_IN = 10000
SIT_AND_GO_SEATS = 7
SIT_AND_GO_START = 5


def fee(spec: TournamentSpec) -> int:
    """The house's entry fee in cents: 10% of the buy-in, rounded down to the cent (in the
    player's favour), never below the format's minimum."""
    return max(spec.buy_in * FEE_PERCENT // 100, FEE_MINIMUM[spec.format])


def with_defaults(settings: dict[str, object]) -> TournamentSpec:
    """A spec from what the director gave: a Sit&Go takes its format's defaults (one table
    of 7, starting at 5, one winner) for whatever it leaves out."""
    if settings.get("format") == "sit_and_go":
        given = {k: v for k, v in settings.items() if k not in ("name", "buy_in")}
        return sit_and_go(str(settings.get("name", "")), settings.get("buy_in"), **given)  # type: ignore[arg-type]
    return checked(msgspec.convert(settings, TournamentSpec))


def sit_and_go(name: str, buy_in: int, **settings: object) -> TournamentSpec:
    """A Sit&Go (Appendix 1): one table of at most 7, starting by itself at 5 entries,
    6 shoes, one winner."""
    base: dict[str, object] = dict(format="sit_and_go", max_entrants=SIT_AND_GO_SEATS, max_tables=1,
                                   min_entrants=SIT_AND_GO_START, prizes=[100], finalists=SIT_AND_GO_SEATS)
    base.update(settings)
    return checked(msgspec.convert({"name": name, "buy_in": buy_in, **base}, TournamentSpec))


def checked(spec: TournamentSpec) -> TournamentSpec:
    """Refuse settings that contradict each other or the house's rules, with a precise code."""

    def bad(why: str) -> GameError:
        return GameError("invalid_tournament", f"Tournament {spec.name!r}: {why}.")

    if sum(spec.prizes) != 100:
        raise bad(f"the prize split {spec.prizes} does not add up to 100%")
    if list(spec.prizes) != sorted(spec.prizes, reverse=True):
        raise bad("a better place never wins less")
    if spec.max_bet < spec.min_bet:
        raise bad("the maximum bet is below the minimum")
    if spec.min_bet > spec.stack:
        raise bad("the minimum bet is more than a starting stack")
    if spec.min_entrants > spec.max_entrants:
        raise bad("it needs more entrants to start than it takes")
    if spec.max_entrants > 7 * spec.max_tables:
        raise bad(f"{spec.max_entrants} entrants do not fit {spec.max_tables} tables of 7")
    if spec.format == "sit_and_go":
        if spec.max_tables != 1 or spec.max_entrants > SIT_AND_GO_SEATS:
            raise bad("a Sit&Go is one table of at most 7")
        if spec.buy_in > SIT_AND_GO_MAX_BUY_IN:
            raise bad("a Sit&Go's buy-in is at most EUR 100")
        if len(spec.prizes) != 1:
            raise bad("a Sit&Go has one winner")
        if spec.min_entrants < SIT_AND_GO_START:
            raise bad(f"a Sit&Go starts at {SIT_AND_GO_START} entries at the least (Appendix 1)")
    elif spec.starts_at <= 0:
        raise bad("a tournament needs a start time")
    if spec.mode == "live" and not spec.staff:
        raise bad("a live tournament needs its croupiers (staff)")
    return spec
