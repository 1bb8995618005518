"""House profiles: every rule that differs between houses is a field here.

The built-in ``campione``, ``titano`` and ``lugano`` live in ``profiles/*.json`` and
follow ``RULES.md``; an operator loads a new one with ``load_profile(path)``. A profile
that contradicts itself is refused by ``validate`` with a ``GameError`` naming the reason.
New rules (Lugano's side bets, say) are new fields with a default, so older files stay valid.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Literal

import msgspec

from blackjack.jackpot import Blazing7s, check_blazing
from blackjack.sidebets import PerfectPairs, Push22, TwentyOnePlusThree, check_tables
from games.errors import GameError

BOXES = 7


class Profile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    decks: int
    # Fewest decks the house allows (Campione: "minimo quattro").
    min_decks: int = 1
    # "after_players": no hole card, the dealer's second card comes at the dealer's turn.
    # "face_down": the second card is dealt face down with the deal and shown at the
    # dealer's turn (no peek: a dealer blackjack is only found then).
    dealer_second_card: Literal["after_players", "face_down"] = "after_players"
    # "all": a dealer blackjack takes every bet, doubles and splits included (European);
    # "original": doubles and splits are returned, only the original bet loses.
    dealer_blackjack_takes: Literal["all", "original"] = "all"
    dealer_hits_soft_17: bool = False
    # Up-card ranks (1 = ace, 10 = any ten-value) against which a blackjack may take even money.
    even_money_against: list[int] = msgspec.field(default_factory=lambda: [1])
    # May a blackjack be insured against the dealer's ace? Campione and Titano: "ogni
    # giocatore" may insure, a blackjack included (half the bet: the same as even money);
    # Lugano: "Un Black Jack non può essere assicurato".
    blackjack_insurable: bool = True
    # Two-card totals that may double ([] = any); soft totals only if double_soft.
    double_totals: list[int] = msgspec.field(default_factory=list)
    double_soft: bool = True
    double_after_split: bool = True
    # Most hands one box may become by splitting (2 = one split, 4 = resplit to four).
    max_split_hands: int = 4
    resplit_aces: bool = False
    # Split tens that draw an ace make 21, never blackjack; if this is set the hand may
    # still hit or double counting the ace as 1 (Campione Art. 11).
    split_tens_ace_continues: bool = False
    # What the table maximum limits: each person's stake in each box, the box holder's
    # box, or the whole box with the bets behind it.
    max_applies_to: Literal["person_per_box", "box", "box_with_behind"] = "box"
    places_behind: int = 0
    # A player alone at the table must play at least this many boxes.
    lone_player_min_boxes: int = 1
    # When this many different players bet in one round, each may hold only one box (0 = never).
    crowded_at: int = 0
    button: bool = False
    # A card drawn by mistake. "offer" (Campione Art. 24): it lies face up and goes to the
    # next hand that asks, else to the dealer; a card turned in the shoe is burned only
    # during the players' drawing (Art. 17: during the deal and the dealer's play it stays
    # valid). "burn" (Titano Art. 17, Lugano): a misdrawn card that was seen is burned,
    # whatever the phase of the round.
    misdrawn_card: Literal["offer", "burn"] = "offer"
    void_round_on_short_shoe: bool = False
    # Cards left behind the cut card; the cut itself must leave cut_margin cards each side.
    cut_card_from_end: int = 78
    cut_margin: int = 10
    # Campione Art. 30: a player who declines the cut passes it to the box holder on his
    # left (the next higher box, wrapping round), the house cutting when all decline.
    # False: a declined cut goes straight to the house.
    cut_passes_left: bool = False
    burn_cards: int = 5
    blackjack_pays: tuple[int, int] = (3, 2)
    # Limits (minor units): a table's minimum and maximum must satisfy these.
    max_to_min_ratio: int = 0  # 0 = free; Campione's 1:10 means max <= 10 * min
    max_bet_cap: int = 0  # 0 = no cap; Campione: CHF 5,000 per person per box
    currency: str = "CHF"
    # Lugano's extras (issue 4). A side bet whose pay table is None is not offered.
    perfect_pairs: PerfectPairs | None = None
    twenty_one_plus_three: TwentyOnePlusThree | None = None
    push_22: Push22 | None = None
    blazing_7s: Blazing7s | None = None
    # Free Bet blackjack: free splits (any pair but 4s and tens) and free doubles on hard
    # 9-11, the house's chip never lost by the player; a dealer 22 pushes all but blackjacks.
    free_bet: bool = False

    @property
    def cards(self) -> int:
        return self.decks * 52

    @property
    def hole_card(self) -> bool:
        return self.dealer_second_card == "face_down"

    # The doubling and Free Bet rules, written once: the table applies them to a hand, the
    # basic strategy to every abstract total.

    def allows_double(self, hard: int, soft: bool, after_split: bool) -> bool:
        """May a two-card hand double with the player's own chips? ``hard`` counts aces
        as 1; a soft hand may double if either of its totals is listed."""
        if after_split and not self.double_after_split:
            return False
        totals = self.double_totals
        if soft:
            return self.double_soft and (not totals or hard in totals or hard + 10 in totals)
        return not totals or hard in totals

    def free_double(self, total: int, soft: bool) -> bool:
        """Free Bet: a two-card hard 9, 10 or 11 doubles on the house's chip."""
        return self.free_bet and not soft and 9 <= total <= 11

    def free_split(self, value: int) -> bool:
        """Free Bet: any pair but 4s and ten-values splits on the house's chip."""
        return self.free_bet and value not in (4, 10)


