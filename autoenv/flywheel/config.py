"""One flywheel run's configuration: the only place its options and defaults are written.

Apart from the loop (:mod:`autoenv.flywheel.loop`) so that ``autoenv flywheel`` can build its options from these
fields without importing every stage the loop drives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, computed_field, field_validator

from autoenv.vocab import SCRIPTED_SOLVER, Baseline, Method, ProposerNetwork, ProposerPolicy, ReportTo, ServeKind

#: Options a resumed run may change: how fast it runs and how far, never what it measures.
RESUMABLE_OPTIONS = {"steps", "n_concurrent", "ray", "serve_port", "report_to"}


class RunConfigMismatch(ValueError):
    """A run exists in the store with another configuration; resuming would mix two experiments."""


class FlywheelConfig(BaseModel):
    """One flywheel run: the only place its options and their defaults are written (``autoenv flywheel`` reads them)."""

    run: str = Field(default="main", description="Run name inside the store; rerun the same name to resume.")
    steps: int = Field(default=3, ge=1, description="Training steps to run (a resumed run skips finished steps).")
    group_size: int = Field(default=4, ge=1, description="Rollouts per task (GRPO group size).")
    tasks_per_step: int = Field(default=3, ge=1, description="Tasks rolled out per step.")
    solver: str | None = Field(
        default=None,
        description=(
            f"Solver spec: agent[:k=v,...]. Default: the shared policy (the model given or served, else "
            f"{SCRIPTED_SOLVER}). "
            "A policy=openai spec without base_url samples from the shared model."
        ),
    )
    proposer_policy: ProposerPolicy | None = Field(
        default=None,
        description=(
            "Proposer policy: scripted (offline) or openai. Default: openai when --model or --serve is given."
        ),
    )
    model: str | None = Field(
        default=None, description="Model at the endpoint: the proposer and, by default, the solver (one shared policy)."
    )
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint of --model.")
    serve: ServeKind = Field(
        default=ServeKind.NONE,
        description=(
            "Serve each trained version to the next step's rollouts: none, cpu (training env; the tiny policy) or vllm "
            "(GPU)."
        ),
    )
    serve_port: int = Field(default=8011, description="Port of the served policy (127.0.0.1).")
    proposer_network: ProposerNetwork | None = Field(
        default=None,
        description=(
            "Agentic proposer's sandbox network: public or no-network (default: public with a model, no-network "
            "offline)."
        ),
    )
    method: Method = Field(default=Method.FEEDBACK, description="Proposer method: prompt, feedback or agentic.")
    proposals_per_step: int = Field(
        default=2,
        ge=1,
        description=(
            "Seed cases proposed from per step (the proposer's GRPO group; one episode alone has no advantage)."
        ),
    )
    calibration_rollouts: int = Field(default=4, ge=1, description="Calibration rollouts per proposed task.")
    seed_cases_dir: Path | None = Field(
        default_factory=lambda: bundled_examples("seed_cases"),
        description="Folder of seed cases (YAML/JSON). Default: the bundled examples/seed_cases.",
    )
    benchmark_dir: Path | None = Field(
        default_factory=lambda: bundled_examples("tasks"),
        description="Benchmark task folder scored after each step. Default: the bundled examples/tasks.",
    )
    benchmark_tasks: int | None = Field(
        default=None, ge=1, description="Score only the first N benchmark tasks (default: all)."
    )
    benchmark_rollouts: int = Field(
        default=1, ge=1, description="Solver rollouts per benchmark task (a less noisy score with more)."
    )
    static_dir: Path | None = Field(
        default=None, description="Static baseline: train only on this task folder, no proposer."
    )
    accept_undetermined: bool = Field(
        default=False,
        description="Train on proposed tasks whose validation is undetermined too (no flaw found, but this machine "
        "could not judge them: a stand-in base, no network); by default only valid tasks are trained on.",
    )
    proposer_training: bool = Field(
        default=True, description="on: train the policy on proposer episodes too; off: baseline without."
    )
    report_to: ReportTo = Field(
        default=ReportTo.NONE,
        description="Also send each step's metrics to tensorboard (OUT/tensorboard/RUN) or trackio; the store "
        "keeps them either way.",
    )
    seed: int = Field(
        default=0,
        ge=0,
        description="Seed of the proposals' randomness (rollouts are seeded by run name, step and task): runs that "
        "differ only in seed and run name are repeats of one experiment.",
    )
    trainer: str = Field(
        default="export",
        description="Training backend spec: export (batches for external trainers), trl or table[:lr=...].",
    )
    init_policy: Path | None = Field(
        default=None,
        description="Policy v0: a save_pretrained folder (e.g. from `autoenv train sft`, the Cold Start) copied to "
        "OUT/RUN/train/v0 before the first step; the trl trainer trains it and --serve serves it.",
    )
    env: str = Field(default="local", description="Sandbox backend for every trial.")
    ray: str | None = Field(default=None, description="Ray address for rollouts (or 'local').")
    n_concurrent: int = Field(default=2, ge=1, description="Trials at once on this machine.")
    out_dir: Path = Field(default=Path("runs") / "flywheel", description="Where tasks, trials and training batches go.")
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("method")
    @classmethod
    def _from_seed_cases(cls, method: Method) -> Method:
        if method == Method.EVOLVE:  # evolve starts from one given task, not from the step's seed cases
            raise ValueError("the flywheel proposes from seed cases; --method evolve is `autoenv propose --from TASK`")
        return method

    @property
    def baseline(self) -> Baseline:
        if self.static_dir is not None:
            return Baseline.STATIC
        return Baseline.AUTOENV if self.proposer_training else Baseline.PROPOSER_OFF

    @property
    def served_model(self) -> bool:
        """A model is at hand: an endpoint, or the checkpoint the flywheel serves."""
        return self.serve != ServeKind.NONE or self.model is not None or self.proposer_policy == ProposerPolicy.OPENAI

    @computed_field  # stored with the run
    @property
    def proposer(self) -> ProposerPolicy:
        """Who proposes: as given, else the model when one is given or served, else the scripted proposer."""
        return self.proposer_policy or (ProposerPolicy.OPENAI if self.served_model else ProposerPolicy.SCRIPTED)

    def endpoint(self) -> tuple[str | None, str | None]:
        """(model, base_url) of the shared model: the served checkpoint, else the configured endpoint."""
        if self.serve != ServeKind.NONE:
            return "policy", f"http://127.0.0.1:{self.serve_port}/v1"
        return self.model, self.base_url

    @computed_field  # stored with the run
    @property
    def solver_spec(self) -> str:
        """The solver: as given (an openai solver without an endpoint gets the shared one), else the shared policy."""
        model, base_url = self.endpoint()
        text = self.solver
        if text is None:
            if not self.served_model:
                return SCRIPTED_SOLVER
            text = "terminal:policy=openai"
        if "policy=openai" in text:
            if model and "model=" not in text:
                text += f",model={model}"
            if base_url and "base_url=" not in text:
                text += f",base_url={base_url}"
        return text

    @computed_field  # stored with the run, so the report can say so
    @property
    def policies(self) -> str:
        """``shared`` when one policy proposes and solves; ``mixed`` when a model proposes for the scripted solver or
        back."""
        if self.static_dir is not None:
            return "shared"  # no proposer acts
        solver_model = "policy=openai" in self.solver if self.solver else self.served_model
        return "shared" if solver_model == (self.proposer == ProposerPolicy.OPENAI) else "mixed"

    def proposer_network_mode(self) -> ProposerNetwork:
        return self.proposer_network or (ProposerNetwork.PUBLIC if self.served_model else ProposerNetwork.NO_NETWORK)


def bundled_examples(name: str) -> Path | None:
    """``examples/<name>`` of a source checkout (or ``$AUTOENV_EXAMPLES/<name>``); None in an install without them."""
    import os

    root = os.environ.get("AUTOENV_EXAMPLES")
    path = Path(root) / name if root else Path(__file__).resolve().parents[2] / "examples" / name
    return path if path.is_dir() else None
