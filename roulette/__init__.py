"""The pure roulette engine (Campione rules, single zero).

``RouletteTable`` (engine.py) takes the commands of commands.py, each with the
``games.commands.Actor`` who gives it, and returns the events of events.py plus
``games.wagers`` money events. phases.py is the phase table (what each phase accepts),
roles.py the role rules (who may send what, for whose chips); layout.py names every
combination, announced.py expands announced bets, settlement.py settles a spin (the
engine and the odds report in ``tools`` share it), limits.py holds the table settings,
view.py what a viewer sees, draw.py draws a number.
"""

from games.commands import Actor

from .engine import RouletteTable
from .limits import TableSettings, default_settings
from .phases import Phase
from .state import RouletteState
from .view import TableView

__all__ = ["Actor", "Phase", "RouletteState", "RouletteTable", "TableSettings", "TableView", "default_settings"]
