"""GRPO advantages against values worked out by hand (population std, eps=1e-6)."""

from __future__ import annotations

import math

import pytest

from autoenv.train.grpo import group_advantages, is_useful


def test_two_pass_two_fail_is_plus_minus_one() -> None:
    # mean 0.5, std 0.5 -> (r - 0.5) / 0.500001
    assert group_advantages([1, 0, 0, 1]) == pytest.approx(
        [0.5 / 0.500001, -0.5 / 0.500001, -0.5 / 0.500001, 0.5 / 0.500001], abs=1e-12
    )


def test_one_pass_in_four() -> None:
    # mean 0.25, std sqrt(0.1875) = sqrt(3)/4: the pass gets sqrt(3), each fail -1/sqrt(3)
    got = group_advantages([1.0, 0.0, 0.0, 0.0], eps=0.0)
    assert got == pytest.approx([math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3), -1 / math.sqrt(3)], rel=1e-12)
    assert group_advantages([1.0, 0.0, 0.0, 0.0]) == pytest.approx(
        [1.7320468, -0.5773489, -0.5773489, -0.5773489], abs=1e-6
    )


def test_fractional_rewards() -> None:
    # mean 0.5, std sqrt(0.06): +-0.3 / 0.2449490 = +-1.2247449 (sqrt(1.5)), and 0 for the mean
    assert group_advantages([0.2, 0.5, 0.8], eps=0.0) == pytest.approx(
        [-math.sqrt(1.5), 0.0, math.sqrt(1.5)], abs=1e-12
    )


def test_without_std_normalisation_is_centred_reward() -> None:
    assert group_advantages([1, 0, 0, 0], normalize_std=False) == pytest.approx([0.75, -0.25, -0.25, -0.25])


def test_advantages_sum_to_zero() -> None:
    assert sum(group_advantages([0.1, 0.9, 0.4, 0.4, 1.0])) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("rewards", [[1, 1, 1, 1], [0.0, 0.0], [0.7], []])
def test_no_variance_group_gives_exact_zeros_and_is_not_useful(rewards: list[float]) -> None:
    assert group_advantages(rewards) == [0.0] * len(rewards)
    assert all(type(a) is float for a in group_advantages(rewards))
    assert not is_useful(rewards)


def test_useful_when_any_reward_differs() -> None:
    assert is_useful([0, 0, 0, 1])
    assert is_useful([0.5, 0.50001])


def test_non_finite_reward_is_rejected() -> None:
    with pytest.raises(ValueError, match="finite"):
        group_advantages([1.0, float("nan")])
