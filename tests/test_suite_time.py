"""benchmarks/suite_time.py's figure in machine references: the suite's CPU over the mean of the reference loop's
time before and after the runs (so a figure from another machine, or a loaded one, compares)."""

from __future__ import annotations

import pytest

from benchmarks.suite_time import in_references


def test_cpu_in_references_is_cpu_over_the_mean_reference():
    assert in_references(648.0, 2.32, 2.88) == pytest.approx(648.0 / 2.6)
    # the same work on a machine twice as slow, whose reference is twice as long too, is the same figure
    assert in_references(1296.0, 4.64, 5.76) == pytest.approx(in_references(648.0, 2.32, 2.88))
    assert in_references(400.0, 2.0, 2.0) == pytest.approx(200.0)
