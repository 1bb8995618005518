"""What every socket derives from a published frame (its ASGI message, its seqs) is worked
out once per frame, not once per socket."""

from server.ws import outbox
from server.ws.peek import batch_seqs


def test_one_frame_is_decoded_once_and_equal_frames_are_not_confused():
    big = ('{"type":"events","events":[' + ",".join(['{"x":"é"}'] * 1000) + "]}").encode()
    first = outbox.message_of(big)
    assert first == {"type": "websocket.send", "bytes": None, "text": big.decode()}
    assert outbox.message_of(big) is first  # the same message: decoded once, for every socket
    twin = bytes(bytearray(big))  # equal content, another object: decoded on its own
    assert outbox.message_of(twin) == first and outbox.message_of(twin) is not first


def test_the_cache_stays_bounded_and_small_frames_are_not_kept():
    message_of = outbox.message_of
    message_of.cache.clear()
    assert message_of(b'{"type":"pong"}')["text"] == '{"type":"pong"}' and not message_of.cache
    frames = [(f'{{"n":{i},"pad":"' + "x" * 5000 + '"}').encode() for i in range(message_of.size + 10)]
    for f in frames:
        assert message_of(f)["text"] == f.decode()
    assert len(message_of.cache) == message_of.size
    assert all(message_of.cache[id(f)][0] is f for f in frames[-message_of.size:])


def test_a_frames_seqs_are_read_once():
    events = ",".join(f'{{"seq":{n},"round":"r","event":{{"pad":"{"x" * 1000}"}}}}' for n in range(5, 10))
    frame = ('{"type":"events","table":"t","seq":9,"events":[' + events + "]}").encode()
    peek = batch_seqs(frame)
    assert (peek.seq, [e.seq for e in peek.events]) == (9, [5, 6, 7, 8, 9])
    assert batch_seqs(frame) is peek



def test_a_frame_still_asked_for_outlives_the_frames_that_pass_meanwhile():
    """A frame handed out over many turns (``server.fanout``) while other tables' frames
    pass: each socket that asks for it again keeps it, so it is framed once, not again after
    every ``size`` other frames (each copy held by the transports that had not sent it)."""
    from server.ws.direct import framed_of

    framed_of.cache.clear()
    framed_of.big.clear()
    first = (b'{"type":"events","pad":"' + b"x" * 5000 + b'"}')
    once = framed_of(first)
    for i in range(5 * framed_of.size):
        framed_of(b'{"n":%d}' % i)  # another table's frame
        if i % 10 == 0:
            assert framed_of(first) is once  # the next socket of its hand-out
    assert len(framed_of.cache) == framed_of.size


def test_a_big_frame_is_not_pushed_out_by_small_ones_however_many():
    """Between two turns of a settlement's hand-out a busy process frames more than ``size``
    other frames: the settlement's framing, megabytes, stays in the big frames' places."""
    from server.ws.direct import framed_of

    framed_of.cache.clear()
    framed_of.big.clear()
    settlement = b'{"type":"events","pad":"' + b"x" * 200_000 + b'"}'
    once = framed_of(settlement)
    for turn in range(20):
        for i in range(3 * framed_of.size):
            framed_of(b'{"turn":%d,"n":%d}' % (turn, i))
        assert framed_of(settlement) is once
    assert list(framed_of.big) == [id(settlement)]
