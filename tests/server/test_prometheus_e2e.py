"""A real Prometheus (Debian's, unpacked by ``./dev test``) scrapes a real ``casino serve
--workers 2`` with deploy/prometheus/alerts.yml: the scrape is taken (both workers' series,
summed in PromQL), every rule evaluates without error, none fires on a healthy floor; a
worker stopped with SIGSTOP fires ``CasinoWorkerStalled`` for that worker alone, though the
other one answers every scrape; once it runs again that alert resolves and
``CasinoEventLoopStalled`` fires (its loop was held all that time)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest

from helpers.prometheus import DEPLOY, tool
from helpers.servers import Supervised
from loadtest.server_process import free_port

from .conftest import ADMIN_PASSWORD, Floor, until

PROMETHEUS = tool("prometheus")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("redis-server") is None,
                       reason="redis-server is not installed (apt-get install redis-server; ./dev does)"),
    pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (./dev test unpacks Debian's "
                                                  "prometheus package)"),
]

CONFIG = """
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:
  - job_name: casino
    static_configs:
      - targets: ["127.0.0.1:{port}"]
"""


class Prometheus:
    def __init__(self, folder: Path, casino_port: int) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = folder / "prometheus.yml"
        config.write_text(CONFIG.format(rules=DEPLOY / "alerts.yml", port=casino_port))
        assert PROMETHEUS is not None
        self.log = open(folder / "prometheus.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)

    async def get(self, path: str, **params: str) -> dict:
        async with httpx.AsyncClient(base_url=self.url, timeout=10) as http:
            answer = (await http.get(path, params=params)).json()
        assert answer["status"] == "success", answer
        return answer["data"]

    async def query(self, promql: str) -> dict[tuple[tuple[str, str], ...], float]:
        """An instant query's samples: {sorted labels: value}."""
        data = await self.get("/api/v1/query", query=promql)
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["result"]}

    async def firing(self) -> list[dict]:
        return [a for a in (await self.get("/api/v1/alerts"))["alerts"] if a["state"] == "firing"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


async def test_prometheus_scrapes_the_workers_and_its_alerts_fire(db_url, tmp_path_factory):
    redis_dir = Path(tempfile.mkdtemp(prefix="casino-redis-")) / "r"
    sup = Supervised(db_url, tmp_path_factory.mktemp("prom-casino"), redis_dir, admin_password=ADMIN_PASSWORD)
    sup.env["CASINO_LEASE_SECONDS"] = "60"  # (the stopped worker keeps its table meanwhile)
    prometheus = None
    stopped = None
    try:
        sup.start()
        host = socket.gethostname()
        owners = {f"{host}:{sup.port}/{slot}" for slot in (0, 1)}
        for owner in sorted(owners):
            sup.wait_for(f"worker {owner} ready")
        await Floor(sup).table("roulette", "campione", "prom-rng", mode="rng")
        prometheus = Prometheus(tmp_path_factory.mktemp("prometheus"), sup.port)

        async def scraped() -> dict | None:
            try:
                up = await prometheus.query('up{job="casino"}')
                tables = await prometheus.query('sum(casino_tables_owned{game="roulette"})')
            except (httpx.HTTPError, AssertionError, ValueError):  # (not up yet: refused, or not ready)
                return None
            return {"up": up, "tables": tables} if list(up.values()) == [1.0] and list(tables.values()) == [1.0] \
                else None

        assert await until(scraped, 60), prometheus.log.name
        info = await prometheus.query("casino_process_info")
        assert {dict(k)["owner"] for k in info} == owners and set(info.values()) == {1.0}
        pids = {dict(k)["owner"]: int(dict(k)["pid"]) for k in info}

        async def evaluated() -> list[dict] | None:
            rules = [r for g in (await prometheus.get("/api/v1/rules"))["groups"] for r in g["rules"]]
            done = all(not r["lastEvaluation"].startswith("0001") for r in rules)
            return rules if done and len(rules) == 12 else None

        rules = await until(evaluated, 30)
        assert rules, await prometheus.get("/api/v1/rules")
        assert [r["name"] for r in rules if r["health"] != "ok" or r.get("lastError")] == []
        # A healthy floor: none of the rules without a `for` fires (a loaded machine may hold
        # a worker's loop half a second: that one is allowed).
        assert names(await prometheus.firing()) <= {"CasinoEventLoopStalled"}

        # Worker 1 stops (SIGSTOP): worker 0 answers every scrape, with worker 1's gauges as
        # it last wrote them; their age says it has not run.
        stopped = pids[f"{host}:{sup.port}/1"]
        os.kill(stopped, signal.SIGSTOP)

        async def stalled() -> list[dict] | None:
            alerts = [a for a in await prometheus.firing() if a["labels"]["alertname"] == "CasinoWorkerStalled"]
            return alerts or None

        alerts = await until(stalled, 40)
        assert alerts, await prometheus.get("/api/v1/alerts")
        assert [a["labels"]["pid"] for a in alerts] == [str(stopped)]
        assert names(await prometheus.firing()) <= {"CasinoWorkerStalled", "CasinoEventLoopStalled"}
        assert alerts[0]["annotations"]["summary"].startswith(f"127.0.0.1:{sup.port} (pid {stopped}) has not run for ")
        assert (await prometheus.query('up{job="casino"}')).popitem()[1] == 1.0

        os.kill(stopped, signal.SIGCONT)
        stopped = None

        # It runs again: the stall resolves, and the worker's loop, held all that time, says
        # so in its lag histogram (the one it wrote the moment it ran again).
        async def resolved() -> set[str] | None:
            now = names(await prometheus.firing())
            return now if now == {"CasinoEventLoopStalled"} else None

        assert await until(resolved, 30), await prometheus.firing()
        sup.proc.send_signal(signal.SIGTERM)
        assert sup.proc.wait(40) == 0, sup.log()[-3000:]
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        if prometheus is not None:
            prometheus.stop()
        sup.clean_up()



def names(alerts: list[dict]) -> set[str]:
    return {a["labels"]["alertname"] for a in alerts}
