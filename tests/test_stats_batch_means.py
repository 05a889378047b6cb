"""Batch means (the NGWA paper's section 3.2) on a hand-computed case."""

import math

from netreturn.stats import batch_means, batch_means_ci


def test_batch_means_ci_on_a_hand_computed_series():
    # 3 batches of 2 (the 7th value, a tail, is dropped):
    # [1, 3] [5, 7] [2, 4] -> means 2, 6, 3; mean 11/3;
    # s^2 = ((2-11/3)^2 + (6-11/3)^2 + (3-11/3)^2) / 2 = (25/9 + 49/9 + 4/9) / 2 = 13/3;
    # half-width = t(0.975, 2) * sqrt(13/3 / 3) = 4.303 * sqrt(13/9).
    series = [1, 3, 5, 7, 2, 4, 100]
    assert batch_means(series, 3) == [2, 6, 3]
    m, h, n = batch_means_ci(series, 3)
    assert n == 3
    assert math.isclose(m, 11 / 3)
    assert math.isclose(h, 4.303 * math.sqrt(13 / 9))


def test_too_short_a_series_gives_no_interval():
    m, h, n = batch_means_ci([1.0, 2.0], 30)
    assert n == 0 and math.isnan(m) and math.isnan(h)
