"""Tools that drive the engines from outside: exact odds reports, the blackjack simulator
and their ``casino`` subcommands. The engine packages hold only rules; these may time
themselves and start processes."""
