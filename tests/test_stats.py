"""The package's statistics (python/netreturn/stats.py) on worked examples."""

import math

import pytest

from netreturn.stats import agree, finite, fmt_ci, jain, mean, mean_ci, mean_sd, t975


def test_jain_of_equal_shares_is_one_and_of_one_hog_among_n_is_one_over_n():
    assert jain([2.0, 2.0, 2.0, 2.0]) == 1.0
    for n in (2, 4, 10):
        assert math.isclose(jain([8.0] + [0.0] * (n - 1)), 1 / n)
    # (1 + 2 + 3)^2 / (3 * (1 + 4 + 9)) = 36 / 42, as crates/sim/src/metrics.rs has it.
    assert math.isclose(jain([1.0, 2.0, 3.0]), 36 / 42)


def test_jain_of_nothing_is_nan_and_missing_values_are_left_out_only_when_asked():
    assert math.isnan(jain([])) and math.isnan(jain([0.0, 0.0]))
    assert math.isnan(jain([1.0, math.nan]))
    assert jain([1.0, None, 1.0, math.nan], skip_missing=True) == 1.0


def test_mean_and_the_population_sd():
    assert mean([1, 2, 6]) == 3.0
    assert math.isnan(mean([])) and math.isnan(mean([1.0, math.nan]))
    assert mean([1.0, None, math.nan, 3.0], skip_missing=True) == 2.0
    assert finite([1, None, math.nan, 2.5]) == [1.0, 2.5]
    # [2, 4, 4, 4, 5, 5, 7, 9]: mean 5, population variance 32 / 8 = 4.
    assert mean_sd([2, 4, 4, 4, 5, 5, 7, 9]) == (5.0, 2.0)
    assert all(math.isnan(x) for x in mean_sd([]))


def test_t_quantile_matches_the_table_and_the_normal_limit():
    assert t975(1) == 12.706 and t975(2) == 4.303 and t975(30) == 2.042
    assert abs(t975(60) - 2.000) < 1e-3 and abs(t975(120) - 1.980) < 1e-3
    assert abs(t975(10**6) - 1.95996) < 1e-4
    assert math.isnan(t975(0))


def test_mean_ci_of_a_known_sample_by_hand():
    # [1, 2, 3, 4, 5]: mean 3, s^2 = (4 + 1 + 0 + 1 + 4) / 4 = 2.5,
    # half-width = t(0.975, 4) * sqrt(2.5 / 5) = 2.776 * sqrt(0.5) = 1.96293...
    m, h, n = mean_ci([1, 2, 3, 4, 5])
    assert (m, n) == (3.0, 5)
    assert math.isclose(h, 2.776 * math.sqrt(0.5))
    assert math.isclose(h, 1.962928, rel_tol=1e-6)
    # None and NaN do not count; one value has no CI; none has no mean.
    assert mean_ci([4.0, None, math.nan]) == (4.0, pytest.approx(math.nan, nan_ok=True), 1)
    assert math.isnan(mean_ci([])[0]) and mean_ci([])[2] == 0


def test_fmt_ci_and_agree():
    assert fmt_ci(3.0, 1.962928) == "3 ± 2"
    assert fmt_ci(65.83, 1.234) == "65.8 ± 1.2"
    assert fmt_ci(math.nan, 1.0) == "-" and fmt_ci(2.5, math.nan) == "2.5"
    # |1 - 1.05| <= hypot(0.1, 0.1); |1 - 2| > it; no CI: no verdict.
    assert agree((1.0, 0.1, 5), (1.05, 0.1, 5)) is True
    assert agree((1.0, 0.1, 5), (2.0, 0.1, 5)) is False
    assert agree((1.0, math.nan, 1), (1.0, 0.1, 5)) is None
