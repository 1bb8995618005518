"""The ranking (Art. 25), what the tables report to it, and how each phase ends.

Players still in rank by points, most first. The eliminated rank below everyone still in,
"in base all'ordine di eliminazione": a later hand ranks higher; in the same hand, more
points when that hand opened rank higher, then the recorded draw (earlier in
``Started.order`` first). The expelled (Art. 27) rank last, disqualified.

Hand numbers count a phase's hands at each table, and all the tables of a phase play at
once: hand 12 at one table and hand 12 at another are taken as the same hand (the nearest
we can come to "the order of elimination" across tables without a clock).

Players still in with equal points are *tied*. Where that tie decides something (a seat at
the final table, a prize) they play one more shoe (a tie-break phase), again until
separated (Art. 25); a tie that decides nothing is left to the draw. A standing shows the
points of the stage's main phase (a tie-break only orders players level on them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from blackjack.tournament.commands import TableReport
from blackjack.tournament.events import Eliminated, Event, PhaseEnded, Standing, StandingsUpdated, TieBreak
from blackjack.tournament.seating import begin_stage, open_phase
from blackjack.tournament.state import Result, Stage, TournamentState, acknowledge, open_tables
from games.commands import Actor
from games.errors import GameError

Key = tuple[int, int, int, int]


def _err(code: str, message: str) -> GameError:
    return GameError(code, message)


def draw_index(s: TournamentState) -> dict[str, int]:
    return {p: i for i, p in enumerate(s.order)}


def key(r: Result, draw: Mapping[str, int]) -> Key:
    """Sort key: smaller ranks higher; a total order (the draw index is unique)."""
    if r.out == "":
        return (0, -r.points, 0, draw[r.player])
    if r.out == "eliminated":
        return (1, -r.hand, -r.stack_before, draw[r.player])
    return (2, 0, 0, draw[r.player])


def ranked(results: Iterable[Result], draw: Mapping[str, int]) -> list[Result]:
    return sorted(results, key=lambda r: key(r, draw))


def tie_blocks(order: Iterable[Result]) -> list[list[str]]:
    """Ranked results as blocks of tied players (players still in with equal points);
    each eliminated player is a block of his own; the expelled are left out."""
    blocks: list[list[str]] = []
    prev: Result | None = None
    for r in order:
        if r.out == "expelled":
            continue
        if r.out == "" and prev is not None and prev.out == "" and prev.points == r.points:
            blocks[-1].append(r.player)
        else:
            blocks.append([r.player])
        prev = r
    return blocks


def ties_that_matter(blocks: list[list[str]], kind: str, finalists: int,
                     prize_places: int) -> list[tuple[int, list[str]]]:
    """Art. 25: the tied blocks whose order decides something, with their first place
    (0-based): at the end of the elimination, the block across the cut (some of it within
    the top ``finalists``, some below); at the end of the final, every block with a prize."""
    out: list[tuple[int, list[str]]] = []
    start = 0
    for block in blocks:
        if len(block) >= 2:
            across_cut = start < finalists < start + len(block)
            if (kind == "elimination" and across_cut) or (kind == "final" and start < prize_places):
                out.append((start, block))
        start += len(block)
    return out


def stage_order(s: TournamentState, stage: Stage) -> list[str]:
    """The stage's players in ranking order, the expelled left out: the main phase's live
    ranking while it plays, then its blocks, those being tie-broken in their live order."""
    draw = draw_index(s)
    main = s.phases[stage.phase - 1]
    if not stage.settled:
        return [r.player for r in ranked(main.results.values(), draw) if r.out != "expelled"]
    tiebreak = s.phases[-1] if s.phases[-1].kind == "tiebreak" and not stage.over else None
    order: list[str] = []
    for block in stage.blocks:
        if tiebreak is not None and block[0] in tiebreak.results:
            order += [r.player for r in ranked([tiebreak.results[p] for p in block], draw)]
        else:
            order += block
    return order


def _row(s: TournamentState, stage: Stage, player: str, place: int) -> Standing:
    r = s.phases[stage.phase - 1].results[player]
    out: str = r.out
    table = r.table
    if out == "" and stage.over and stage.kind == "elimination" and player not in stage.advancing:
        out = "cut"
    last = s.phases[-1]
    if not stage.over and last.kind == "tiebreak" and player in last.results:
        table = last.results[player].table  # where he plays his tie-break now
    if player in s.expelled:
        out = "expelled"
    return Standing(place=place, player=player, points=r.points if out in ("", "cut") else 0, out=out, table=table)


def stage_standings(s: TournamentState, stage: Stage) -> list[Standing]:
    """The stage's ranking as it stands (points: those of its main phase), then the
    players expelled during it."""
    order = stage_order(s, stage)
    order += [p for p in s.expelled if p in s.phases[stage.phase - 1].results]
    return [_row(s, stage, p, place) for place, p in enumerate(order, 1)]


def cut_line(s: TournamentState, stage: Stage, standings: list[Standing]) -> int:
    """The points of the last place that goes on to the final (0: everyone still in does)."""
    if stage.kind != "elimination":
        return 0
    still_in = [x for x in standings if x.out == ""]
    finalists = s.spec.finalists
    return still_in[finalists - 1].points if len(still_in) > finalists else 0


def final_standings(s: TournamentState) -> list[Standing]:
    """Art. 25-26: the last stage's ranking (the final's, or the elimination's when nobody
    was left for a final), then those the elimination left out in their order, then the
    expelled (disqualified)."""
    last = s.stages[-1]
    order = stage_order(s, last)
    first = s.stages[0]
    if first is not last:
        order += [p for p in stage_order(s, first) if p not in first.advancing]
    rows = [_row(s, last if p in s.phases[last.phase - 1].results else first, p, place)
            for place, p in enumerate(order, 1)]
    for p in s.expelled:
        stage = next(st for st in reversed(s.stages) if p in s.phases[st.phase - 1].results)
        rows.append(_row(s, stage, p, len(rows) + 1))
    return rows


# -- the tables' reports (Art. 24-27) ---------------------------------------------------------


def report_refusal(s: TournamentState, c: TableReport, a: Actor) -> GameError | None:
    """A report comes from the server (``system``), reading a table of the phase in play;
    each is taken once (``seq``); it names only that table's players (Art. 24-27)."""
    if a.role != "system":
        return _err("forbidden", "Only the server reports what a table recorded.")
    if s.status not in ("running", "cancelled"):  # cancelled: the tables' last acknowledgements
        return _err("not_running", "The tournament is not being played.")
    run = s.tables.get(c.table)
    if run is None:
        return _err("unknown_table", f"{c.table} is not a table of this tournament.")
    if c.seq <= run.seq:  # a report sent again: already taken
        return _err("stale_report", f"{c.table}'s events up to {run.seq} are already taken.")
    if run.phase != s.phases[-1].number:
        return _err("unknown_table", f"{c.table} is not a table of the phase being played.")
    if c.phase != run.phase:
        return _err("wrong_phase", f"{c.table} plays phase {run.phase}, not {c.phase}.")
    if c.order > run.issued:
        return _err("unknown_order", f"{c.table} was sent {run.issued} orders, not {c.order}.")
    if run.done and (c.hands or c.eliminated or c.expelled or c.done or c.final):
        return _err("table_done", f"{c.table} has already finished its phase.")
    out = {e.player for e in c.eliminated}
    named = {p for h in c.hands for p in h.stacks} | out | set(c.expelled) | set(c.final)
    if named - run.seats.keys():
        return _err("unknown_player", f"Not seated at {c.table}: {sorted(named - run.seats.keys())}.")
    if [p for p in c.expelled if p not in s.expelled]:
        return _err("not_expelled", "The report lists an expulsion the tournament never ordered.")
    live = {p for p, r in s.phases[-1].results.items() if r.out == ""} - out
    if any(v == 0 and p in live for stacks in [*(h.stacks for h in c.hands), c.final] for p, v in stacks.items()):
        return _err("zero_stack", "A player with no points left is eliminated (Art. 24): list him in eliminated.")
    return None