def validate(p: Profile) -> Profile:
    """Refuse a profile whose rules contradict each other; return it unchanged if sound."""

    def bad(reason: str) -> GameError:
        return GameError("invalid_profile", f"Profile {p.name!r}: {reason}.")

    if not p.name:
        raise bad("it needs a name")
    if not 1 <= p.decks <= 8:
        raise bad(f"{p.decks} decks; a shoe holds 1 to 8")
    if p.decks < p.min_decks:
        raise bad(f"{p.decks} decks is fewer than its own minimum of {p.min_decks}")
    if not set(p.even_money_against) <= {1, 10}:
        raise bad("even money can only be offered against an ace (1) or a ten (10)")
    if any(not 4 <= t <= 21 for t in p.double_totals):
        raise bad("double totals must lie between 4 and 21")
    if p.double_totals and p.double_soft and not any(t >= 13 for t in p.double_totals):
        raise bad("soft doubling is allowed but no listed total is a soft total (13 to 21)")
    if not 1 <= p.max_split_hands <= 8:
        raise bad("max_split_hands must be between 1 (no splitting) and 8")
    if p.max_split_hands == 1 and (p.double_after_split or p.resplit_aces or p.split_tens_ace_continues):
        raise bad("splitting is forbidden, so no rule about split hands can apply")
    if p.resplit_aces and p.max_split_hands < 3:
        raise bad("resplitting aces needs room for at least three hands")
    if not 0 <= p.places_behind <= 6:
        raise bad("places behind a box must be between 0 and 6")
    if not 1 <= p.lone_player_min_boxes <= BOXES:
        raise bad(f"a lone player cannot be made to play more than {BOXES} boxes")
    if p.crowded_at and not 2 <= p.crowded_at <= BOXES * (1 + p.places_behind):
        raise bad("crowded_at must be 0 (never) or a number of players the table can hold")
    if p.max_applies_to == "box_with_behind" and p.places_behind == 0:
        raise bad("the maximum covers bets behind, but the profile has no places behind")
    if not 0 <= p.burn_cards < p.cards // 2:
        raise bad("burn_cards must leave most of the shoe to play")
    if p.cut_margin < 1 or 2 * p.cut_margin >= p.cards:
        raise bad("cut_margin must leave room to cut")
    if not 0 <= p.cut_card_from_end <= p.cards - p.burn_cards - 20:
        raise bad(f"the cut card {p.cut_card_from_end} cards from the end leaves too few cards to play")
    num, den = p.blackjack_pays
    if num <= 0 or den <= 0:
        raise bad("blackjack_pays must be a positive ratio")
    if p.max_to_min_ratio < 0 or p.max_bet_cap < 0:
        raise bad("limit rules cannot be negative")
    from games.money import CURRENCIES

    if p.currency not in CURRENCIES:
        raise bad(f"unknown currency {p.currency!r}")
    reason = check_tables(p.perfect_pairs, p.twenty_one_plus_three, p.push_22)
    if not reason and p.blazing_7s is not None:
        reason = check_blazing(p.blazing_7s)
    if reason:
        raise bad(reason)
    if p.free_bet and p.max_split_hands < 2:
        raise bad("Free Bet splits for free, but the profile forbids splitting")
    return p


def parse_profile(data: bytes | str) -> Profile:
    try:
        p = msgspec.json.decode(data, type=Profile)
    except msgspec.ValidationError as exc:
        raise GameError("invalid_profile", f"Profile file is malformed: {exc}.") from None
    except msgspec.DecodeError as exc:
        raise GameError("invalid_profile", f"Profile file is not JSON: {exc}.") from None
    return validate(p)


def load_profile(path: str | Path) -> Profile:
    """An operator's profile file (JSON with the fields of ``Profile``)."""
    return parse_profile(Path(path).read_bytes())


BUILTIN = ("campione", "titano", "lugano")
_cache: dict[str, Profile] = {}


def builtin(name: str) -> Profile:
    if name not in BUILTIN:
        raise GameError("unknown_profile", f"No built-in profile {name!r}; there are {', '.join(BUILTIN)}.")
    if name not in _cache:
        data = resources.files("blackjack").joinpath(f"profiles/{name}.json").read_bytes()
        _cache[name] = parse_profile(data)
    return _cache[name]


def profile(name_or_path: str) -> Profile:
    """A built-in profile by name, else an operator's file by path."""
    if name_or_path in BUILTIN:
        return builtin(name_or_path)
    return load_profile(name_or_path)
