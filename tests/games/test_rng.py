from games.rng import SeededRng, shuffled


def test_shuffle_is_permutation():
    assert sorted(shuffled(list(range(52)), SeededRng(1))) == list(range(52))
