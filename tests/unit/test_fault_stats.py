"""Fault Monte Carlo statistics (jaxrotor.fault_stats): the Wilson interval against SciPy, its bad input, the outcome
counts (the outcome code on real flights and a vmapped batch of random faults:
tests/integration/test_fault_stats_flights.py)."""

import numpy as np
import pytest
from scipy.stats import binomtest

from jaxrotor.fault_stats import binomial_interval, outcome_counts


@pytest.mark.parametrize("k, n, confidence", [(0, 10, 0.95), (3, 10, 0.95), (10, 10, 0.95), (1, 1, 0.95),
                                               (17, 32, 0.9), (1000, 1024, 0.95), (1024, 1024, 0.99)])
def test_wilson_interval_matches_scipy(k, n, confidence):
    ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    low, high = binomial_interval(k, n, confidence)
    assert low == pytest.approx(ref.low, rel=1e-12, abs=1e-15) and high == pytest.approx(ref.high, rel=1e-12)
    assert 0.0 <= low <= k / n <= high <= 1.0


@pytest.mark.parametrize("args, words", [((11, 10), "0 <= successes <= n"), ((0, 0), "n >= 1"),
                                         ((2.5, 10), "`successes` = 2.5"), ((1, 10, 1.0), "`confidence` = 1.0")])
def test_binomial_interval_refuses_bad_input(args, words):
    with pytest.raises(ValueError, match="Fix") as err:
        binomial_interval(*args)
    assert words in str(err.value)


def test_outcome_counts():
    assert outcome_counts(np.array([0, 2, 1, 1, 0, 0])) == {"full_pose": 3, "yaw_released": 2, "lost": 1}
    with pytest.raises(ValueError, match="not all fault outcome codes"):
        outcome_counts([0, 3])
