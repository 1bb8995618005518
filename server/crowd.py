"""A crowd table (issue 14): a roulette wheel with thousands of players on it, where each
player's stream carries the table's events and his own bets, not everyone's.

At an ordinary table every subscriber gets every committed batch as one ``events`` frame:
2,000 players betting 5 times each means 2,000 copies of every bet (≈ 6 GB of frames in a
15 s window, the fan-out that kept the crowd's ack p99 at 200 ms). A table created with the
setting ``crowd: true`` shows a *player* only:

* the events that name no player (the spin opening, the launch, ``bets_closed``, the result,
  the settlement's summary, limits, ...), and those that name him (``player`` is his id);
* ``spin_result`` with only his bets in ``bets`` and ``partage_players``;
* a view (snapshot, ``GET /tables/{id}``) whose ``bets`` and ``late`` are his own.

A batch with nothing for him is not sent to him at all; its seq still counts as seen, so a
player's stream has holes in its seqs where other players' bets were (the protocol says so).
Staff (croupier, chef, director, inspector, ...) see everything, as at any table. The filter
works on the frame the table published, once per frame for the parts every socket shares
(``server.ws.shares``), then per socket only a join of the parts it may see; replays and
filled gaps read from PostgreSQL go through the same rule (``sees_stored``)."""

from __future__ import annotations

from typing import Any

import msgspec

from server.auth import Principal
from server.kinds.base import TableInfo

# The events whose lists name several players: only his entries are shown to a player.
NAMED_LISTS = {"spin_result": ("bets", "partage_players")}


class Head(msgspec.Struct):
    """What an event's JSON says of whom it is about, read without decoding the rest."""

    type: str = ""
    player: Any = None

    @property
    def owner(self) -> str:  # the player an event is about ("": the table's own)
        return self.player if isinstance(self.player, str) else ""


head_decoder = msgspec.json.Decoder(Head)


def is_crowd(info: TableInfo) -> bool:
    return info.settings.get("crowd") is True


def filtered_for(info: TableInfo, who: Principal | None) -> bool:
    """Whether ``who``'s stream and view at the table are a player's share of it."""
    return is_crowd(info) and (who is None or who.role == "player")


def his_share(event: dict[str, Any], player: str) -> dict[str, Any]:
    """An event that lists several players' entries, with only ``player``'s."""
    out = dict(event)
    for name in NAMED_LISTS.get(event.get("type", ""), ()):
        items = out.get(name)
        if isinstance(items, list):
            out[name] = [x for x in items if entry_owner(x) == player]
    return out


def his_event(event: dict[str, Any], player: str) -> dict[str, Any] | None:
    """A decoded event as ``player`` may see it at a crowd table (None: another player's)."""
    owner = event.get("player")
    if isinstance(owner, str) and owner and owner != player:
        return None
    return his_share(event, player) if event.get("type") in NAMED_LISTS else event


def view_for(view: dict[str, Any], player: str) -> dict[str, Any]:
    """A crowd table's view (as a dict) with only ``player``'s bets and late bets."""
    out = dict(view)
    for name in ("bets", "late"):
        items = out.get(name)
        if isinstance(items, list):
            out[name] = [x for x in items if entry_owner(x) == player]
    return out


def entry_owner(item: Any) -> str:
    """Whose an entry of a list is: a bet's (decoded or a struct) ``player``, or a name itself
    (``partage_players``)."""
    if isinstance(item, str):
        return item
    owner = item.get("player", "") if isinstance(item, dict) else getattr(item, "player", "")
    return owner if isinstance(owner, str) else ""


def sees_stored(payload: bytes, player: str) -> Any:
    """A stored event (JSON) as ``player`` may see it at a crowd table: None if it is another
    player's, else the event (his share of it where it lists several players')."""
    head = head_decoder.decode(payload)
    if head.owner and head.owner != player:
        return None
    if head.type in NAMED_LISTS:
        return his_share(msgspec.json.decode(payload), player)
    return msgspec.Raw(payload)
