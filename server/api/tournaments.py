"""``/tournaments``: blackjack tournaments and Sit&Go (Titano Art. 22-29, Appendix 1).

The director creates one; every other step is a command to its coordinator, over this API
or the websocket's ``play`` with the tournament's id (the same commands, the same answers):
the director opens and closes registration, starts, pauses, resumes, expels and cancels;
a player registers himself (paid from his wallet) and checks in; the cashier registers a
player who pays at the desk or by bank transfer. Its channel (``subscribe`` to its id)
carries registrations, the draw, seating, standings after every hand and the prizes.
"""

from __future__ import annotations

import secrets

import msgspec
from litestar import Controller, get, post

from blackjack.tournament.spec import fee, with_defaults
from games.errors import GameError
from server.api.schemas import NewTournament, TournamentAnswer, TournamentCommand, TournamentDetail, TournamentSummary
from server.auth import Principal
from server.kinds import kind as game_kind
from server.kinds.base import TableInfo
from server.kinds.tournament import spec_of
from server.manager import TableManager
from server.policy import DIRECTION, require_roles
from server.protocol import Rejected, encoder
from server.resources import Resources
from server.tournaments import TournamentService


def summary(manager: TableManager, info: TableInfo, status: str) -> TournamentSummary:
    spec = spec_of(info)
    return TournamentSummary(info.id, spec.name, spec.format, spec.starts_at, spec.buy_in, fee(spec), spec.currency,
                             spec.mode, manager.router.owner(info.id) or "", status)


class TournamentsController(Controller):
    path = "/tournaments"
    tags = ["tournaments"]

    @get("/", operation_id="ListTournaments", summary="Tournaments and Sit&Go on the floor")
    async def list_tournaments(self, resources: Resources, manager: TableManager) -> list[TournamentSummary]:
        service = TournamentService(resources)
        listed = service.listed()
        statuses = await service.statuses([info.id for info in listed])
        return [summary(manager, info, statuses[info.id]) for info in listed]

    @post("/", operation_id="CreateTournament", guards=[require_roles(*DIRECTION)],
          summary="Create a tournament or a Sit&Go (the director)")
    async def create(self, caller: Principal, data: NewTournament, resources: Resources,
                     manager: TableManager) -> TournamentSummary:
        try:
            if not isinstance(data.spec, dict):
                raise msgspec.ValidationError("the spec is an object")
            spec = with_defaults(data.spec)
        except msgspec.ValidationError as exc:
            raise GameError("invalid_tournament", f"Not a valid tournament: {exc}") from None
        return summary(manager, await TournamentService(resources).create(caller, data.id, spec), "scheduled")

    @get("/{tournament_id:str}", operation_id="GetTournament",
         summary="A tournament: registrations, phase, tables, standings, cut line, prizes")
    async def show(self, caller: Principal, tournament_id: str, resources: Resources,
                   manager: TableManager) -> TournamentDetail:
        info = TournamentService(resources).info(tournament_id)
        manager.router.reachable(tournament_id)
        seq, view = await manager.router.view(tournament_id, caller)
        # (the view: a dict here, the owner's JSON as it came from another process)
        fields = msgspec.json.decode(view) if isinstance(view, msgspec.Raw) else view
        field = fields.get if isinstance(fields, dict) else lambda name: getattr(fields, name, None)
        status = "paused" if field("status") == "running" and field("paused") else str(field("status") or "")
        return TournamentDetail(summary(manager, info, status), seq, view)

    @post("/{tournament_id:str}/commands", operation_id="TournamentCommand", status_code=200,
          summary="Send the tournament a command (register, check in, open/close registration, start, pause, "
                  "resume, expel, cancel)")
    async def command(self, caller: Principal, tournament_id: str, data: TournamentCommand, resources: Resources,
                      manager: TableManager) -> TournamentAnswer:
        TournamentService(resources).info(tournament_id)
        kind = game_kind("tournament")
        raw = encoder.encode(data.command)
        command = kind.decode_command(raw)
        cid = data.cid or f"http-{secrets.token_hex(8)}"
        answer = await manager.router.submit(caller, cid, tournament_id, command, raw)
        if isinstance(answer, Rejected):
            raise GameError(answer.code, answer.message)
        return TournamentAnswer(cid, answer.seq)
