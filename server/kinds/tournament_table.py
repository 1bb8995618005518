"""A tournament's table tells its tournament that something it reports happened.

The tournament's driver (``server.tournaments``) reads the table's stored events itself
(they are the reports: seated, hand standings, eliminations, the phase's end) and polls
for them; when the tournament runs in this process too, this companion wakes it at once.
"""

from __future__ import annotations

from typing import Any

from blackjack import events as E
from server.companions import Companion

REPORTED = (E.TournamentSeated, E.TournamentPaused, E.HandStandings, E.PlayerEliminated, E.PlayerExpelled,
            E.TournamentTableDone)


class TournamentTableCompanion(Companion):
    def committed(self, events: list[Any]) -> None:
        if not any(isinstance(ev, REPORTED) for ev in events):
            return
        tournament = self.runtime.info.settings.get("tournament", "")
        rt = self.runtime.ctx.manager.runtimes.get(tournament)
        for companion in getattr(rt, "companions", ()):
            nudge = getattr(companion, "nudge", None)
            if nudge is not None:
                nudge(self.runtime.info.id)
