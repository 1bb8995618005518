"""A published frame's text is decoded once for every socket it goes to."""

from server.ws import outbox


def test_one_frame_is_decoded_once_and_equal_frames_are_not_confused():
    big = ('{"type":"events","events":[' + ",".join(['{"x":"é"}'] * 1000) + "]}").encode()
    first = outbox.text_of(big)
    assert first == big.decode() and outbox.text_of(big) is first  # the same str object: decoded once
    twin = bytes(bytearray(big))  # equal content, another object: decoded on its own
    assert outbox.text_of(twin) == first and outbox.text_of(twin) is not first


def test_the_cache_stays_bounded_and_small_frames_are_not_kept():
    outbox._TEXTS.clear()
    assert outbox.text_of(b'{"type":"pong"}') == '{"type":"pong"}' and not outbox._TEXTS
    frames = [(f'{{"n":{i},"pad":"' + "x" * 5000 + '"}').encode() for i in range(outbox._TEXTS_MAX + 10)]
    for f in frames:
        assert outbox.text_of(f) == f.decode()
    assert len(outbox._TEXTS) == outbox._TEXTS_MAX
    assert all(outbox._TEXTS[id(f)][0] is f for f in frames[-outbox._TEXTS_MAX:])
