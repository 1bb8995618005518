"""Tables with rigged shoes: the cards each test deals are chosen by hand."""

from __future__ import annotations

import pytest

from blackjack.profiles import builtin
from helpers.blackjack import Harness


@pytest.fixture
def table():
    def make(profile="campione", cards="", **kw):
        p = builtin(profile) if isinstance(profile, str) else profile
        return Harness(p, cards, **kw)

    return make
