"""Between and before the deals: seats, bets, the close of betting ("rien ne va plus"),
the table's limits, releasing a seat and closing the table."""

from __future__ import annotations

from blackjack import commands as C
from blackjack import events as E
from blackjack import jackpot as J
from blackjack.phases import ROUND_PHASES, Phase
from blackjack.profiles import BOXES
from blackjack.round import tournament
from blackjack.round.common import MAX_TABLE_BET as MAX_TABLE_BET  # re-exported: its old home
from blackjack.round.common import Out, bet_id, check, check_limits, holder_bet, owner, return_bets
from blackjack.round.dealer import end_round
from blackjack.round.sidebets import side_bets_to_boxes
from blackjack.round.steps import run
from blackjack.state import DEALER, HOLE, Bet, Box, CardTarget, Hand, TableState, Wager
from blackjack.wager_kinds import WagerKind
from games.commands import Actor
from games.errors import GameError
from games.players import is_floor
from games.validation import ENTERED_MAX_FACTOR
from games.wagers import ChipsUnclaimed, WagerPlaced, WagerVoided

# -- seats ----------------------------------------------------------------------------------


def sit_refusal(s: TableState, actor: Actor, box: int) -> GameError | None:
    if not 1 <= box <= BOXES:
        return GameError("no_such_box", f"Boxes are numbered 1 to {BOXES}.")
    if s.seats[box]:
        return GameError("seat_taken", f"Box {box} is taken.")
    if actor.id in s.seats:
        return GameError("already_seated", "You already have a seat.")
    if any(b.box == box and b.player != actor.id for b in s.bets):
        # Sitting now would take the box from under the bets already on it.
        return GameError("box_in_play", f"Others have bet on box {box} this round: sit after the round.")
    return None


def sit(s: TableState, cmd: C.Sit, actor: Actor, out: Out) -> None:
    check(sit_refusal(s, actor, cmd.box))
    s.seats[cmd.box] = actor.id
    out.append(E.SeatTaken(player=actor.id, box=cmd.box))


def leave_refusal(s: TableState, actor: Actor) -> GameError | None:
    return None if actor.id in s.seats else GameError("not_seated", "You have no seat.")


def leave(s: TableState, cmd: C.Leave, actor: Actor, out: Out) -> None:
    check(leave_refusal(s, actor))
    b = s.seats.index(actor.id)
    s.seats[b] = ""
    out.append(E.SeatLeft(player=actor.id, box=b))


def release_refusal(s: TableState, box: int) -> GameError | None:
    return None if s.seats[box] else GameError("seat_empty", f"Nobody sits at box {box}.")


def release_seat(s: TableState, cmd: C.ReleaseSeat, actor: Actor, out: Out) -> None:
    """Free a seat between rounds (a disconnected player, after the house's time-out);
    while betting is open the player's bets and side bets go back to him."""
    check(release_refusal(s, cmd.box))
    player = s.seats[cmd.box]
    return_bets(s, out, lambda b: b.player == player, "seat released")
    s.seats[cmd.box] = ""
    out.append(E.SeatReleased(player=player, box=cmd.box, reason=cmd.reason))


def close_table(s: TableState, cmd: C.CloseTable, actor: Actor, out: Out) -> None:
    """Close the table between rounds: the director, or a chef with the director's
    recorded authorisation (Campione Art. 15: the Direzione Giochi's power)."""
    return_bets(s, out, lambda b: True, "table closed")
    for n, pl in enumerate(s.seats):
        if pl:
            s.seats[n] = ""
            out.append(E.SeatReleased(player=pl, box=n, reason="table closed"))
    s.phase = Phase.CLOSED
    s.order = []
    s.pos = 0
    s.cut_index = -1
    s.left = []
    s.last_round = False
    s.reshuffle_after = False
    s.cut_entitled = ""  # the house cuts the shoe that reopens the table
    s.cut_chain = []
    out.append(E.TableClosed(reason=cmd.reason, by=actor.id, authorised_by=cmd.authorised_by))


