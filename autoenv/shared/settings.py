"""Validation's settings: one typed object that travels whole from the CLI or the flywheel's config to the last check.

Here, on the floor every stage imports, because three floors hold it: ``autoenv validate`` and the flywheel's
config build it (the CLI without importing the validator), the proposer hands it to the judge, and validation
records it in every report. What it means for a verdict (the record's key, the checks that may not run) is
validation's own knowledge: :func:`autoenv.validate.validation.record_key` and ``may_not_run``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ValidationSettings(BaseModel):
    """Everything besides the task's content that can change a verdict (part of the record's key)."""

    model_config = ConfigDict(frozen=True)

    env: str = Field(default="local", description="Sandbox backend the trials run on.")
    repeats: int = Field(default=2, ge=1, description="Oracle runs; all must pass with the same verdict.")
    threshold: float = Field(default=1.0, description="Reward that counts as a pass (below 1 for graded rewards).")
    timeout_margin: float = Field(
        default=0.5, gt=0, le=1, description="Share of the agent/verifier time limits the reference run may use."
    )
    oracle: bool = Field(
        default=True, description="Run the reference solution; False validates a task (dataset) without one."
    )
    oracle_agent: str | None = Field(
        default=None,
        description="Without a reference solution: an agent spec whose passing attempt shows the task solvable.",
    )
    oracle_attempts: int = Field(default=3, ge=1, description="Attempts of --oracle-agent (k).")
    strict: bool = Field(
        default=False,
        description="Warnings (lint style, unpinned versions, unknown fields, tests reading agent-editable inputs) "
        "make a task invalid too, and so does an undetermined verdict.",
    )
    all_checks: bool = Field(
        default=False,
        description="Run every check even after one failed (by default validation stops once the cheaper checks "
        "find an error: structure, build, then the reference solution and doing nothing, then the rest).",
    )

    def on(self, env: str) -> ValidationSettings:
        """These settings for the trials of backend ``env`` (a stage that has one backend for every trial)."""
        return self if self.env == env else self.model_copy(update={"env": env})
