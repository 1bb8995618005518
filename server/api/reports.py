"""Regulator reports: the daily report (``server.reports``), JSON or CSV."""

from __future__ import annotations

from datetime import date as Date
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import asyncpg
from litestar import Controller, Response, get
from litestar.params import Parameter

from games.errors import GameError
from server.policy import OVERSIGHT, require_roles
from server.reports import DailyReport, daily_report, to_csv


class ReportsController(Controller):
    path = "/"
    tags = ["reports"]

    @get("/reports/daily", operation_id="DailyReport", guards=[require_roles(*OVERSIGHT)],
         summary="The regulator's daily report: per table drop, win, hold, rounds, RTP, voids, late bets, "
                 "jackpots, tournaments, totals reconciled with the ledger, and the ledger check")
    async def daily(self, pool: asyncpg.Pool,
                    day: str = Parameter(query="date", description="the day, YYYY-MM-DD"),
                    tz: str = Parameter(default="UTC", description="the time zone the day is counted in"),
                    fmt: str = Parameter(query="format", default="json", pattern="^(json|csv)$",
                                         description="json or csv: one table, amounts in minor units "
                                                     "(text/csv)")) -> Response[DailyReport]:
        try:
            when = Date.fromisoformat(day)
        except ValueError:
            raise GameError("invalid_request", "date is YYYY-MM-DD.") from None
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise GameError("invalid_request", f"Unknown time zone {tz!r}.") from None
        report = await daily_report(pool, when, tz)
        headers = {"Cache-Control": "no-store"}
        if fmt != "csv":
            return Response(report, headers=headers)
        headers["Content-Disposition"] = f'attachment; filename="daily-{when.isoformat()}.csv"'
        # (the OpenAPI document describes the JSON form; the CSV is the same report, flat)
        csv: Any = to_csv(report)
        return Response(csv, media_type="text/csv; charset=utf-8", headers=headers)
