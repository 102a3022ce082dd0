"""Judge a proposed task with the real validator and calibrator, and price it with r_P.

Every method (prompt, feedback, agentic, scripted or model-driven) goes
through this one function, so no proposer can reach the accepted set around
validation. Verdicts are cached next to the task by content hash (see
:mod:`autoenv.validate.cache`): a task the agentic proposer already validated
in a child sandbox is not validated again when the harness judges it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autoenv.shared.settings import ValidationSettings
from autoenv.validate.calibration import CalibrationReport, CalibrationSettings, acalibrate
from autoenv.validate.reward import proposer_reward
from autoenv.validate.validation import ValidationReport, avalidate_task
from autoenv.vocab import SCRIPTED_SOLVER


@dataclass
class Judgement:
    task_dir: Path
    validation: ValidationReport
    calibration: CalibrationReport | None
    reward: float
    accept_undetermined: bool = False

    @property
    def valid(self) -> bool:
        """Fit to train on: valid, or undetermined when those are accepted (``--accept-undetermined``)."""
        return self.validation.trainable(self.accept_undetermined)

    @property
    def calibrated(self) -> bool:
        return self.calibration is not None and self.calibration.accepted

    @property
    def accepted(self) -> bool:
        return self.valid and self.calibrated

    @property
    def pass_rate(self) -> float | None:
        return self.calibration.pass_rate if self.calibration is not None else None

    def reason(self) -> str | None:
        """Why the task was rejected, in the validator's/calibrator's words (None when accepted)."""
        if not self.valid:
            failed = self.validation.failed
            head = "; ".join(f"{c.name}: {c.summary}" for c in failed) or "not valid"
            return f"invalid ({head})\n\n{self.validation.feedback()}"
        if self.calibration is None:
            return "valid, not calibrated"
        if self.calibration.inconclusive:
            return f"valid; calibration {self.calibration.verdict}"
        if not self.calibration.accepted:
            return f"not calibrated: {self.calibration.verdict}"
        return None

    def feedback(self) -> str:
        """What a proposer is shown after a round: validation feedback, then the calibration verdict."""
        if not self.valid:
            return self.validation.feedback()
        text = self.validation.feedback()
        if self.calibration is not None and self.calibration.inconclusive:
            text += (
                f"\n\nCalibration ({self.calibration.settings.solver}, K={self.calibration.settings.rollouts}) was "
                f"inconclusive: {self.calibration.verdict}. The task itself passed validation; this says nothing about "
                "whether it is too hard or too easy, so do not make it easier for this reason."
            )
        elif self.calibration is not None:
            text += (
                f"\n\nCalibration ({self.calibration.settings.solver}, K={self.calibration.settings.rollouts}): "
                f"{self.calibration.verdict}; pass rate {self.calibration.pass_rate} "
                f"(95% CI {self.calibration.ci_low:.2f}-{self.calibration.ci_high:.2f})."
            )
        return text


class JudgeSettings(BaseModel):
    """How a proposed task is judged: the validation's settings (whole; their backend runs every trial), which
    solver calibrates it, what is accepted."""

    model_config = ConfigDict(frozen=True)

    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    solver: str = SCRIPTED_SOLVER
    rollouts: int = Field(default=4, ge=1, description="calibration rollouts of the solver")
    seed: int = 0
    trials_dir: Path | None = None
    calibrate: bool = True
    n_concurrent: int = Field(default=2, ge=1)
    accept_undetermined: bool = Field(default=False, description="train on undetermined tasks too")

    @property
    def env(self) -> str:
        return self.validation.env

    def calibration(self) -> CalibrationSettings:
        """Calibration's settings: this solver and K on the validation's backend, a pass as validation counts one."""
        v = self.validation
        return CalibrationSettings(
            solver=self.solver, rollouts=self.rollouts, threshold=v.threshold, env=v.env, seed=self.seed
        )


async def judge_task(
    task_dir: Path | str,
    settings: JudgeSettings | None = None,
    *,
    on_rollout: Any = None,
    on_validated: Callable[[ValidationReport], None] | None = None,
) -> Judgement:
    """Validate, then (if valid) calibrate, then compute r_P."""
    s = settings or JudgeSettings()
    task_dir = Path(task_dir).resolve()
    root = Path(s.trials_dir) if s.trials_dir else None
    validation = await avalidate_task(
        task_dir, s.validation, trials_dir=root / "validate" if root else None, n_concurrent=s.n_concurrent
    )
    if on_validated is not None:
        on_validated(validation)
    calibration = None
    if validation.trainable(s.accept_undetermined) and s.calibrate:
        calibration = await acalibrate(
            task_dir,
            s.calibration(),
            trials_dir=root / "calibrate" if root else None,
            n_concurrent=s.n_concurrent,
            on_done=on_rollout,
        )
    return Judgement(
        task_dir=task_dir,
        validation=validation,
        calibration=calibration,
        reward=proposer_reward(validation, calibration, accept_undetermined=s.accept_undetermined),
        accept_undetermined=s.accept_undetermined,
    )
