"""A websocket fuzzer: seeded, hostile frames over the real protocol, as an outsider would
send them, and what the server must do with each: answer it, keep the socket, change
nothing it should not.

``frames(seed)`` yields frames built from the protocol's own messages, then broken on
purpose: wrong types, huge and negative numbers, floats, control characters and lone
surrogates, unknown fields and message types, deep nesting, truncated or invalid JSON,
binary garbage, oversize frames, other people's ids, and every game command with random
fields. ``fuzz(url, token, n, seed)`` sends ``n`` of them on one socket (a bounded number in
flight) and returns what came back; ``python -m loadtest.fuzz`` runs a long form against a
fresh server and checks the ledger after it (RELIABILITY.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgspec
import websockets

from blackjack.commands import Command as BlackjackCommand
from roulette.commands import Command as RouletteCommand

MAX_FRAME = 16 * 1024  # the server's limit for a frame it reads (a larger one is refused)
ODD_TEXT = ["", "x", "plein 17", "rouge", "\u0000", "a\u0007b", "\ud800", "floor:blue", "floor:", "bob",
            "voisins du zéro", "17 et 9 voisins", "😀" * 40, "x" * 300, "' OR 1=1 --", "../../etc/passwd"]
ODD_NUMBERS = [0, 1, -1, 7, 36, 37, 500, 1000.5, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**70, -2**63,
               float("1e308"), True, None]


def _tags(union: Any) -> list[tuple[str, list[str]]]:
    out = []
    for cls in union.__args__:
        info = msgspec.inspect.type_info(cls)
        out.append((cls.__struct_config__.tag, [f.name for f in info.fields]))
    return out


COMMANDS = _tags(RouletteCommand) + _tags(BlackjackCommand)


def _value(rng: random.Random) -> Any:
    pick = rng.random()
    if pick < 0.4:
        return rng.choice(ODD_TEXT)
    if pick < 0.8:
        return rng.choice(ODD_NUMBERS)
    if pick < 0.9:
        return [rng.choice(ODD_NUMBERS) for _ in range(rng.randint(0, 4))]
    return {rng.choice(["by", "role", "player", "id"]): rng.choice(ODD_TEXT)}


def _command(rng: random.Random) -> dict[str, Any]:
    tag, fields = rng.choice(COMMANDS)
    cmd: dict[str, Any] = {"type": tag}
    for name in fields:
        if rng.random() < 0.7:
            cmd[name] = _value(rng)
    if rng.random() < 0.1:
        cmd[rng.choice(["colour", "by", "role", "__proto__"])] = _value(rng)
    return cmd


def _plausible(rng: random.Random) -> dict[str, Any]:
    """A command a real client might send, right or wrong for the table and the moment."""
    return rng.choice([
        {"type": "place_bet", "spot": rng.choice(["rouge", "plein 17", "cheval 0/3", "douzaine 2"]),
         "amount": rng.choice([500, 1_000, 5_000])},
        {"type": "place_announced", "announce": rng.choice(["voisins du zéro", "tiers du cylindre"]), "unit": 500},
        {"type": "same_again"},
        {"type": "sit", "box": rng.randint(1, 7)},
        {"type": "place_bet", "box": rng.randint(1, 7), "amount": rng.choice([1_000, 2_000])},
        {"type": rng.choice(["hit", "stand", "double", "split"]), "box": rng.randint(1, 7)},
        {"type": "insure", "box": rng.randint(1, 7), "amount": 500},
        {"type": "place_bet", "box": 2, "amount": 1_000, "player": "floor:blue"},
        {"type": "place_bet", "spot": "rouge", "amount": 500, "player": "someone-else"},
        {"type": rng.choice(["open_spin", "launch_ball", "close_bets", "suspend", "close_table"])},
    ])


def frames(seed: int, tables: list[str]) -> Iterator[bytes]:
    """An endless, reproducible stream of hostile frames."""
    rng = random.Random(seed)
    n = 0
    while True:
        n += 1
        cid = f"f{n}"
        kind = rng.random()
        table = rng.choice(tables + ["no-such-table", "", "\u0000"])
        if kind < 0.15:  # well formed, plausible: it reaches the engine (and the ledger)
            msg: Any = {"type": "play", "cid": cid, "table": rng.choice(tables), "command": _plausible(rng)}
        elif kind < 0.45:
            msg = {"type": "play", "cid": cid, "table": table, "command": _command(rng)}
        elif kind < 0.55:
            msg = {"type": rng.choice(["subscribe", "unsubscribe"]), "cid": cid, "table": table,
                   "since": rng.choice([None, 0, -1, 2**70, "x"])}
        elif kind < 0.6:
            msg = {"type": "auth", "cid": cid, "token": rng.choice(ODD_TEXT)}
        elif kind < 0.65:
            msg = {"type": rng.choice(["dance", "", "PLAY", None, 7]), "cid": cid}
        elif kind < 0.7:
            msg = {"type": "ping", "cid": rng.choice([cid, 7, None, "\ud800", "x" * 200])}
        else:
            msg = None
        if msg is not None:
            raw = json.dumps(msg, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
            if rng.random() < 0.15:  # cut short, or a byte flipped
                raw = raw[: rng.randint(0, len(raw))] if rng.random() < 0.5 else _flip(raw, rng)
            yield raw
            continue
        shape = rng.random()
        if shape < 0.25:
            depth = rng.choice([64, 512, 2048, 5000])
            yield (f'{{"type": "play", "cid": "{cid}", "table": "{tables[0]}", '
                   f'"command": {"[" * depth}{"]" * depth}}}').encode()
        elif shape < 0.45:
            yield bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        elif shape < 0.6:
            yield json.dumps({"type": "ping", "cid": cid, "pad": "x" * rng.randint(MAX_FRAME, 4 * MAX_FRAME)}).encode()
        elif shape < 0.8:
            yield rng.choice([b"null", b"[]", b"{}", b"1e999", b'"\\u0000"', b"{\"type\": \"ping\"", b"\xff\xfe"])
        else:
            yield json.dumps([_command(rng) for _ in range(rng.randint(1, 5))]).encode()


def _flip(raw: bytes, rng: random.Random) -> bytes:
    if not raw:
        return raw
    i = rng.randrange(len(raw))
    return raw[:i] + bytes([rng.getrandbits(8)]) + raw[i + 1:]


class Outcome(msgspec.Struct):
    sent: int
    answers: Counter
    codes: Counter
    closed: int | None  # the close code, if the server closed the socket
    seconds: float
    unanswered: list[str]  # frames (with a cid) that got no answer, if any


async def fuzz(ws_url: str, token: str, n: int, seed: int, tables: list[str], in_flight: int = 64) -> Outcome:
    """Send ``n`` frames on one socket, at most ``in_flight`` unanswered; what came back."""
    answers: Counter = Counter()
    codes: Counter = Counter()
    pending = asyncio.Semaphore(in_flight)
    started = time.monotonic()
    closed: int | None = None
    waiting: dict[str, bytes] = {}  # cid -> the frame, until its answer comes
    async with websockets.connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"},
                                  max_size=None, max_queue=None) as ws:

        async def read() -> None:
            async for raw in ws:
                msg = json.loads(raw)
                answers[msg["type"]] += 1
                if msg["type"] in ("error", "rejected", "accepted", "pong"):
                    pending.release()
                    codes[msg.get("code", msg["type"])] += 1
                    waiting.pop(msg.get("cid", ""), None)

        reader = asyncio.create_task(read())
        for i, table in enumerate(tables):  # following the tables, so game commands reach them
            await ws.send(json.dumps({"type": "subscribe", "cid": f"s{i}", "table": table}))
        sent = 0
        try:
            for raw in frames(seed, tables):
                if sent == n:
                    break
                try:
                    await asyncio.wait_for(pending.acquire(), 30)
                except TimeoutError:
                    break  # answers stopped coming: reported as unanswered
                cid = _cid(raw)
                if cid:
                    waiting[cid] = raw
                try:
                    await ws.send(raw.decode("utf-8", "surrogateescape") if _text(raw) else raw)
                except websockets.ConnectionClosed:
                    break
                sent += 1
            # Every frame is answered once (a binary one too): wait for the last answers.
            for _ in range(in_flight + len(tables)):
                try:
                    await asyncio.wait_for(pending.acquire(), 30)
                except TimeoutError:
                    break
        finally:
            closed = ws.close_code
            reader.cancel()
    unanswered = [raw[:300].decode("utf-8", "replace") for raw in waiting.values()]
    return Outcome(sent, answers, codes, closed, time.monotonic() - started, unanswered)


def _cid(raw: bytes) -> str:
    try:
        msg = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return ""
    cid = msg.get("cid") if isinstance(msg, dict) else None
    if not isinstance(cid, str):
        return ""
    try:  # a cid that is not text (a lone surrogate) cannot be answered with: the error has none
        cid.encode("utf-8")
    except UnicodeEncodeError:
        return ""
    return cid


def _text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# The operations that log out: schemathesis would revoke its own token with them, and every
# request after it would be a 401 (tests/server/test_logout_e2e.py covers them).
LOGOUTS = "^(Logout|CloseSession)$"


def schemathesis(url: str, token: str, examples: int, seed: int) -> tuple[int, str]:
    """schemathesis over the whole OpenAPI document: its exit code and its summary."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "run", f"{url}/schema/openapi.json", "--max-examples",
         str(examples), "--seed", str(seed), "--no-color",
         "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,ignored_auth",
         "--exclude-operation-id-regex", LOGOUTS, "-H", f"Authorization: Bearer {token}"],
        capture_output=True, text=True,
    )
    summary = [line for line in run.stdout.splitlines() if "generated" in line or "failure" in line]
    return run.returncode, "; ".join(s.strip() for s in summary)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--schemathesis", type=int, default=100, metavar="EXAMPLES",
                        help="then schemathesis with this many examples per operation (0: none)")
    args = parser.parse_args()
    from loadtest.floor import build_floor
    from loadtest.server_process import ADMIN_PASSWORD, LoadServer, ledger_problems, mint_token

    with LoadServer() as srv:
        floor = asyncio.run(build_floor(srv.url, ADMIN_PASSWORD, players=2, roulette_live=1, roulette_rng=1,
                                        blackjack_rng=("lugano",), blackjack_live=("titano",)))
        tables = [*floor["roulette_live"], *floor["roulette_rng"], *floor["blackjack_rng"], *floor["blackjack_live"]]
        ws_url = srv.url.replace("http", "ws", 1) + "/ws"
        out = asyncio.run(fuzz(ws_url, mint_token(floor["players"][0]), args.frames, args.seed, tables))
        st_code, st_summary = (schemathesis(srv.url, mint_token("admin", "admin"), args.schemathesis, args.seed)
                               if args.schemathesis else (0, "not run"))
        problems = asyncio.run(ledger_problems(srv.db_url))
        log = srv.log()
    print(f"frames sent {out.sent} in {out.seconds:.1f} s, seed {args.seed}; socket closed: {out.closed}")
    print("answers:", dict(out.answers.most_common()))
    print("codes:", dict(out.codes.most_common()))
    print(f"frames with a cid left unanswered: {len(out.unanswered)}", *out.unanswered[:5], sep="\n  ")
    print(f"schemathesis (exit {st_code}): {st_summary}")
    server_errors = log.count('HTTP/1.1" 5')
    print(f"internal errors: {out.codes['internal_error']}; 5xx in the access log: {server_errors}; "
          f"tracebacks in the server log: {log.count('Traceback')}; ledger problems: {len(problems)}")
    bad = out.closed is not None or out.codes["internal_error"] or out.unanswered or st_code or server_errors
    bad = bad or problems
    bad = bad or "Traceback" in log
    bad = bad or "Traceback" in log
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
