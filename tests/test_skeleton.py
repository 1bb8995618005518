import asyncpg

from games.money import CHF, PTS
from games.rng import SeededRng, shuffled


def test_money_format():
    assert CHF.format(123456) == "1,234.56 CHF"
    assert PTS.format(200) == "200 PTS"
    assert CHF.units(500) == 50000


def test_shuffle_is_permutation():
    assert sorted(shuffled(list(range(52)), SeededRng(1))) == list(range(52))


async def test_fresh_db_is_migrated(fresh_db):
    conn = await asyncpg.connect(fresh_db)
    try:
        assert await conn.fetchval("SELECT count(*) FROM schema_migrations") >= 0
    finally:
        await conn.close()
