"""Blackjack tournaments and Sit&Go (Titano Art. 22-29, Appendix 1): the pure coordinator.

``Coordinator.handle(command, actor) -> events``, like the table engines: registration and
its money, check-in, the seating draw, the phases (elimination, final, tie-break shoes),
the ranking and the prizes. It drives ordinary blackjack tables in tournament mode
(``blackjack.state.TournamentPlay``) by *orders*: table commands it numbers per table
(``blackjack.commands.TournamentSeat`` ...), which the server delivers until the table's
report says they were applied; the tables' reports come back as ``TableReport`` commands.
No I/O, no clock (times come in commands), no randomness but the draw seed it is handed.
"""
