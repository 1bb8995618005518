"""The pure roulette engine (Campione rules, single zero) and its exact odds report.

``RouletteTable`` (engine.py) takes the commands of commands.py and returns the events of
events.py plus ``games.wagers`` money events; layout.py names every combination,
announced.py expands announced bets, settlement.py settles a spin (the engine and the
odds report share it), limits.py holds the table settings, draw.py draws a number.
"""

from .engine import RouletteTable, TableView
from .limits import TableSettings, default_settings
from .state import Actor, RouletteState

__all__ = ["Actor", "RouletteState", "RouletteTable", "TableSettings", "TableView", "default_settings"]
