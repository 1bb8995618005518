"""The money events' wire form: what clients and stored histories read must not move."""

import msgspec

from games.wagers import ChipsUnclaimed


def test_unclaimed_chips_keep_the_registers_wire_names():
    event = ChipsUnclaimed("floor:ann", 3, "bets", 1500, ["s3-w1", "s3-w2"], "c1")
    assert msgspec.json.decode(msgspec.json.encode(event)) == {
        "type": "unclaimed_recorded", "player": "floor:ann", "spin": 3, "kind": "bets", "amount": 1500,
        "wagers": ["s3-w1", "s3-w2"], "by": "c1"}
    stored = b'{"type":"unclaimed_recorded","player":"floor:ann","spin":3,"kind":"bets","amount":1500,' \
             b'"wagers":["s3-w1","s3-w2"],"by":"c1"}'
    assert msgspec.json.decode(stored, type=ChipsUnclaimed) == event
