"""A bare websocket echo at ``/ws/echo``: the yardstick the load benchmarks divide by.

It runs on the same stack as ``/ws`` (uvicorn, the sans-io websockets protocol, Litestar's
websocket handler, the same receive/send calls) but does no parsing, no auth, no table and
no database: every frame goes straight back. A benchmark that measures durable bets/s and
the echo's round trips/s in the same run gives a ratio that holds on a noisy machine.

Off by default (an unauthenticated endpoint has no place on a casino floor): it is routed
only when the server starts with ``CASINO_ECHO_ENDPOINT=1`` (the benchmarks set it).
"""

from __future__ import annotations

import os

from litestar import WebSocket, websocket

ENV_FLAG = "CASINO_ECHO_ENDPOINT"
PATH = "/ws/echo"  # under /ws, so the JWT middleware's exclusion of "/ws" covers it


@websocket(PATH, include_in_schema=False)
async def echo_endpoint(socket: WebSocket) -> None:
    await socket.accept()
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is not None:
            await socket.send_text(text)
        else:
            await socket.send_bytes(message.get("bytes") or b"")


def echo_routes() -> list:
    """The echo route when ``CASINO_ECHO_ENDPOINT=1``, else nothing."""
    return [echo_endpoint] if os.environ.get(ENV_FLAG) == "1" else []
