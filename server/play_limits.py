"""A player's own stake and loss limits (``server.responsible`` sets them), checked where a
bet's money leaves his wallet: inside the table's commit, before the ledger's holds.

A bet is refused (``stake_limit`` / ``loss_limit``, the batch's other commands kept: the
runtime tries each alone) when, in a rolling window (24 hours, 7 days, 30 days), it would
take him past his limit:

* **staked**: every bet placed in the window (the ledger's holds from his wallet), less
  those given back unplayed (withdrawn, refunded, a voided round: voids coded ``voided``);
* **lost**: what the tables kept of those bets (the posted part of each hold; a bet still
  in play counts as lost whole) less what came back to him for them (wins and refunds, by
  the bet's ref): a player who is up may stake more before he reaches his loss limit.

A player under a cool-off or self-exclusion in force (``server.responsible``) stakes no real
money at all (``self_excluded`` / ``cooling_off``): his login, requests and sockets are
refused or closed already, and this is where a socket of his that a process never heard about
(the broker away: docs/operations.md) is stopped too. Tournament points are not money; an
absent player's charge there is the table's own doing.

A tournament entry paid from his wallet (buy-in and fee, ``server.tournaments``) counts as a
bet does: staked, less a refund; lost, less a refund and the prize he won in it.

A new bet counts whole against both. Each bet is judged by when it was placed, its
settlement with it. A batch's statement finds whether any player whose wager it places has
limits or an exclusion (then it writes nothing, and the batch runs again with the replay
check, ``store.answered``, which names the senders among them, and ``store.limited_among``
the others: a late bet the chef accepts is the player's money; ``server.runtime`` then
checks first every batch that holds one of them, its other players' commands included);
only they cost a query (one per batch with their bets), and their commits are serialized
per player (an advisory lock), so two tables cannot both let a last bet through.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from games.errors import GameError
from games.ledger import accounts
from games.money import currency as currency_of
from games.players import is_floor
from games.wagers import WagerPlaced
from server.responsible import IN_FORCE, WINDOWS, exclusion_refusals

# What each window's limits and usage are, for a set of players (the limit in force: a
# raise whose time came applies).
_LIMITS = f"""
SELECT user_id, kind, period, {IN_FORCE} AS lim
  FROM play_limits WHERE user_id = ANY($1::text[]) AND currency = $2"""

# What a player has staked and lost in each window, from his wallet in the ledger: his bets
# (holds coded 'bet') and his tournament entries (buy-in and fee, paid from the wallet: money
# risked as a bet is; a refund gives it back unplayed, a prize wins some back), each judged
# by when it was placed, its outcome with it.
_USED = f"""
WITH paid_out AS (  -- his wallet's stakes in the lookback: one pass over its debits
    SELECT id, ref, op, code, amount, at FROM ledger_transfers
     WHERE debit = $1 AND at > now() - interval '30 days'
       AND ((op = 'hold' AND code = 'bet')
            OR (op = 'transfer' AND code IN ('tournament_buy_in', 'tournament_fee')))),
paid_in AS (  -- and what came back for them: one pass over its credits
    SELECT id, ref, code, amount FROM ledger_transfers
     WHERE credit = $1 AND op = 'transfer' AND at > now() - interval '31 days'
       AND code IN ('win', 'refund', 'tournament_refund', 'tournament_prize')),
back AS (
    SELECT ref, sum(amount) AS amount FROM paid_in WHERE code IN ('win', 'refund') GROUP BY ref),
bets AS (
    SELECT h.amount, h.at, s.op AS settled, s.code AS how, s.amount AS kept, coalesce(b.amount, 0) AS back
      FROM paid_out h
      LEFT JOIN ledger_transfers s ON s.hold = h.id
      LEFT JOIN back b ON b.ref = h.ref
     WHERE h.op = 'hold'),
paid AS (  -- a tournament's transfers' ids begin with its id ("<tournament>/entry/...")
    SELECT split_part(id, '/', 1) AS tournament, min(at) AS at, sum(amount) AS amount FROM paid_out
     WHERE op = 'transfer' GROUP BY 1),
