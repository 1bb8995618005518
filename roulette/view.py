"""What anyone at a roulette table sees: every bet on the layout, as at a real table, and
for the viewer his own stake, his partage preference and what he may send now."""

from __future__ import annotations

import msgspec

from .limits import TableSettings
from .state import Bet, LateBet, RouletteState


class TableView(msgspec.Struct, frozen=True):
    table: str
    phase: str
    spin: int
    settings: TableSettings
    pending_settings: TableSettings | None
    bets: list[Bet]
    prisoners: list[str]
    late: list[LateBet]
    last_numbers: list[int]
    derniere: bool
    derniere_spin: int  # the announced last spin, 0 if none
    societa: dict[str, list[str]]
    viewer: str | None
    viewer_staked: int
    viewer_partage: bool
    # The command types (``type`` tags) the viewer may send now, by the phase table and the
    # role rules (``RouletteTable.legal_commands``); empty for a watcher.
    legal: list[str] = msgspec.field(default_factory=list)
    # An RNG spin's commitment (sha256 of its secret seed), published before any bet.
    commitment: str = ""


def table_view(s: RouletteState, viewer: str | None, legal_commands: list[str]) -> TableView:
    return TableView(
        table=s.table,
        phase=s.phase,
        spin=s.spin,
        settings=s.settings,
        pending_settings=s.pending_settings,
        bets=list(s.bets),
        prisoners=[b.wager for b in s.bets if b.prison],
        late=list(s.late),
        last_numbers=list(s.last_numbers),
        derniere=s.derniere_spin != 0,
        derniere_spin=s.derniere_spin,
        societa={k: list(v) for k, v in s.societa.items()},
        viewer=viewer,
        viewer_staked=sum(b.amount for b in s.bets if b.player == viewer),
        viewer_partage=viewer in s.partage_players,
        legal=legal_commands,
        commitment=s.commitment,
    )
