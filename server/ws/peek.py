"""Reading one field of a frame without decoding all of it: the seqs of a published
``events`` frame (to drop or cut what a socket already has), and the ``cid`` of a frame the
decoder refused (to answer it with ``rejected`` rather than a bare ``error``)."""

from __future__ import annotations

import re

import msgspec

from games.errors import GameError
from server.edge import check_text
from server.protocol import Events
from server.ws.per_frame import PerFrame


class _EventSeq(msgspec.Struct):
    seq: int = 0


class BatchSeqs(msgspec.Struct):
    seq: int = 0  # the last event's
    events: list[_EventSeq] = []


class _Cid(msgspec.Struct):
    cid: str = ""


# Read once per published frame, not once per socket (``per_frame``).
batch_seqs = PerFrame(msgspec.json.Decoder(BatchSeqs).decode)
events_decoder = msgspec.json.Decoder(Events)
_cid_decoder = msgspec.json.Decoder(_Cid)
# A cid in a frame the decoder refused as a whole (e.g. a lone surrogate elsewhere in it).
_CID = re.compile(rb'"cid"\s*:\s*("(?:[^"\\]|\\.){1,128}")')


def cid_of(raw: bytes) -> str:
    """The frame's cid, or "" when none can be read (or it holds text the edge refuses)."""
    try:
        return _cid_decoder.decode(raw).cid
    except Exception:  # (as the frame itself: not JSON, too deep, not UTF-8)
        pass
    m = _CID.search(raw)
    try:
        cid = msgspec.json.decode(m.group(1), type=str) if m else ""
    except Exception:
        return ""
    try:
        check_text(cid)
    except GameError:
        return ""
    return cid
