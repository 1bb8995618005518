"""The round's rules, one module per part of it, as plain functions over the table's state.

Each command handler is ``f(state, command, actor, out)``: ``blackjack.table`` has already
checked (``blackjack.phases``) that the actor may send the command in this phase; the
handler checks the rest, raising ``GameError`` before it changes anything, then changes the
state and appends the events to ``out``. A check that ``blackjack.legal`` needs too is a
``*_refusal`` function (``GameError | None``) that both call, so the two cannot drift.
Lower modules never call higher ones: ``common`` < ``deal`` < ``sidebets`` < ``dealer`` <
``steps`` (the automatic steps) < the command modules (``betting``, ``offers``,
``decisions``, ``voids``, ``shoe_commands``).
"""
