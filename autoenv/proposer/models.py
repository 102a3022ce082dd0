"""On-disk and in-memory records of the proposer: seed cases, attempts, summaries.

A *seed case* is a base agent's failure: the proposer's starting material. An
*attempt* is one generated task with its validation/calibration verdict and
its proposer reward r_P; rejected attempts are kept with their reasons so the
proposer's memory (and the report) can learn from them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from autoenv.shared.seed import SeedCase  # noqa: F401 - its home is autoenv.shared.seed; the stages name it here
from autoenv.vocab import SCRIPTED_SOLVER, Method, ProposerNetwork, ProposerPolicy, shared_solver

ActionKind = Literal["Read", "Build", "Write", "Test", "Finish"]


class ProposerAction(BaseModel):
    """One proposer action, classified so a design's course can be plotted."""

    t: float = Field(description="Seconds since the attempt started.")
    kind: ActionKind
    detail: str = ""


class AttemptRecord(BaseModel):
    seed_case: str
    method: Method
    proposer: str
    attempt: int
    task_dir: str | None = None
    task_hash: str | None = None
    valid: bool = False
    calibrated: bool = False
    pass_rate: float | None = None
    reason: str | None = Field(default=None, description="Why the attempt was rejected (the failing check's feedback).")
    reward: float = 0.0
    calibration: str | None = Field(
        default=None, description="The last calibration's verdict (K and the verdict), accepted or not."
    )
    n_files: int | None = None
    rounds: int = 1
    duration_sec: float = 0.0
    actions: list[ProposerAction] = Field(default_factory=list)
    episode_path: str | None = Field(
        default=None, description="The episode as the policy saw it (ProposerEpisode JSON): the training sample."
    )
    parent_name: str | None = Field(default=None, description="--method evolve: the task this one is a variant of.")
    parent_hash: str | None = Field(default=None, description="--method evolve: the parent task's content hash.")

    @property
    def accepted(self) -> bool:
        return self.valid and self.calibrated


class ProposeSummary(BaseModel):
    seed_case: str
    method: Method
    proposer: str
    attempts: int
    valid: int
    calibrated: int
    accepted_tasks: list[str] = Field(default_factory=list)
    files_per_accepted: list[int] = Field(default_factory=list)
    duration_sec: float
    records: list[AttemptRecord] = Field(default_factory=list)


#: The fewest calibration rollouts a model-written task gets: with K=4 a pass rate of 1/4, 1/2 or 3/4 is accepted.
MODEL_MIN_ROLLOUTS = 4


