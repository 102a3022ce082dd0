"""GRPO advantages: each rollout is scored against the other rollouts of its group.

A group is G rollouts of one task by one policy version. Normalising inside the
group removes the task's difficulty from the signal (an easy task's successes
are worth as much as a hard task's), so no learned value function is needed.
A group whose rewards are all equal carries no signal at all: every advantage
is zero and the group is "not useful" (the flywheel tracks the useful-group
rate as its main health metric and skips such groups when building batches).

The standard deviation is the population one (``statistics.pstdev``), the same
the store records as ``groups.std_reward``, so a reader can recompute every
advantage from the store. Pure Python: imported by the 3.12 flywheel and the
3.11 training worker alike.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

__all__ = ["group_advantages", "is_useful"]


def is_useful(rewards: Sequence[float]) -> bool:
    """True when the group's rewards differ, i.e. GRPO gets a non-zero gradient from it."""
    return len(rewards) > 1 and max(rewards) != min(rewards)


def group_advantages(rewards: Sequence[float], *, normalize_std: bool = True, eps: float = 1e-6) -> list[float]:
    """``(r - mean) / (std + eps)`` per rollout (or ``r - mean`` when ``normalize_std`` is off).

    ``normalize_std=False`` is the Dr. GRPO variant: dividing by the group's std
    up-weights groups that are nearly all-pass or all-fail, which biases the
    update towards tasks that are already almost solved or hopeless.
    A group with no variance returns exact zeros, not ``0 / eps`` noise.
    """
    values = [float(r) for r in rewards]
    for r in values:
        if not math.isfinite(r):
            raise ValueError(f"reward must be finite, got {r!r}")
    if not is_useful(values):
        return [0.0] * len(values)
    mean = statistics.fmean(values)
    if not normalize_std:
        return [r - mean for r in values]
    std = statistics.pstdev(values, mu=mean)
    return [(r - mean) / (std + eps) for r in values]