def set_limits(s: TableState, cmd: C.SetLimits, actor: Actor, out: Out) -> None:
    check_limits(s.profile, cmd.min_bet, cmd.max_bet)
    s.next_limits = [cmd.min_bet, cmd.max_bet]
    nxt = s.round + 1 if s.phase in ROUND_PHASES or s.phase == Phase.BETTING else s.round
    out.append(E.LimitsChanged(by=actor.id, min_bet=cmd.min_bet, max_bet=cmd.max_bet, from_round=nxt,
                               reason=cmd.reason))


# -- bets -----------------------------------------------------------------------------------


def place_bet(s: TableState, cmd: C.PlaceBet, actor: Actor, out: Out) -> None:
    if s.tournament_table:
        tournament.place_bet(s, cmd, actor, out)  # points, on the drawn seat (Art. 27)
        return
    p = s.profile
    entered = actor.is_staff  # chips already on a live felt, entered by the croupier
    if entered and not cmd.player:
        raise GameError("players_only", "Staff enter a player's chips only on a live table, naming the player.")
    who = owner(s, cmd.player, actor)
    if cmd.amount < s.min_bet:
        raise GameError("below_minimum", f"The minimum bet is {s.min_bet}.")
    if entered and cmd.amount > ENTERED_MAX_FACTOR * s.max_bet:
        raise GameError(
            "above_entry_limit",
            f"A pile over {ENTERED_MAX_FACTOR} times the maximum ({ENTERED_MAX_FACTOR * s.max_bet}) is a mistake.",
        )
    on_box = [b for b in s.bets if b.box == cmd.box]
    if any(b.player == who for b in on_box):
        raise GameError("already_bet", f"{who} already has a bet on box {cmd.box}.")
    if len(on_box) >= 1 + p.places_behind:
        raise GameError("box_full", f"Box {cmd.box} has no free place.")
    seated = s.seats[cmd.box]
    if seated and who != seated:
        # The seated player's place is his (Campione cap. 1, Art. 16; Lugano "Il
        # gioco"; Titano Art. 1, 13): others may only bet behind him.
        behind = sum(1 for b in on_box if b.player != seated)
        if behind >= p.places_behind:
            raise GameError("box_reserved", f"Box {cmd.box} is {seated}'s: only places behind are open to others.")
    if p.max_applies_to == "box_with_behind":
        room = max(s.max_bet - sum(b.amount - b.excess for b in on_box), 0)
    else:
        room = s.max_bet
    excess = max(cmd.amount - room, 0)
    if excess and not entered:
        raise GameError("above_maximum", f"Box {cmd.box} takes at most {room}.")
    if p.crowded_at:
        players = {b.player for b in s.bets} | {who}
        if len(players) >= p.crowded_at and any(b.player == who for b in s.bets):
            raise GameError("one_box_each", "The table is crowded: one box each.")
    wid = bet_id(s)
    s.bets.append(Bet(cmd.box, who, cmd.amount, wid, excess))
    out.append(WagerPlaced(wid, who, cmd.amount, f"box {cmd.box}"))


def withdraw_bet(s: TableState, cmd: C.WithdrawBet, actor: Actor, out: Out) -> None:
    who = owner(s, cmd.player, actor)
    for i, b in enumerate(s.bets):
        if b.box == cmd.box and b.player == who:
            del s.bets[i]
            out.append(WagerVoided(b.wager, b.player, b.amount, "withdrawn"))
            # Side bets stand only beside a bet: they go back with it.
            for sb in [x for x in s.side_bets if x.box == cmd.box and x.player == who]:
                s.side_bets.remove(sb)
                out.append(WagerVoided(sb.wager, sb.player, sb.amount, "withdrawn with the bet"))
            return
    raise GameError("no_bet", f"You have no bet on box {cmd.box}.")


def close_bets_refusal(s: TableState) -> GameError | None:
    if s.tournament_table:
        return tournament.close_refusal(s)  # every hand is played, bets or not (Art. 27)
    return None if s.bets else GameError("no_bets", "Nobody has bet.")


