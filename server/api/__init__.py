"""The HTTP API, one controller per domain. Every refusal is a GameError, turned into
problem details by ``server.problems``; who may call what is ``server.policy``'s guards;
handlers get their services by dependency injection (``server.deps``)."""

from __future__ import annotations

from server.api.accounts import AccountsController
from server.api.audit import AuditController
from server.api.auth import AuthController
from server.api.cashier import CashierController
from server.api.health import health, ready
from server.api.metrics import MetricsController
from server.api.recall import RecallController
from server.api.reports import ReportsController
from server.api.responsible import ResponsibleGamingController
from server.api.rounds import RoundsController
from server.api.tables import TablesController
from server.api.tournaments import TournamentsController
from server.api.unclaimed import UnclaimedController

ROUTES = [AuthController, AccountsController, CashierController, AuditController, TablesController,
          RoundsController, TournamentsController, ReportsController, UnclaimedController, health, ready,
          MetricsController, RecallController, ResponsibleGamingController]

__all__ = ["ROUTES"]
