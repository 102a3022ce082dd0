"""Confidence intervals for pass rates measured from a handful of rollouts, and for means over a few seeds.

Calibration decides from K of 8-64 rollouts whether a task sits in the band
where RL learns anything. A normal-approximation interval is useless there
(it collapses to zero width at 0/K and K/K and leaves [0, 1]); the Wilson
score interval stays inside [0, 1] and keeps honest width at the extremes.
"""

from __future__ import annotations

import math

#: Two-sided 95% normal quantile.
Z95 = 1.959963984540054


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``successes`` out of ``trials`` (``(0, 1)`` when ``trials`` is 0)."""
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denom = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denom
    # clamp float noise: at 0/K the lower bound is exactly 0, at K/K the upper is 1
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


#: Two-sided 95% quantiles of Student's t by degrees of freedom (a mean over 2-11 seeds); beyond, the normal one.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def mean_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean of ``values`` and its 95% t-interval (both ends are the mean for a single value)."""
    if not values:
        raise ValueError("no values")
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T95.get(n - 1, Z95) * sd / math.sqrt(n)
    return mean, mean - half, mean + half
