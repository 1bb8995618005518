"""What the test folders share (on the path through pytest's ``pythonpath = ["tests"]``):

- ``actors``: the people and the server as the engines see them;
- ``refusals``: the one check that a refused command changes nothing;
- ``blackjack``: a blackjack table dealt from a rigged shoe, and what tests read from it;
- ``servers``: ``casino serve`` in a subprocess, on its own embedded database;
- ``databases``: a throwaway database on the test run's PostgreSQL, what a backend read or waits for;
- ``ledger_roles``: the ledger's property tests' cast of accounts;
- ``sockets``: a socket's ``Connection`` with fake peers, frames pushed through its feed.

The load tools' own server launcher (``loadtest.server_process``) is reused by the server
tests' fixtures rather than copied here.
"""
