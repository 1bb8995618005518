"""A kill -9 soak: players bet on RNG tables while the server is killed and restarted again
and again; afterwards every acknowledged bet must be in the ledger, nothing paid twice, the
ledger check clean. (RELIABILITY.md has the figures; CI runs one kill in
tests/server/test_crash_e2e.py.)

    python -m loadtest.soak --kills 10 --every 4 --players 12
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import time

import asyncpg

from loadtest.floor import build_floor, login_tokens
from loadtest.server_process import ADMIN_PASSWORD, LoadServer, ledger_problems
from server.client import CasinoClient, Rejected

SPOTS = ["rouge", "noir", "pair", "impair", "plein 17", "cheval 0/3", "douzaine 2", "colonne 1", "manque"]


async def roulette_player(url: str, user: str, token: str, table: str, acked: list, stop: asyncio.Event) -> None:
    """Bets every half second (a refusal while the ball runs costs nothing); rides out every
    kill by connecting again and resuming the table from its last seq."""
    rng = random.Random(user)
    client = CasinoClient(url)
    client.token, client.user = token, user
    while not stop.is_set():
        try:
            if client.ws is None or client.closed is None or client.closed.done():
                await (client.reconnect() if table in client.last_seq else client.connect())
                if table not in client.last_seq:
                    await client.subscribe(table)
            ack = await client.bet(table, rng.choice(SPOTS), rng.choice([500, 1_000, 2_000]))
            acked.append((table, ack["seq"]))
        except Rejected:
            pass  # the ball is running: refused at once, nothing held
        except Exception:  # the server was killed: connect again once it is back
            await client.disconnect()
        await asyncio.sleep(0.5)
    await client.close()


async def check(db_url: str, acked: list) -> dict:
    """Every acknowledged bet's event is stored and its hold is in the ledger."""
    conn = await asyncpg.connect(db_url)
    try:
        rows = await conn.fetch(
            """SELECT e.table_id, e.seq, e.payload->>'wager' AS wager,
                      (SELECT count(*) FROM ledger_transfers t
                        WHERE t.id = e.table_id || '/' || (e.payload->>'wager') || '/hold') AS holds,
                      (SELECT count(*) FROM ledger_transfers t
                        WHERE t.id = e.table_id || '/' || (e.payload->>'wager') || '/win') AS wins
               FROM table_events e JOIN unnest($1::text[], $2::bigint[]) AS a(t, s)
                 ON e.table_id = a.t AND e.seq = a.s""",
            [t for t, _ in acked], [s for _, s in acked],
        )
        placed = [r for r in rows if r["wager"]]
        return {
            "acked": len(acked),
            "found": len(rows),
            "held": sum(r["holds"] == 1 for r in placed),
            "paid_twice": sum(r["wins"] > 1 for r in placed),
        }
    finally:
        await conn.close()


async def soak(srv: LoadServer, kills: int, every: float, players: int) -> dict:
    floor = await build_floor(srv.url, ADMIN_PASSWORD, players=players, roulette_live=0, roulette_rng=2,
                              blackjack_rng=(), blackjack_live=())
    tokens = await login_tokens(srv.url, floor["players"])
    acked: list = []
    stop = asyncio.Event()
    bots = [asyncio.create_task(roulette_player(srv.url, u, tokens[u], floor["roulette_rng"][i % 2], acked, stop))
            for i, u in enumerate(floor["players"])]
    started = time.monotonic()
    for n in range(kills):
        await asyncio.sleep(every)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait()
        await asyncio.to_thread(srv.start)
        print(f"kill {n + 1}/{kills}: {len(acked)} bets acknowledged so far", flush=True)
    await asyncio.sleep(every)
    stop.set()
    await asyncio.gather(*bots, return_exceptions=True)
    out = await check(srv.db_url, acked)
    out["kills"] = kills
    out["seconds"] = round(time.monotonic() - started, 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between kills")
    parser.add_argument("--players", type=int, default=12)
    args = parser.parse_args()
    with LoadServer(env={"CASINO_BETTING_SECONDS": "2", "CASINO_PAUSE_SECONDS": "0.5"}) as srv:
        out = asyncio.run(soak(srv, args.kills, args.every, args.players))
        problems = asyncio.run(ledger_problems(srv.db_url))
    out["ledger_problems"] = len(problems)
    print(out)
    ok = out["found"] == out["acked"] == out["held"] and not out["paid_twice"] and not problems
    print("OK: every acknowledged bet is held, nothing paid twice, the ledger check is clean" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
