"""The house rule for every engine (h11's): a refused command raises ``GameError`` with
its precise code and leaves the state exactly as it was, down to the encoded bytes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from games.commands import Actor
from games.errors import GameError


def assert_refused(engine: Any, command: Any, actor: Actor, code: str) -> GameError:
    """``engine.handle(command, actor)`` raises ``GameError(code)`` and changes nothing."""
    before = msgspec.msgpack.encode(engine.state)
    with pytest.raises(GameError) as info:
        engine.handle(command, actor)
    assert info.value.code == code, info.value.message
    assert msgspec.msgpack.encode(engine.state) == before
    return info.value