def close_bets(s: TableState, cmd: C.CloseBets, actor: Actor, out: Out) -> None:
    """"Rien ne va plus": each box bet on goes to its holder, the others' bets ride behind,
    and the deal begins."""
    p = s.profile
    check(close_bets_refusal(s))
    by_box: dict[int, list[Bet]] = {}
    for b in s.bets:
        by_box.setdefault(b.box, []).append(b)
    # A seated player's box is played only if he bets on it: bets behind a box whose
    # holder sat out go back ("the box was not played").
    unplayed = {n for n, bets in by_box.items() if holder_bet(s, n, bets) is None}
    for n in unplayed:
        del by_box[n]
    players = {b.player for bets in by_box.values() for b in bets}
    if by_box and len(players) == 1 and len(by_box) < p.lone_player_min_boxes:
        raise GameError(
            "lone_player_min_boxes",
            f"A player alone at the table plays at least {p.lone_player_min_boxes} boxes.",
        )
    if p.crowded_at and len(players) >= p.crowded_at:
        counts: dict[str, int] = {}
        for bets in by_box.values():
            for b in bets:
                counts[b.player] = counts.get(b.player, 0) + 1
        if any(n > 1 for n in counts.values()):
            raise GameError("one_box_each", "The table is crowded: one box each.")

    if s.tournament_table:
        tournament.charge_absent(s, out)
        if not by_box:  # nobody bet: the hand is over, no card is dealt
            out.append(E.RoundSettled(round=s.round, last_of_shoe=s.last_round or s.reshuffle_after))
            end_round(s, out)
            return
    if unplayed:
        return_bets(s, out, lambda b: b.box in unplayed, "the box was not played")
        if not by_box:
            return  # nothing left to deal: betting stays open
    if p.button:
        numbers = sorted(by_box, key=lambda n: (n - s.button - 1) % BOXES)
    else:
        numbers = sorted(by_box)
    boxes: list[Box] = []
    for n in numbers:
        bets = by_box[n]
        held = holder_bet(s, n, bets)
        assert held is not None  # unplayed boxes are gone
        wagers = [Wager(held.wager, held.player, WagerKind.BOX, held.amount, 0, excess=held.excess)]
        wagers += [
            Wager(b.wager, b.player, WagerKind.BEHIND, b.amount, 0, excess=b.excess) for b in bets if b is not held
        ]
        boxes.append(Box(n, held.player, wagers, [Hand([])]))
    s.boxes = boxes
    s.bets = []
    side_bets_to_boxes(s, out)
    # One card to each box, the dealer's up card, a second card to each box (then the
    # hole card where the house deals one face down).
    first = [CardTarget(n) for n in numbers]
    s.deal_queue = first + [DEALER] + list(first)
    if p.hole_card:
        s.deal_queue.append(HOLE)
    s.dealer = []
    s.phase = Phase.DEALING
    out.append(E.BetsClosed(round=s.round, by=actor.id, order=numbers, holders=[b.holder for b in boxes]))
    if s.jackpot_entered:
        blazing = p.blazing_7s
        assert blazing is not None  # only a Blazing 7s table enters the pool
        out.append(J.JackpotRoundStarted(jackpot=blazing.jackpot, table=s.table_id, round=s.round))
    run(s, out)


def mark_unclaimed(s: TableState, cmd: C.MarkUnclaimed, actor: Actor, out: Out) -> None:
    """Campione Art. 37: what the last round paid a floor player (``last_paid``), left on
    the felt, goes to the table's unclaimed register; recorded once."""
    if not is_floor(cmd.player):
        raise GameError("floor_only", "Only a floor player's chips are left on the felt: an online player's "
                                      "wins are in his wallet.")
    amount = s.last_paid.get(cmd.player, 0)
    if amount <= 0:
        raise GameError("nothing_unclaimed", f"The last round paid {cmd.player} nothing (or it is recorded already).")
    s.last_paid = {p: v for p, v in s.last_paid.items() if p != cmd.player}
    out.append(ChipsUnclaimed(cmd.player, s.round - 1, "wins", amount, [], actor.id))
