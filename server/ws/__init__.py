"""The websocket at ``/ws``: ``connection`` (one per client), ``handshake`` (how it presents
its token), ``outbox`` (its outgoing frames and the slow-client rule), ``feed`` (a table's
frames to it, in the publisher's task while it keeps up), ``hub`` (a crowd table's one
subscription a process), ``peek`` (a frame's seqs or cid without a full decode)."""

from server.ws.connection import Connection, ws_endpoint

__all__ = ["Connection", "ws_endpoint"]
