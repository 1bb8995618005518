"""A shoe that deals chosen cards first: for tests, croupier training and replaying a
disputed round. ``rigged_shoe`` returns a Shuffle order and a cut point such that, once
cut and burned, the shoe deals ``cards`` in that order (then the rest)."""

from __future__ import annotations

from blackjack.cards import RANKS, full_shoe, parse_card
from blackjack.profiles import Profile


def _card(spec: int | str, left: list[int]) -> int:
    if isinstance(spec, int):
        return spec
    t = spec.strip().upper()
    if t in RANKS:  # a rank alone: any suit still in the shoe
        r = RANKS.index(t)
        for s in range(4):
            if left[s * 13 + r]:
                return s * 13 + r
        raise ValueError(f"no {spec} left in the shoe")
    return parse_card(t)


def rigged_shoe(profile: Profile, cards: list[int | str] | str, cut_at: int | None = None) -> tuple[list[int], int]:
    if isinstance(cards, str):
        cards = cards.split()
    left = [profile.decks] * 52
    wanted: list[int] = []
    for spec in cards:
        c = _card(spec, left)
        if left[c] <= 0:
            raise ValueError(f"the shoe holds only {profile.decks} of card {c}")
        left[c] -= 1
        wanted.append(c)
    rest = [c for c in full_shoe(profile.decks)]
    for c in wanted:
        rest.remove(c)
    burn, rest = rest[: profile.burn_cards], rest[profile.burn_cards :]
    after_cut = burn + wanted + rest
    at = profile.cut_margin if cut_at is None else cut_at
    # The cut moves the top ``at`` cards under the rest; undo it.
    order = after_cut[-at:] + after_cut[:-at]
    return order, at
