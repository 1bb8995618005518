from games.money import CHF, PTS


def test_money_format():
    assert CHF.format(123456) == "1,234.56 CHF"
    assert PTS.format(200) == "200 PTS"
    assert CHF.units(500) == 50000
