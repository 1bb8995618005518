"""The websocket at ``/ws``: ``connection`` (one per client), ``handshake`` (how it presents
its token), ``outbox`` (its outgoing frames and the slow-client rule), ``peek`` (a frame's
seqs or cid without a full decode)."""

from server.ws.connection import Connection, ws_endpoint

__all__ = ["Connection", "ws_endpoint"]
