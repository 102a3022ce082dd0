"""Validation, calibration and the proposer reward for Harbor tasks.

``validate_task`` answers "is this a fair, well-posed environment?" (named
checks with evidence), ``calibrate`` answers "would the current solver learn
from it?" (pass rate with a Wilson interval), and ``proposer_reward`` turns
both into the task proposer's scalar reward. Verdicts are recorded next to
each task under its content hash (``cache``).
"""

from autoenv.validate.cache import register_store_hook, task_content_hash
from autoenv.validate.calibration import CalibrationReport, acalibrate, calibrate
from autoenv.validate.checks import CheckResult
from autoenv.validate.reward import proposer_reward
from autoenv.validate.stats import wilson_interval
from autoenv.validate.validation import ValidationReport, avalidate_task, validate_task

__all__ = [
    "CalibrationReport",
    "CheckResult",
    "ValidationReport",
    "acalibrate",
    "avalidate_task",
    "calibrate",
    "proposer_reward",
    "register_store_hook",
    "task_content_hash",
    "validate_task",
    "wilson_interval",
]
