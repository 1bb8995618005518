"""Blackjack: a pure rule engine (``table.BlackjackTable``, its phase table in ``phases.py``
and the round's rules in ``round/``), house profiles, side bets and the Blazing 7s pool, and
basic strategy. Cards and the shoe are ``games.cards`` and ``games.shoe``."""
