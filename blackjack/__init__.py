"""Blackjack: a pure rule engine (table.py), house profiles, the shoe, basic strategy and a simulator."""