def take_report(s: TournamentState, c: TableReport, out: list[Event]) -> bool:
    """Apply a report: its orders applied, each hand's points, the eliminations; when the
    phase's last table is done, ``settle``. True when the tournament is over."""
    run = s.tables[c.table]
    run.seq, run.applied = c.seq, max(run.applied, c.order)
    acknowledge(s, c.table, c.order)
    if c.done:
        run.done = True
        acknowledge(s, c.table, run.issued)  # its phase is over there: nothing left to apply
    if s.status == "cancelled":
        return False  # only the orders' acknowledgement counts now
    phase = s.phases[-1]
    for h in c.hands:
        run.hand = max(run.hand, h.hand)
        for p, points in h.stacks.items():
            if phase.results[p].out == "":
                phase.results[p].points = points
    for e in c.eliminated:
        run.hand, r = max(run.hand, e.hand), phase.results[e.player]
        if r.out == "":
            r.out, r.points, r.hand, r.stack_before = "eliminated", 0, e.hand, e.stack_before
            out.append(Eliminated(player=e.player, phase=phase.number, table=c.table, hand=e.hand,
                                  stack_before=e.stack_before))
    for p, points in c.final.items():
        if phase.results[p].out == "":
            phase.results[p].points = points
    if c.hands or c.eliminated:
        stage = s.stages[-1]
        standings = stage_standings(s, stage)
        out.append(StandingsUpdated(phase=phase.number, table=c.table, hand=run.hand, standings=standings,
                                    cut_line=cut_line(s, stage, standings)))
    return c.done and not open_tables(s) and settle(s, out)


