"""The proposer's reward r_P: how useful a proposed task is as training data.

This is the single place that turns validation and calibration verdicts into
the scalar the task proposer is trained on::

    r_P = 0                                   task invalid (or not validated)
    r_P = VALID_REWARD            (0.2)       valid, not calibrated yet
    r_P = VALID_REWARD + SHAPING * 4p(1-p)    valid, calibration rejected it
    r_P = 1                                   valid and calibration accepted it

Why these numbers:

* An invalid task is worse than useless (it trains on a wrong signal), so it
  earns nothing, however close it came: partial credit for "only the
  tamper check failed" would teach the proposer to stop short of validity.
* Validity is necessary but cheap to reach with trivial tasks, so on its own
  it earns a small amount, enough to prefer a valid task over an invalid one.
* The real goal is a task in the learnable band. A rejected calibration still
  says how far off the task is: ``4p(1-p)`` is the (normalised) reward
  variance a pass rate ``p`` gives GRPO, 1 at p = 0.5 and 0 at p in {0, 1}.
  With the default band (accept iff 0 < p < 1) a rejected task has p in
  {0, 1} and gets exactly VALID_REWARD; with a narrower band, a task just
  outside it gets more than one that is hopeless, which gives the proposer a
  gradient towards the band. The shaped value stays below 1 (max 0.5) so an
  accepted task is always worth the most.
"""

from __future__ import annotations

from autoenv.validate.calibration import CalibrationReport
from autoenv.validate.validation import ValidationReport

VALID_REWARD = 0.2
SHAPING = 0.3
ACCEPTED_REWARD = 1.0


def proposer_reward(
    validation: ValidationReport | None,
    calibration: CalibrationReport | None = None,
    *,
    accept_undetermined: bool = False,
) -> float:
    """r_P for one proposed task (see the module docstring for the table and the reasons); an undetermined
    validation counts as valid only with ``accept_undetermined``."""
    if validation is None or not validation.trainable(accept_undetermined):
        return 0.0
    if calibration is None:
        return VALID_REWARD
    if calibration.content_hash and validation.content_hash and calibration.content_hash != validation.content_hash:
        raise ValueError(
            f"{calibration.task}: calibration was made on different task content ({calibration.content_hash[:12]}) "
            f"than the validation ({validation.content_hash[:12]})"
        )
    if calibration.accepted:
        return ACCEPTED_REWARD
    if calibration.pass_rate is None:  # no usable rollouts: nothing learned about difficulty
        return VALID_REWARD
    p = calibration.pass_rate
    return VALID_REWARD + SHAPING * 4.0 * p * (1.0 - p)
