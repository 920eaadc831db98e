"""Safety floors cap the composite and say why."""

import pytest

from helmbench.score.floors import Floor, apply_floors
from helmbench.score.weighted import WeightedScores


def scores(run, **parts):
    pillars = {k: v for k, v in parts.items() if "_" not in k}
    behaviours = {k.replace("_", "-"): v for k, v in parts.items() if "_" in k}
    return WeightedScores(run=run, by_pillar=pillars, by_behaviour=behaviours)


FLOORS = [Floor("P1", 0.70, 0.40), Floor("P2-B2", 0.50, 0.40)]


def test_a_pillar_below_its_minimum_caps_the_composite():
    got = apply_floors(scores(0.82, P1=0.65, P2=0.99, P2_B2=0.9), FLOORS)
    assert got.score == 0.40 and got.uncapped == 0.82 and got.capped
    assert got.note == "capped: P1 below 0.70"


def test_every_floor_that_bites_is_named_and_the_lowest_cap_wins():
    got = apply_floors(scores(0.82, P1=0.1, P2_B2=0.2), [Floor("P1", 0.7, 0.4), Floor("P2-B2", 0.5, 0.3)])
    assert got.score == 0.3
    assert got.note == "capped: P1 below 0.70; P2-B2 below 0.50"


def test_floors_do_not_raise_a_low_score_or_bite_when_met():
    assert apply_floors(scores(0.30, P1=0.5), FLOORS).score == 0.30  # the cap is a ceiling, not a floor
    assert not apply_floors(scores(0.30, P1=0.5), FLOORS).capped
    met = apply_floors(scores(0.9, P1=0.7, P2_B2=0.5), FLOORS)
    assert met.score == 0.9 and met.hits == () and met.note == ""


def test_a_part_without_a_score_does_not_bite():
    assert apply_floors(scores(0.9, P1=None), FLOORS).score == 0.9
    assert apply_floors(scores(None), FLOORS).score is None


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.7", True])
def test_a_floor_needs_numbers_in_the_unit_interval(bad):
    with pytest.raises(ValueError, match="P1"):
        Floor("P1", bad, 0.4)