def settle(s: TournamentState, out: list[Event]) -> bool:
    """Every table of the phase is done: rank it into its stage; where a tie matters, a
    tie-break phase (Art. 25: "una ulteriore taglia fino a quando il loro piazzamento nella
    classifica viene determinato"); else the stage is over and the final begins. True when
    the last stage is over (the prizes are next)."""
    phase, stage, draw = s.phases[-1], s.stages[-1], draw_index(s)
    if phase.kind != "tiebreak":
        stage.blocks, stage.settled = tie_blocks(ranked(phase.results.values(), draw)), True
    else:  # each tied block it played becomes the order its shoe gave; the rest keep their places
        blocks: list[list[str]] = []
        for block in stage.blocks:
            played = block[0] in phase.results
            blocks += tie_blocks(ranked([phase.results[p] for p in block], draw)) if played else [block]
        stage.blocks = blocks
    stage.points.update({p: r.points for p, r in phase.results.items()})
    ties = ties_that_matter(stage.blocks, stage.kind, s.spec.finalists, len(s.spec.prizes))
    if ties:
        number = len(s.phases) + 1
        for first, block in ties:
            out.append(TieBreak(phase=number, players=list(block), points=stage.points[block[0]],
                                places=list(range(first + 1, first + len(block) + 1))))
        tied = [block for _, block in ties]  # one shoe, each with the points he is tied on
        open_phase(s, "tiebreak", tied, {p: stage.points[p] for b in tied for p in b}, 1, out)
        return False
    stage.over = True
    if stage.kind == "elimination":  # Art. 24: the first 7 still in go to the final table
        main = s.phases[stage.phase - 1].results
        stage.advancing = [p for p in stage_order(s, stage) if main[p].out == ""][:s.spec.finalists]
    out.append(PhaseEnded(phase=stage.phase, kind=stage.kind, standings=stage_standings(s, stage),
                          advancing=list(stage.advancing)))
    if not stage.advancing:
        return True
    begin_stage(s, "final", sorted(stage.advancing, key=draw.__getitem__), out)  # seated in drawn order
    return False
