"""``GET /metrics``: this process's Prometheus metrics (``server.metrics``), or with
``casino serve --workers N`` every worker's, in prometheus_client's text format (outside the
OpenAPI, like the health routes).

Operators' scrapers call it without a user's token. Expose it on the internal network only;
with ``CASINO_METRICS_TOKEN`` set, a scrape must also present ``Authorization: Bearer
<that token>`` (else 401), for a floor where the port is reachable from outside.
"""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Controller, Request, Response, get
from litestar.connection import ASGIConnection
from litestar.handlers import BaseRouteHandler
from prometheus_client import CONTENT_TYPE_LATEST

from games.errors import GameError
from server.metrics import scrape
from server.resources import resources_of


def metrics_token(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """The guard: with CASINO_METRICS_TOKEN set, only a scraper presenting it."""
    token = resources_of(connection.app).settings.metrics_token
    if not token:
        return
    presented = connection.headers.get("authorization", "")
    if not hmac.compare_digest(presented.encode(), f"Bearer {token}".encode()):
        raise GameError("unauthorized", "Metrics need the scrape token (Authorization: Bearer ...).")


class MetricsController(Controller):
    path = "/metrics"
    include_in_schema = False
    guards = [metrics_token]

    @get()
    async def get(self, request: Request[Any, Any, Any]) -> Response[bytes]:
        # (Not Litestar's PrometheusController: it reads a multiprocess registry on the event
        # loop, and this worker's own gauges would be up to a second old.)
        return Response(await scrape(resources_of(request.app)), headers={"Content-Type": CONTENT_TYPE_LATEST})
