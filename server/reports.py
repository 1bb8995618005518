"""The regulator's daily report (issue 17): per table and game, what was staked and what the
house kept, from the ledger's own movements; counts (rounds, voids, late bets) from the
tables' events; theoretical against actual return to player; jackpots, tournaments, totals
per currency, the reconciliation with the players' accounts and the ledger check.

Every amount is an int in the currency's minor unit (cents, or tournament points); rates
are decimal strings (percent), computed with exact fractions and never summed as floats.
What each figure means and how it is computed: ``docs/regulators.md``.

``daily_report(pool, date, tz)`` reads one database (the server's); ``to_csv`` writes the
same report as one CSV table. ``casino report daily`` (``server.report_cli``) and
``GET /reports/daily`` (``server.api.reports``) are its two front doors.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from datetime import date as Date
from datetime import datetime, time, timedelta
from decimal import Decimal, localcontext
from fractions import Fraction
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
import msgspec

from games.ledger.check import CheckReport
from games.ledger.model import Problem
from games.ledger.store import Ledger
from server.money import accounts_for

Z95 = Decimal("1.959963984540054")  # the standard normal's 97.5% quantile

# The main blackjack game's house edge per profile: the simulator's figure in docs/odds.md
# (``casino simulate blackjack``, 2,000,000 rounds, seed 11, 2026-11-21), basic strategy.
# The main game has no exact figure (it depends on the players' decisions); side bets do.
BLACKJACK_MAIN_EDGE = {"lugano": Fraction(448, 100_000), "titano": Fraction(561, 100_000),
                       "campione": Fraction(698, 100_000)}

_PLAYERS = ("wallet", "floor")  # whose chips: an online player's wallet, a live table's floor players
_EVENT_KINDS = ["wager_placed", "wager_settled", "wager_refunded", "wager_voided", "spin_settled",
                "round_settled", "spin_voided", "spin_refunded", "round_voided", "late_bet_accepted",
                "spin_opened"]
_VOID_KINDS = ("spin_voided", "spin_refunded", "round_voided")


class TableDay(msgspec.Struct, kw_only=True):
    table: str
    game: str
    profile: str
    mode: str
    currency: str
    tournament: str = ""  # a tournament's table (its currency is its points, PTS)
    drop: int = 0  # stakes held at the table that day, less stakes voided that day
    win: int = 0  # the house's result: posted between the table's bank and the players
    hold_percent: str | None = None  # win / drop
    rounds: int = 0  # distinct rounds (spins) settled
    wagers_settled: int = 0
    stakes_settled: int = 0  # of the wagers settled that day
    returned: int = 0  # stake handed back (pushes, partage, Art. 8 excess, wins' stakes)
    won: int = 0  # winnings paid on top
    refunded: int = 0  # lost stakes given back when a round was annulled
    rtp_theoretical_percent: str | None = None
    rtp_theoretical_basis: str = ""
    rtp_actual_percent: str | None = None  # (returned + won + refunded) / stakes_settled
    rtp_ci95_percent: list[str] | None = None  # [low, high]: ratio estimator over rounds
    voids: int = 0  # spins voided ("rien va") or refunded, rounds (or boxes) voided
    wagers_voided: int = 0
    stakes_voided: int = 0
    late_bets_approved: int = 0
    jackpot_contributions: int = 0  # from this table's bank to jackpot meters
    jackpot_seeds: int = 0  # the house funding a meter (opening, reset after a win)
    jackpot_payouts: int = 0  # jackpots won at this table, paid from the meters


class JackpotDay(msgspec.Struct, kw_only=True):
    account: str
    currency: str
    contributions: int = 0
    seeds: int = 0
    payouts: int = 0


class TournamentDay(msgspec.Struct, kw_only=True):
    tournament: str
    currency: str
    buy_ins: int = 0
    fees: int = 0  # the house's revenue
    refunds: int = 0  # buy-ins and fees given back
    prizes: int = 0
    forfeited: int = 0  # a prize pool kept by the house


class CurrencyTotals(msgspec.Struct, kw_only=True):
    currency: str
    drop: int = 0
    win: int = 0
    hold_percent: str | None = None
    rounds: int = 0
    stakes_settled: int = 0
    rtp_actual_percent: str | None = None
    voids: int = 0
    late_bets_approved: int = 0
    jackpot_contributions: int = 0
    jackpot_seeds: int = 0
    jackpot_payouts: int = 0
    tournament_fees: int = 0
    tournament_prizes: int = 0
    # The reconciliation: what the players' accounts (wallets, live tables' floor accounts;
    # tournament points in PTS) gained that day, posted, by where it came from.
    players_net: int = 0
    players_by_counterparty: dict[str, int] = {}
    # tables == -win and jackpots == jackpot payouts: the tables' figures are the ledger's
    reconciled: bool = True


class LedgerCheckResult(msgspec.Struct, kw_only=True):
    ok: bool
    problems: list[Problem]
    accounts: int
    transfers: int
    pending_holds: int
    rounds_checked: bool


class DailyReport(msgspec.Struct, kw_only=True):
    date: str
    tz: str
    start: str  # [start, end): the day in tz
    end: str
    generated_at: str
    tables: list[TableDay]
    jackpots: list[JackpotDay]
    tournaments: list[TournamentDay]
    totals: list[CurrencyTotals]
    ledger: LedgerCheckResult


# ---- rates ------------------------------------------------------------------------------


def percent(value: Fraction | Decimal, places: int = 4) -> str:
    """``value`` as a percentage, rounded half-even to ``places`` decimals."""
    d = Decimal(value.numerator) / Decimal(value.denominator) if isinstance(value, Fraction) else value
    return str((d * 100).quantize(Decimal(1).scaleb(-places)))


def ratio_ci95(rounds: list[tuple[int, int]]) -> tuple[Fraction, tuple[Decimal, Decimal] | None] | None:
    """The return R = sum(y) / sum(x) over rounds (x: stakes settled in the round, y: what
    came back) and its 95% interval by the ratio estimator's delta method, rounds as the
    independent units: Var(R) ~= n * s^2 / sum(x)^2, s^2 = sum((y - R x)^2) / (n - 1); normal
    approximation, the low end cut at 0. None without stakes; no interval under two rounds."""
    sx = sum(x for x, _ in rounds)
    if sx <= 0:
        return None
    r = Fraction(sum(y for _, y in rounds), sx)
    n = len(rounds)
    if n < 2:
        return r, None
    s2 = sum((y - r * x) ** 2 for x, y in rounds) / (n - 1)
    var = n * s2 / sx**2
    with localcontext() as ctx:
        ctx.prec = 40
        se = (Decimal(var.numerator) / Decimal(var.denominator)).sqrt()
        mid = Decimal(r.numerator) / Decimal(r.denominator)
        return r, (max(mid - Z95 * se, Decimal(0)), mid + Z95 * se)  # a return is never below 0


@cache
def _roulette_rtp(spot: str, policy: str) -> Fraction | None:
    from roulette.state import Bet
    from tools.roulette_odds import rtp

    try:
        return rtp([Bet("w", "p", spot, 1000, 1)], policy)
    except Exception:  # not a combination the odds know (nothing should be): left out
        return None


@cache
def _blackjack_side_rtps(profile: str) -> dict[str, Fraction]:
    from blackjack.profiles import builtin
    from tools.blackjack_odds import side_bet_report

    try:
        prof = builtin(profile)
    except Exception:
        return {}
    rep = side_bet_report(prof)
    out = {}
    for name, odds in (("perfect pairs", rep.perfect_pairs), ("twenty one plus three", rep.twenty_one_plus_three),
                       ("push 22", rep.push_22)):
        if odds is not None:
            out[name] = odds.rtp
    if rep.blazing_7s is not None:  # at the meters' seeds: the meters move, the figure with them
        b7 = prof.blazing_7s
        out["blazing 7s"] = rep.blazing_7s.rtp(b7.minor.seed, b7.major.seed)
    return out


def _blackjack_rtp(profile: str, spot: str) -> Fraction | None:
    for name, value in _blackjack_side_rtps(profile).items():
        if spot.endswith(name):
            return value
    edge = BLACKJACK_MAIN_EDGE.get(profile)
    return None if edge is None else 1 - edge


def theoretical(game: str, profile: str, placed: list[tuple[str, int]], policy: str) -> tuple[Fraction | None, str]:
    """The stake-weighted theoretical return of the wagers placed: each wager at its bet's
    RTP from the odds tools (``tools.roulette_odds``, ``tools.blackjack_odds``; blackjack's
    main game at the simulated figure of docs/odds.md)."""
    if game == "roulette":
        basis = f"tools.roulette_odds per bet, exact, stake-weighted; simple chances en prison ({policy})"
        values = [(amount, _roulette_rtp(spot, policy)) for spot, amount in placed]
    elif game == "blackjack":
        basis = ("main game: simulated house edge of docs/odds.md; side bets: tools.blackjack_odds, exact "
                 "(Blazing 7s at its meters' seeds); stake-weighted")
        values = [(amount, _blackjack_rtp(profile, spot)) for spot, amount in placed]
    else:
        return None, "no odds for this game"
    known = [(a, v) for a, v in values if v is not None and a > 0]
    total = sum(a for a, _ in known)
    if not total:
        return None, basis
    return sum(a * v for a, v in known) / total, basis


# ---- the report -------------------------------------------------------------------------

_LEDGER_DAY = """
SELECT op, code, currency, split_part(debit, ':', 1) AS dkind, split_part(credit, ':', 1) AS ckind,
       CASE WHEN split_part(debit, ':', 1) IN ('wallet', 'points') THEN '' ELSE debit END AS dacc,
       CASE WHEN split_part(credit, ':', 1) IN ('wallet', 'points') THEN '' ELSE credit END AS cacc,
       CASE WHEN code = 'jackpot_win' THEN split_part(id, '/', 4) ELSE split_part(id, '/', 1) END AS key,
       sum(amount)::bigint AS amount, sum(coalesce(hold_amount, 0))::bigint AS hold_amount, count(*) AS n
  FROM ledger_transfers
 WHERE at >= $1 AND at < $2
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
"""


def day_bounds(day: Date, tz: str = "UTC") -> tuple[datetime, datetime]:
    zone = ZoneInfo(tz)
    start = datetime.combine(day, time(0), tzinfo=zone)
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone)
    return start, end


def _counterparty(kind: str, code: str) -> str:
    if code.startswith("stack_"):
        return "stacks"
    return {"bank": "tables", "points_pool": "tables", "jackpot": "jackpots", "cashier": "cashier",
            "prize_pool": "tournaments", "fees": "tournaments", "unclaimed": "unclaimed"}.get(kind, "other")


async def daily_report(pool: asyncpg.Pool, date: Date, tz: str = "UTC") -> DailyReport:
    start, end = day_bounds(date, tz)
    async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read", readonly=True):
        tables = await conn.fetch("SELECT id, game, profile, mode, currency, settings::text AS settings"
                                  " FROM casino_tables ORDER BY id")
        moves = await conn.fetch(_LEDGER_DAY, start, end)
        events = await conn.fetch(
            "SELECT table_id, round, kind, payload::text AS payload FROM table_events"
            " WHERE at >= $1 AND at < $2 AND kind = ANY($3::text[]) ORDER BY table_id, seq",
            start, end, _EVENT_KINDS)
        check: CheckReport = await Ledger(pool).check_report(conn=conn)

    by_table: dict[str, list[asyncpg.Record]] = defaultdict(list)
    for e in events:
        by_table[e["table_id"]].append(e)

    out_tables: list[TableDay] = []
    for t in tables:
        settings = msgspec.json.decode(t["settings"]) or {}
        try:
            acc = accounts_for(t["id"], t["currency"], settings)
        except Exception:
            continue
        day = TableDay(table=t["id"], game=t["game"], profile=t["profile"], mode=t["mode"],
                       currency=t["currency"], tournament=acc.tournament)
        house, tid = acc.house, t["id"]
        players = ("points",) if acc.tournament else _PLAYERS
        touched = False
        for m in moves:
            mine = not acc.tournament or m["key"] == tid  # a tournament's pool serves all its tables
            if m["op"] == "hold" and m["cacc"] == house and mine:
                day.drop += m["amount"]
                touched = True
            elif m["op"] == "void" and m["code"] == "voided" and m["cacc"] == house and mine:
                day.drop -= m["hold_amount"]
            elif m["op"] in ("transfer", "post") and mine and not m["code"].startswith("stack_"):
                if m["cacc"] == house and m["dkind"] in players:
                    day.win += m["amount"]
                    touched = True
                elif m["dacc"] == house and m["ckind"] in players:
                    day.win -= m["amount"]
                    touched = True
            if m["op"] == "transfer" and not acc.tournament:
                if m["dacc"] == house and m["code"] == "jackpot_contribution":
                    day.jackpot_contributions += m["amount"]
                elif m["dacc"] == house and m["code"] == "jackpot_seed":
                    day.jackpot_seeds += m["amount"]
                elif m["code"] == "jackpot_win" and m["key"] == tid:
                    day.jackpot_payouts += m["amount"]
        evs = by_table.get(tid, [])
        if not evs and not touched and not (day.jackpot_contributions or day.jackpot_seeds or day.jackpot_payouts):
            continue
        _count_events(day, evs)
        out_tables.append(day)

    jackpots: dict[str, JackpotDay] = {}
    tournaments: dict[tuple[str, str], TournamentDay] = {}
    for m in moves:
        if m["op"] != "transfer":
            continue
        code = m["code"]
        if code in ("jackpot_contribution", "jackpot_seed"):
            j = jackpots.setdefault(m["cacc"], JackpotDay(account=m["cacc"], currency=m["currency"]))
            if code == "jackpot_contribution":
                j.contributions += m["amount"]
            else:
                j.seeds += m["amount"]
        elif code == "jackpot_win":
            j = jackpots.setdefault(m["dacc"], JackpotDay(account=m["dacc"], currency=m["currency"]))
            j.payouts += m["amount"]
        elif code.startswith("tournament_"):
            k = (m["key"], m["currency"])
            tr = tournaments.setdefault(k, TournamentDay(tournament=m["key"], currency=m["currency"]))
            if code == "tournament_buy_in":
                tr.buy_ins += m["amount"]
            elif code == "tournament_fee":
                tr.fees += m["amount"]
            elif code == "tournament_refund":
                tr.refunds += m["amount"]
            elif code == "tournament_prize":
                tr.prizes += m["amount"]
            elif code == "tournament_forfeit":
                tr.forfeited += m["amount"]

    totals = _totals(out_tables, list(jackpots.values()), list(tournaments.values()), moves)
    return DailyReport(
        date=date.isoformat(), tz=tz, start=start.isoformat(), end=end.isoformat(),
        generated_at=datetime.now(ZoneInfo(tz)).isoformat(timespec="seconds"),
        tables=out_tables, jackpots=sorted(jackpots.values(), key=lambda j: j.account),
        tournaments=sorted(tournaments.values(), key=lambda x: (x.tournament, x.currency)),
        totals=totals,
        ledger=LedgerCheckResult(ok=not check.problems, problems=check.problems, accounts=check.accounts,
                                 transfers=check.transfers, pending_holds=check.pending_holds,
                                 rounds_checked=check.rounds_checked),
    )


def _count_events(day: TableDay, evs: list[asyncpg.Record]) -> None:
    settled_rounds: set[str] = set()
    per_round: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    placed: list[tuple[str, int]] = []
    policy = "lose"
    for e in evs:
        kind = e["kind"]
        p = msgspec.json.decode(e["payload"])
        if kind in ("spin_settled", "round_settled"):
            settled_rounds.add(e["round"])
        elif kind in _VOID_KINDS:
            day.voids += 1
        elif kind == "late_bet_accepted":
            day.late_bets_approved += 1
        elif kind == "wager_placed":
            placed.append((p.get("spot", ""), int(p["amount"])))
        elif kind == "wager_voided":
            day.wagers_voided += 1
            day.stakes_voided += int(p["amount"])
        elif kind == "wager_settled":
            day.wagers_settled += 1
            day.stakes_settled += p["stake"]
            day.returned += p["returned"]
            day.won += p["won"]
            r = per_round[e["round"]]
            r[0] += p["stake"]
            r[1] += p["returned"] + p["won"]
        elif kind == "wager_refunded":
            day.refunded += int(p["amount"])
            per_round[e["round"]][1] += int(p["amount"])
        elif kind == "spin_opened":
            policy = (p.get("settings") or {}).get("prison_on_zero", policy)
    day.rounds = len(settled_rounds)
    if day.drop:
        day.hold_percent = percent(Fraction(day.win, day.drop), 2)
    rtp, day.rtp_theoretical_basis = theoretical(day.game, day.profile, placed, policy)
    if rtp is not None:
        day.rtp_theoretical_percent = percent(rtp)
    actual = ratio_ci95([(x, y) for x, y in per_round.values()])
    if actual is not None:
        r, ci = actual
        day.rtp_actual_percent = percent(r)
        if ci is not None:
            day.rtp_ci95_percent = [percent(ci[0]), percent(ci[1])]


def _totals(tables: list[TableDay], jackpots: list[JackpotDay], tournaments: list[TournamentDay],
            moves: list[asyncpg.Record]) -> list[CurrencyTotals]:
    out: dict[str, CurrencyTotals] = {}

    def of(cur: str) -> CurrencyTotals:
        return out.setdefault(cur, CurrencyTotals(currency=cur, players_by_counterparty={}))

    back: dict[str, int] = defaultdict(int)
    for t in tables:
        c = of(t.currency)
        c.drop += t.drop
        c.win += t.win
        c.rounds += t.rounds
        c.stakes_settled += t.stakes_settled
        back[t.currency] += t.returned + t.won + t.refunded
        c.voids += t.voids
        c.late_bets_approved += t.late_bets_approved
    for j in jackpots:
        c = of(j.currency)
        c.jackpot_contributions += j.contributions
        c.jackpot_seeds += j.seeds
        c.jackpot_payouts += j.payouts
    for tr in tournaments:
        c = of(tr.currency)
        c.tournament_fees += tr.fees
        c.tournament_prizes += tr.prizes
    for m in moves:
        if m["op"] not in ("transfer", "post"):
            continue
        players = ("points",) if m["currency"] == "PTS" else _PLAYERS
        d_in, c_in = m["dkind"] in players, m["ckind"] in players
        if d_in == c_in:
            continue  # between two players' accounts, or not a player's at all
        c = of(m["currency"])
        sign, other = (1, m["dkind"]) if c_in else (-1, m["ckind"])
        part = _counterparty(other, m["code"])
        c.players_net += sign * m["amount"]
        c.players_by_counterparty[part] = c.players_by_counterparty.get(part, 0) + sign * m["amount"]
    for c in out.values():
        if c.drop:
            c.hold_percent = percent(Fraction(c.win, c.drop), 2)
        if c.stakes_settled:
            c.rtp_actual_percent = percent(Fraction(back[c.currency], c.stakes_settled))
        c.reconciled = (c.players_by_counterparty.get("tables", 0) == -c.win
                        and c.players_by_counterparty.get("jackpots", 0) == c.jackpot_payouts)
    return sorted(out.values(), key=lambda c: c.currency)


# ---- CSV --------------------------------------------------------------------------------

CSV_COLUMNS = ["section", "id", "game", "profile", "currency", "drop", "win", "hold_percent", "rounds",
               "wagers_settled", "stakes_settled", "returned_and_won", "rtp_theoretical_percent",
               "rtp_actual_percent", "rtp_ci95_low", "rtp_ci95_high", "voids", "wagers_voided",
               "late_bets_approved", "jackpot_contributions", "jackpot_seeds", "jackpot_payouts",
               "tournament_buy_ins", "tournament_fees", "tournament_refunds", "tournament_prizes",
               "players_net", "reconciled", "ledger_ok", "detail"]


def to_csv(report: DailyReport) -> str:
    """One table: a row per game table, jackpot and tournament, a total per currency and the
    ledger check; amounts in minor units."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for t in report.tables:
        ci = t.rtp_ci95_percent or ["", ""]
        w.writerow({"section": "table", "id": t.table, "game": t.game, "profile": t.profile, "currency": t.currency,
                    "drop": t.drop, "win": t.win, "hold_percent": t.hold_percent or "", "rounds": t.rounds,
                    "wagers_settled": t.wagers_settled, "stakes_settled": t.stakes_settled,
                    "returned_and_won": t.returned + t.won + t.refunded,
                    "rtp_theoretical_percent": t.rtp_theoretical_percent or "",
                    "rtp_actual_percent": t.rtp_actual_percent or "", "rtp_ci95_low": ci[0], "rtp_ci95_high": ci[1],
                    "voids": t.voids, "wagers_voided": t.wagers_voided, "late_bets_approved": t.late_bets_approved,
                    "jackpot_contributions": t.jackpot_contributions, "jackpot_seeds": t.jackpot_seeds,
                    "jackpot_payouts": t.jackpot_payouts, "detail": t.tournament})
    for j in report.jackpots:
        w.writerow({"section": "jackpot", "id": j.account, "currency": j.currency,
                    "jackpot_contributions": j.contributions, "jackpot_seeds": j.seeds,
                    "jackpot_payouts": j.payouts})
    for tr in report.tournaments:
        w.writerow({"section": "tournament", "id": tr.tournament, "currency": tr.currency,
                    "tournament_buy_ins": tr.buy_ins, "tournament_fees": tr.fees, "tournament_refunds": tr.refunds,
                    "tournament_prizes": tr.prizes, "detail": f"forfeited {tr.forfeited}" if tr.forfeited else ""})
    for c in report.totals:
        w.writerow({"section": "total", "id": c.currency, "currency": c.currency, "drop": c.drop, "win": c.win,
                    "hold_percent": c.hold_percent or "", "rounds": c.rounds, "stakes_settled": c.stakes_settled,
                    "rtp_actual_percent": c.rtp_actual_percent or "", "voids": c.voids,
                    "late_bets_approved": c.late_bets_approved, "jackpot_contributions": c.jackpot_contributions,
                    "jackpot_seeds": c.jackpot_seeds, "jackpot_payouts": c.jackpot_payouts,
                    "tournament_fees": c.tournament_fees, "tournament_prizes": c.tournament_prizes,
                    "players_net": c.players_net, "reconciled": str(c.reconciled).lower(),
                    "detail": " ".join(f"{k}={v}" for k, v in sorted(c.players_by_counterparty.items()))})
    lg = report.ledger
    w.writerow({"section": "ledger", "id": "check", "ledger_ok": str(lg.ok).lower(),
                "detail": "; ".join(f"{p.code}: {p.subject}" for p in lg.problems)
                or f"{lg.accounts} accounts, {lg.transfers} transfers, {lg.pending_holds} pending holds"})
    return buf.getvalue()


def encode(report: DailyReport, fmt: str) -> bytes:
    return to_csv(report).encode() if fmt == "csv" else msgspec.json.encode(report)


def as_dict(report: DailyReport) -> dict[str, Any]:
    return msgspec.to_builtins(report)
