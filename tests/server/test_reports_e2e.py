"""The regulator's daily report (issue 17) over a simulated day through the real server: a
live roulette (a croupier, a chef, a director, two players: wins and losses, a spin voided
and launched again, a spin refunded, a late bet the chef approved) and a live blackjack
round. The report, over HTTP (JSON and CSV) and from ``casino report daily``, must give each
table's drop, win and rounds as worked out here by hand, sum per currency to the ledger's
own movements to the cent (the players' wallets, read from the ledger tables), show the
ledger check ok, and refuse a player."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import subprocess
import sys

import asyncpg
import pytest

from server.client import HTTPError

pytestmark = pytest.mark.slow

ROUL, BJ = "rp-roul", "rp-bj"
PLAYERS = ("rp-ann", "rp-ben", "rp-dave", "rp-erin")
CHIPS = 100_000
# Cards are ints: suit * 13 + rank (rank 0 = ace ... 9 = ten, 12 = king; suits S H D C).
TEN_S, TEN_H, NINE_S, QUEEN_S, SIX_C, EIGHT_D = 9, 22, 8, 11, 44, 33


async def _roulette_day(croupier, chef, director, ann, ben) -> None:
    async def spin(number: int, *, void_first: bool = False) -> None:
        await croupier.play(ROUL, {"type": "launch_ball"})
        if void_first:  # "rien va" (Art. 11): back to before the launch, the bets stay
            await chef.play(ROUL, {"type": "void_spin", "reason": "the ball jumped out"})
            await croupier.play(ROUL, {"type": "launch_ball"})
        await croupier.play(ROUL, {"type": "no_more_bets"})
        await croupier.play(ROUL, {"type": "result", "number": number, "source": "croupier"})
        await ann.next_event(ROUL, "spin_settled")

    # Spin 1: 17 (black). ann's plein 17 wins 35 to 1, ben's noir 1 to 1.
    await croupier.play(ROUL, {"type": "open_spin"})
    await ann.bet(ROUL, "plein 17", 1_000)
    await ben.bet(ROUL, "noir", 2_000)
    await spin(17)
    # Spin 2: voided once, then 11 (black, odd): both lose.
    await croupier.play(ROUL, {"type": "open_spin"})
    await ann.bet(ROUL, "plein 5", 1_000)
    await ben.bet(ROUL, "pair", 2_000)
    await spin(11, void_first=True)
    # Spin 3: refunded by the director before the launch: ann's plein 1 comes back.
    await croupier.play(ROUL, {"type": "open_spin"})
    await ann.bet(ROUL, "plein 1", 500)
    await director.play(ROUL, {"type": "refund_spin", "reason": "the wheel is jammed"})
    await ann.next_event(ROUL, "spin_refunded")
    # Spin 4: 36 (red). ann's rouge wins; ben's plein 36 came after the launch, the chef took it.
    await croupier.play(ROUL, {"type": "open_spin"})
    await ann.bet(ROUL, "rouge", 1_000)
    await croupier.play(ROUL, {"type": "launch_ball"})
    ack = await ben.bet(ROUL, "plein 36", 500)
    await ben.wait_seq(ROUL, ack["seq"])
    late = next(f["event"] for f in ben.frames if f.get("seq") == ack["seq"] and f["type"] == "event")
    assert late["type"] == "late_bet_pending"
    await chef.play(ROUL, {"type": "accept_late", "late": late["late"]})
    await croupier.play(ROUL, {"type": "no_more_bets"})
    await croupier.play(ROUL, {"type": "result", "number": 36, "source": "croupier"})
    await ann.next_event(ROUL, "spin_settled")


async def _blackjack_round(croupier, dave, erin) -> None:
    await croupier.play(BJ, {"type": "shuffle"})
    await croupier.play(BJ, {"type": "cut", "at": 100})
    await dave.sit(BJ, 1)
    await dave.stake(BJ, 1, 2_000)
    await erin.sit(BJ, 2)
    await erin.stake(BJ, 2, 1_000)
    await croupier.play(BJ, {"type": "close_bets"})
    for box, card in [(1, TEN_S), (2, TEN_H), (0, NINE_S), (1, QUEEN_S), (2, SIX_C)]:
        await croupier.play(BJ, {"type": "card", "box": box, "card": card})
    await dave.act(BJ, "stand", 1)  # 20
    await erin.act(BJ, "stand", 2)  # 16
    await croupier.play(BJ, {"type": "card", "box": 0, "card": EIGHT_D})  # dealer 17
    await dave.next_event(BJ, "round_settled")


# By hand. Roulette: stakes held 3,000 + 3,000 + 500 (refunded: not in the drop) + 1,500;
# paid back 36,000 + 4,000 (spin 1), 0 (spin 2), 2,000 + 18,000 (spin 4).
ROUL_DROP, ROUL_WIN = 7_500, (3_000 - 40_000) + 3_000 + (1_500 - 20_000)
# Blackjack: dave's 2,000 wins even money, erin's 1,000 loses.
BJ_DROP, BJ_WIN = 3_000, 1_000 - 2_000
NET = {"rp-ann": 35_000 - 1_000 + 1_000, "rp-ben": 2_000 - 2_000 + 17_500, "rp-dave": 2_000, "rp-erin": -1_000}


async def _ledger_facts(db_url: str) -> tuple[str, dict[str, int], int]:
    """Straight from the ledger's tables: the day, each player's wallet balance (posted) and
    what the cashier put in the wallets."""
    conn = await asyncpg.connect(db_url)
    try:
        day = await conn.fetchval("SELECT (min(at) AT TIME ZONE 'UTC')::date FROM ledger_transfers")
        rows = await conn.fetch("SELECT id, credits_posted - debits_posted AS posted, debits_pending"
                                " FROM ledger_accounts WHERE id = ANY($1::text[])",
                                [f"wallet:{p}:CHF" for p in PLAYERS])
        assert all(r["debits_pending"] == 0 for r in rows)
        deposits = await conn.fetchval("SELECT sum(amount) FROM ledger_transfers WHERE op = 'transfer'"
                                       " AND debit = 'cashier:CHF' AND credit = ANY($1::text[])",
                                       [f"wallet:{p}:CHF" for p in PLAYERS])
        return day.isoformat(), {r["id"].split(":")[1]: r["posted"] for r in rows}, deposits
    finally:
        await conn.close()


def _check_tables(tables: dict[str, dict]) -> None:
    r, b = tables[ROUL], tables[BJ]
    assert (r["drop"], r["win"], r["rounds"]) == (ROUL_DROP, ROUL_WIN, 3)
    assert (r["voids"], r["late_bets_approved"], r["wagers_voided"], r["stakes_voided"]) == (2, 1, 1, 500)
    assert (r["stakes_settled"], r["returned"] + r["won"]) == (7_500, 60_000)
    assert r["rtp_actual_percent"] == "800.0000" and r["hold_percent"] == "-700.00"
    # plein 36/37, rouge 1350/1369 (en prison, a second zero loses): stake-weighted
    assert 97.29 < float(r["rtp_theoretical_percent"]) < 98.62
    low, high = (float(x) for x in r["rtp_ci95_percent"])
    assert low < 800 < high
    assert (b["drop"], b["win"], b["rounds"], b["voids"]) == (BJ_DROP, BJ_WIN, 1, 0)
    assert b["rtp_theoretical_percent"] == "99.5520"  # lugano's main game: 0.448% house edge
    assert b["rtp_actual_percent"] == "133.3333" and b["rtp_ci95_percent"] is None  # one round


async def test_daily_report_sums_to_the_ledger(floor, db_url):
    croupier = await floor.account("rp-croupier", "croupier")
    chef = await floor.account("rp-chef", "chef")
    director = await floor.account("rp-director", "director")
    inspector = await floor.account("rp-inspector", "inspector")
    ann, ben, dave, erin = [await floor.account(p, chips=CHIPS) for p in PLAYERS]
    await floor.table("roulette", "campione", ROUL, staff=("rp-croupier", "rp-chef"))
    await floor.table("blackjack", "lugano", BJ, staff=("rp-croupier",), min_bet=1_000, max_bet=10_000)
    clients = [croupier, chef, director, inspector, ann, ben, dave, erin]
    try:
        for c in (croupier, chef, director, ann, ben):
            await c.connect()
            await c.subscribe(ROUL)
        for c in (dave, erin):
            await c.connect()
        for c in (croupier, dave, erin):
            await c.subscribe(BJ)
        await _roulette_day(croupier, chef, director, ann, ben)
        await _blackjack_round(croupier, dave, erin)

        day, wallets, deposits = await _ledger_facts(db_url)
        # the players' results by hand, against the ledger's own balances
        assert {p: wallets[p] - CHIPS for p in PLAYERS} == NET
        wallets_net = sum(wallets.values()) - deposits

        report = await inspector.request("GET", "/reports/daily", params={"date": day})
        tables = {t["table"]: t for t in report["tables"]}
        _check_tables(tables)
        (chf,) = [t for t in report["totals"] if t["currency"] == "CHF"]
        assert (chf["drop"], chf["win"], chf["rounds"]) == (ROUL_DROP + BJ_DROP, ROUL_WIN + BJ_WIN, 4)
        # To the cent: the tables' win is what the players' wallets lost, as the ledger holds them.
        assert sum(t["win"] for t in report["tables"] if t["currency"] == "CHF") == -wallets_net
        assert chf["players_by_counterparty"] == {"cashier": deposits, "tables": wallets_net}
        assert chf["players_net"] == sum(wallets.values()) and chf["reconciled"] is True
        assert report["ledger"]["ok"] is True and report["ledger"]["problems"] == []

        # CSV: the same figures, text/csv
        r = await inspector.http.get("/reports/daily", params={"date": day, "format": "csv"},
                                     headers={"Authorization": f"Bearer {inspector.token}"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(r.text)))
        by = {(row["section"], row["id"]): row for row in rows}
        assert (by["table", ROUL]["drop"], by["table", ROUL]["win"]) == (str(ROUL_DROP), str(ROUL_WIN))
        assert by["total", "CHF"]["win"] == str(ROUL_WIN + BJ_WIN) and by["ledger", "check"]["ledger_ok"] == "true"

        # A player may not see it.
        with pytest.raises(HTTPError) as refused:
            await ann.request("GET", "/reports/daily", params={"date": day})
        assert refused.value.status == 403

        # Offline, from the database: `casino report daily`.
        env = {**os.environ, "DATABASE_URL": db_url}
        out = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "server.cli", "report", "daily", "--date", day],
            env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        offline = json.loads(out.stdout)
        _check_tables({t["table"]: t for t in offline["tables"]})
        assert offline["totals"] == report["totals"] and offline["ledger"]["ok"] is True
        out = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "server.cli", "report", "daily", "--date", day,
                             "--format", "csv"], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.strip() == r.text.strip()
    finally:
        for c in clients:
            await c.close()
    assert await floor.ledger_problems() == []
