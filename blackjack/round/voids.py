"""A misdeal voids the round (Campione Art. 19, Titano Art. 18): the whole round, or only
the boxes the croupier names, whose stakes go back and whose cards leave the round."""

from __future__ import annotations

from blackjack import commands as C
from blackjack.phases import Phase
from blackjack.round.common import Out, box_numbered
from blackjack.round.dealer import end_round, void_boxes
from blackjack.round.offers import answered
from blackjack.round.steps import run
from blackjack.state import TableState
from games.commands import Actor
from games.errors import GameError


def void_round(s: TableState, cmd: C.VoidRound, actor: Actor, out: Out) -> None:
    if cmd.boxes:
        boxes = [box_numbered(s, n) for n in cmd.boxes]
        if len(set(cmd.boxes)) != len(cmd.boxes):
            raise GameError("no_such_box", "A box is listed twice.")
    else:
        boxes = list(s.boxes)
    void_boxes(s, out, boxes, actor.id, cmd.reason)
    if len(boxes) == len(s.boxes):
        end_round(s, out)
        return
    # Art. 19: only the listed boxes are void; their cards leave the round.
    voided = {b.number for b in boxes}
    turn = s.boxes[s.turn_box] if s.turn_box < len(s.boxes) else None
    s.deal_queue = [t for t in s.deal_queue if t.box not in voided]
    if turn is not None and turn.number in voided:
        s.behind = []
        s.behind_action = ""
    if s.phase == Phase.OFFERS:
        # A void box's stakes are returned: its insurance / even money offers lapse.
        s.offers = [o for o in s.offers if o.box not in voided]
        if not s.offers:
            answered(s, out, None)
            return
    run(s, out)
