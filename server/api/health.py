"""Liveness and readiness, for load balancers and orchestrators (outside the OpenAPI)."""

from __future__ import annotations

from litestar import Response, get

from server.api.schemas import Alive
from server.manager import Readiness, TableManager


@get(["/health", "/health/live"], include_in_schema=False)
async def health() -> Alive:
    """Liveness: the process answers."""
    return Alive()


@get("/health/ready", include_in_schema=False)
async def ready(manager: TableManager) -> Response[Readiness]:
    """Readiness: every open table is served, here or by a live process; 503 with the tables
    nobody serves yet (e.g. leased by a killed process until its lease runs out)."""
    state = await manager.readiness()
    return Response(state, status_code=200 if state.ready else 503)
