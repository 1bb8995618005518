"""Table limits (``server.store.limits``): versioned, audited, effective from the round they name."""

from __future__ import annotations

import asyncpg
import pytest

from games.errors import GameError
from server.store.limits import LimitException, LimitsStore, TableLimits

CAMPIONE = TableLimits("CHF", 500, 1_000_000, {"plein": 50_000, "cheval": 100_000})



async def test_versions_apply_from_their_round(pool):
    store = LimitsStore(pool)
    assert await store.current("r1") is None
    v1 = await store.set("r1", CAMPIONE, "director-bianchi", from_round=0, reason="opening")
    assert (v1.version, v1.from_round, v1.limits, v1.changed_by) == (1, 0, CAMPIONE, "director-bianchi")
    # the director doubles the plein from the next spin (Art. 5)
    raised = TableLimits("CHF", 1000, 1_000_000, {"plein": 50_000, "cheval": 100_000},
                         [LimitException("plein", 100_000, "director-bianchi", "director", "doubled plein")])
    v2 = await store.set("r1", raised, "director-bianchi", from_round=42)
    assert v2.version == 2
    assert (await store.for_round("r1", 41)).version == 1
    assert (await store.for_round("r1", 42)).limits.max_for("plein") == 100_000
    assert (await store.current("r1")).limits.minimum == 1000
    assert [v.version for v in await store.history("r1")] == [1, 2]
    assert await store.for_round("r2", 10) is None
    assert CAMPIONE.max_for("cheval") == 100_000 and CAMPIONE.max_for("douzaine") == 1_000_000


async def test_bad_limits_are_refused(pool):
    store = LimitsStore(pool)
    await store.set("r1", CAMPIONE, "director", from_round=10)
    cases = [
        (TableLimits("CHF", 0, 100), "invalid_limits"),
        (TableLimits("CHF", 500, 100), "invalid_limits"),
        (TableLimits("USD", 500, 1000), "unknown_currency"),
        (TableLimits("CHF", 500, 1000, {"plein": -1}), "invalid_limits"),
        (TableLimits("CHF", 500, 1000, {}, [LimitException("plein", 2000, "bob", "player")]), "invalid_limits"),
    ]
    for limits, code in cases:
        with pytest.raises(GameError) as e:
            await store.set("r1", limits, "director", from_round=11)
        assert e.value.code == code
    with pytest.raises(GameError) as e:
        await store.set("r1", CAMPIONE, "director", from_round=9)
    assert e.value.code == "limits_retroactive"
    assert len(await store.history("r1")) == 1
    async with pool.acquire() as c:
        with pytest.raises(asyncpg.RaiseError):
            await c.execute("UPDATE table_limits SET changed_by = 'someone else'")