came_back AS (
    SELECT split_part(id, '/', 1) AS tournament,
           coalesce(sum(amount) FILTER (WHERE code = 'tournament_refund'), 0) AS refunded,
           coalesce(sum(amount) FILTER (WHERE code = 'tournament_prize'), 0) AS won
      FROM paid_in WHERE code IN ('tournament_refund', 'tournament_prize') GROUP BY 1),
entries AS (
    SELECT p.at, p.amount - coalesce(c.refunded, 0) AS staked, coalesce(c.won, 0) AS won
      FROM paid p LEFT JOIN came_back c USING (tournament))
SELECT w.period,
       ((SELECT coalesce(sum(b.amount) FILTER (WHERE b.settled IS DISTINCT FROM 'void' OR b.how <> 'voided'), 0)
           FROM bets b WHERE b.at > now() - w.span)
        + (SELECT coalesce(sum(e.staked), 0) FROM entries e WHERE e.at > now() - w.span))::bigint AS staked,
       ((SELECT coalesce(sum(CASE WHEN b.settled = 'post' THEN b.kept WHEN b.settled IS NULL THEN b.amount
                                  ELSE 0 END), 0) - coalesce(sum(b.back), 0)
           FROM bets b WHERE b.at > now() - w.span)
        + (SELECT coalesce(sum(e.staked - e.won), 0) FROM entries e WHERE e.at > now() - w.span))::bigint AS lost
  FROM {WINDOWS}"""


def _stake(ev: Any) -> bool:
    """A wager that takes a player's own money (not the floor's, the house's chips)."""
    return isinstance(ev, WagerPlaced) and ev.amount > 0 and not is_floor(ev.player)


def stakers(events: list[Any]) -> set[str]:
    """The players whose money the events stake, whoever sent the commands."""
    return {ev.player for ev in events if _stake(ev)}


async def check(conn: Any, currency: str, events: list[Any], limited: set[str]) -> None:
    """Inside the commit's transaction, before its holds: refuse the batch (GameError) if a
    bet in it takes its player past one of his stake or loss limits. ``limited``: the
    batch's players who have limits (read with the batch's replay check); the others cost
    nothing."""
    await check_stakes(conn, currency, [(ev.player, ev.amount) for ev in events
                                        if _stake(ev) and ev.player in limited])


async def check_stakes(conn: Any, currency: str, stakes: list[tuple[str, int]], *,
                       exclusions: bool = True) -> None:
    """Inside the commit's transaction: refuse (GameError) the first of ``stakes`` (player,
    amount: a bet, a tournament entry) that takes its player past one of his stake or loss
    limits in ``currency``, or that an exclusion in force forbids (unless the caller looked
    that up already: ``exclusions``)."""
    if not stakes:
        return
    players = sorted({player for player, _ in stakes})
    if exclusions and currency_of(currency).cash:
        excluded = await exclusion_refusals(conn, players)
        for player, _ in stakes:  # (the batch's first: the runtime then tries each command alone)
            if player in excluded:
                raise excluded[player]
    limits: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for r in await conn.fetch(_LIMITS, players, currency):
        if r["lim"] is not None:
            limits[r["user_id"]][(r["kind"], r["period"])] = r["lim"]
    if not limits:
        return
    used: dict[str, dict[str, tuple[int, int]]] = {}
    for player in sorted(limits):  # (in one order: two commits never wait on each other crosswise)
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('play:' || $1))", player)
        wallet = accounts.wallet(player, currency)
        used[player] = {r["period"]: (r["staked"], r["lost"]) for r in await conn.fetch(_USED, wallet)}
    running: dict[str, int] = defaultdict(int)
    for player, amount in stakes:
        if player not in limits:
            continue
        running[player] += amount
        for (kind, period), lim in sorted(limits[player].items()):
            staked, lost = used[player][period]
            so_far = staked if kind == "stake" else lost
            if so_far + running[player] > lim:
                allowed = max(lim - so_far - (running[player] - amount), 0)
                raise GameError(f"{kind}_limit",
                                f"Over {player}'s own {period} {kind} limit: at most {allowed} more may be "
                                f"{'staked' if kind == 'stake' else 'risked'} now.",
                                allowed=allowed, period=period)