class ProposeOptions(BaseModel):
    """How to propose from a seed case: the one place the defaults of ``autoenv propose`` and ``propose()`` live."""

    model_config = ConfigDict(extra="forbid")

    method: Method = Field(
        default=Method.FEEDBACK, description="prompt, feedback, agentic, or evolve (a harder variant of --from)."
    )
    policy: ProposerPolicy = Field(
        default=ProposerPolicy.SCRIPTED, description="scripted (offline templates) or openai (a served model)."
    )
    attempts: int = Field(default=1, ge=1, description="Tasks to attempt.")
    env: str = Field(default="local", description="local (no container engine), or a Harbor environment.")
    solver: str | None = Field(
        default=None,
        description="Solver SPEC for calibration (default: the same model with --policy openai, else the scripted "
        "solver).",
    )
    rollouts: int = Field(default=4, ge=1, description="Calibration rollouts (K).")
    accept_undetermined: bool = Field(
        default=False, description="Accept tasks whose validation is undetermined (see autoenv.validate.verdict)."
    )
    seed: int = Field(default=0, description="Seed of the proposer (and of the calibration rollouts).")
    model: str | None = Field(default=None, description="Model name for --policy openai.")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for --policy openai.")
    max_rounds: int = Field(
        default=3,
        ge=1,
        description="Rounds per attempt: with a model's feedback method, difficulty rounds (calibrated drafts); "
        "agentic and scripted: validation rounds.",
    )
    repair_rounds: int = Field(
        default=3,
        ge=0,
        description="A model's feedback method: rounds that repair an invalid task, apart from the difficulty rounds.",
    )
    flaw_rate: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Scripted proposer: share of first drafts with a realistic mistake."
    )
    network: ProposerNetwork | None = Field(
        default=None,
        description="The agentic proposer's sandbox network: public or no-network (default: public with a model, "
        "no-network offline).",
    )
    proposer_table: Path | None = Field(
        default=None, description="A learned policy table the scripted proposer draws its choices from."
    )
    level: str | None = Field(
        default=None,
        description="Scripted proposer: pin the difficulty level (N or max; default: climb from the family's "
        "default, a level up after 'too easy', down after 'too hard').",
    )

    parent: Path | None = Field(
        default=None,
        description="--method evolve: the task folder to make harder (an accepted task calibration called too easy, "
        "or any task).",
    )
    compose: Path | None = Field(
        default=None,
        description="--method evolve with --policy openai: a second accepted task to compose with --from into one.",
    )

    @field_validator("level")
    @classmethod
    def _level_is_n_or_max(cls, level: str | None) -> str | None:
        if level is not None and level != "max" and not (level.isdigit() and int(level) >= 1):
            raise ValueError(f"--level {level!r}: give a level number (1, 2, ...) or max")
        return level

    @model_validator(mode="after")
    def _model_for_openai(self) -> ProposeOptions:
        if self.policy == ProposerPolicy.OPENAI and not self.model:
            raise ValueError("--policy openai needs --model (and usually --base-url)")
        if self.policy == ProposerPolicy.OPENAI and self.rollouts < MODEL_MIN_ROLLOUTS:
            raise ValueError(
                f"--rollouts {self.rollouts}: a model-written task is calibrated with at least {MODEL_MIN_ROLLOUTS} "
                f"rollouts (with K=2 the only accepted pass rate is exactly 1/2); give -k {MODEL_MIN_ROLLOUTS} or more"
            )
        return self

    @model_validator(mode="after")
    def _parent_for_evolve(self) -> ProposeOptions:
        if self.method == Method.EVOLVE and self.parent is None:
            raise ValueError("--method evolve needs --from TASK_DIR (the task to write a harder variant of)")
        if self.method != Method.EVOLVE and (self.parent is not None or self.compose is not None):
            raise ValueError("--from and --with go with --method evolve")
        if self.method == Method.EVOLVE and self.level is not None:
            raise ValueError("--method evolve climbs one level from the --from task's own; drop --level")
        if self.compose is not None and self.policy != ProposerPolicy.OPENAI:
            raise ValueError(
                "--with: composing two tasks into one needs a model proposer (--policy openai --model M); "
                "the scripted proposer only climbs a family's ladder"
            )
        return self

    @property
    def solver_spec(self) -> str:
        """The calibration solver: as given, else one shared policy (a model proposer is calibrated against itself)."""
        if self.solver is not None:
            return self.solver
        return shared_solver(self.model, self.base_url) if self.policy == ProposerPolicy.OPENAI else SCRIPTED_SOLVER

    def mismatch_warning(self) -> str | None:
        """What to tell a user whose model proposes while the scripted solver calibrates (None when they match):
        the scripted solver attempts only the bundled families' tasks, so a new kind of task calibrates inconclusive."""
        if self.policy != ProposerPolicy.OPENAI or "policy=scripted" not in self.solver_spec.replace(" ", ""):
            return None
        return (
            "a model proposes but the scripted solver calibrates: it attempts only tasks of the bundled families, so "
            "calibration of any other task is inconclusive (rewarded by validity alone); pass --solver "
            "terminal:policy=openai,model=...,base_url=... to calibrate with a model"
        )

    @property
    def network_mode(self) -> ProposerNetwork:
        if self.network is not None:
            return self.network
        return ProposerNetwork.PUBLIC if self.policy == ProposerPolicy.OPENAI else ProposerNetwork.NO_NETWORK
