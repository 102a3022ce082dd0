"""The flywheel: failures -> proposer -> accepted tasks -> rollouts -> training -> failures.

Each step is resumable: the store records attempts, groups and rollouts under
natural keys and the step's status, so rerunning after a crash redoes only
what is missing; rerunning a run with another configuration is refused (one
run, one experiment). Baselines are the same loop with a part switched off:
``static_dir`` trains on a fixed task set (no proposer), and
``proposer_training=False`` keeps proposing but trains on solver data only.

One policy plays both roles. With a model endpoint (``model``/``base_url``)
or a served checkpoint (``serve``), the solver defaults to that same model;
with ``serve`` the flywheel serves ``<out>/<run>/train/v{N}`` before each
step's rollouts, so step N+1 samples from the weights trained at step N.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from autoenv.proposer.models import AttemptRecord, Method, SeedCase
from autoenv.proposer.propose import SCRIPTED_SOLVER
from autoenv.rollout.collect import Executor, GroupResult, SolverSpec, collect_groups, local_executor
from autoenv.store.db import Store
from autoenv.taskfmt.check import find_tasks
from autoenv.taskfmt.hashing import count_files, task_hash
from autoenv.train.grpo import group_advantages
from autoenv.trials.runner import TrialOutcome, arun_many

ServeKind = Literal["none", "cpu", "vllm"]
NetworkMode = Literal["no-network", "public"]
#: Options a resumed run may change: how fast it runs and how far, never what it measures.
RESUMABLE_OPTIONS = {"steps", "n_concurrent", "ray", "serve_port"}


class RunConfigMismatch(ValueError):
    """A run exists in the store with another configuration; resuming would mix two experiments."""


class FlywheelConfig(BaseModel):
    run: str = "main"
    steps: int = 3
    group_size: int = 4
    tasks_per_step: int = 3
    solver: str | None = Field(default=None, description="Solver spec; None: the shared policy (the served/endpoint model if any, else scripted).")
    proposer_policy: str | None = Field(default=None, description="scripted or openai; None: openai when a model is given or served.")
    model: str | None = Field(default=None, description="Model name at the endpoint (proposer, and solver by default).")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint of the model.")
    serve: ServeKind = Field(default="none", description="Serve each policy version for the rollouts: cpu (training env) or vllm.")
    serve_port: int = 8011
    proposer_network: NetworkMode | None = Field(default=None, description="The agentic proposer's sandbox network; None: public with a model, no-network offline.")
    method: Method = "feedback"
    proposals_per_step: int = 2  # a group of one proposer episode has no advantage
    calibration_rollouts: int = 4
    seed_cases_dir: Path | None = Field(default_factory=lambda: bundled_examples("seed_cases"))
    benchmark_dir: Path | None = Field(default_factory=lambda: bundled_examples("tasks"))
    benchmark_tasks: int | None = None  # None: every task of benchmark_dir
    benchmark_rollouts: int = Field(default=1, ge=1, description="Solver rollouts per benchmark task (a less noisy score with more).")
    static_dir: Path | None = None
    proposer_training: bool = True
    trainer: str = "export"
    env: str = "local"
    ray: str | None = None
    n_concurrent: int = 2
    out_dir: Path = Path("runs") / "flywheel"
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def baseline(self) -> str:
        if self.static_dir is not None:
            return "static"
        return "autoenv" if self.proposer_training else "proposer-off"

    @property
    def served_model(self) -> bool:
        """A model is at hand: an endpoint, or the checkpoint the flywheel serves."""
        return self.serve != "none" or self.model is not None or self.proposer_policy == "openai"

    @computed_field  # stored with the run
    @property
    def proposer(self) -> str:
        """Who proposes: as given, else the model when one is given or served, else the scripted proposer."""
        return self.proposer_policy or ("openai" if self.served_model else "scripted")

    def endpoint(self) -> tuple[str | None, str | None]:
        """(model, base_url) of the shared model: the served checkpoint, else the configured endpoint."""
        if self.serve != "none":
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
        """``shared`` when one policy proposes and solves; ``mixed`` when a model proposes for the scripted solver or back."""
        if self.static_dir is not None:
            return "shared"  # no proposer acts
        solver_model = "policy=openai" in self.solver if self.solver else self.served_model
        return "shared" if solver_model == (self.proposer == "openai") else "mixed"

    def proposer_network_mode(self) -> NetworkMode:
        return self.proposer_network or ("public" if self.served_model else "no-network")


def bundled_examples(name: str) -> Path | None:
    """``examples/<name>`` of a source checkout (or ``$AUTOENV_EXAMPLES/<name>``); None in an install without them."""
    import os

    root = os.environ.get("AUTOENV_EXAMPLES")
    path = Path(root) / name if root else Path(__file__).resolve().parents[2] / "examples" / name
    return path if path.is_dir() else None


class StepReport(BaseModel):
    step: int
    policy_version_in: int
    policy_version_out: int
    proposals: int = 0
    accepted: int = 0
    groups: int = 0
    useful_groups: int = 0
    useful_group_rate: float = 0.0
    collect_sec: float = 0.0
    train_sec: float = 0.0
    loss: float | None = None
    benchmark_score: float | None = None
    proposer_valid_rate: float | None = None
    resumed: bool = False


Progress = Callable[[str, dict[str, Any]], None]


def _noop(_event: str, _data: dict[str, Any]) -> None:
    pass


class Flywheel:
    def __init__(self, config: FlywheelConfig, store: Store, *, executor: Executor | None = None, progress: Progress = _noop):
        self.config = config
        self.store = store
        wanted = json.loads(config.model_dump_json())
        stored = store.ensure_run(config.run, wanted)
        derived = set(FlywheelConfig.model_computed_fields)  # follow from the options compared
        changed = sorted(k for k in stored.keys() & wanted.keys() if k not in RESUMABLE_OPTIONS | derived and stored[k] != wanted[k])
        if changed:
            raise RunConfigMismatch(
                f"run {config.run!r} in {store.url} was started with another configuration ("
                + "; ".join(f"{k}: {stored[k]!r} then, {wanted[k]!r} now" for k in changed)
                + "). Resuming would mix two experiments: give this configuration another --run name, "
                "or rerun with the options the run was started with.")
        self.out = Path(config.out_dir) / config.run
        self.out.mkdir(parents=True, exist_ok=True)
        self.progress = progress
        self.server = None
        self.spec = SolverSpec.parse(self.solver_text(), env=config.env)
        self._executor = executor
        if config.policies == "mixed":
            progress("warning", {"message": f"mixed policies: the proposer is {self.proposer_label()} but the solver is {self.solver_text()!r}; "
                                            "the mission's shared policy needs both to be the same model"})

    # -- who plays which role (the config decides; see FlywheelConfig) ---------------

    def endpoint(self) -> tuple[str | None, str | None]:
        return self.config.endpoint()

    def solver_text(self, policy_version: int | None = None) -> str:
        """The solver spec; the offline learned policy also gets the table of ``policy_version``."""
        text = self.config.solver_spec
        if policy_version is not None and "policy=learned" in text and "table=" not in text:
            checkpoint = self.policy_dir(policy_version)
            if checkpoint is not None and (checkpoint / "table.json").is_file():
                text += f",table={checkpoint / 'table.json'}"
        return text

    def proposer_table(self, policy_version: int) -> Path | None:
        """The offline learned proposer's table: the same checkpoint as the solver's (one policy), when it has one."""
        if self.config.proposer != "scripted" or not self.config.trainer.startswith("table"):
            return None
        checkpoint = self.policy_dir(policy_version)
        if checkpoint is not None and (checkpoint / "table.json").is_file():
            return checkpoint / "table.json"
        from autoenv.agents.policies.learned import PolicyTable

        return PolicyTable().save(self.out / "train" / "initial" / "table.json")  # untrained: uniform choices

    def step_spec(self, policy_version: int) -> SolverSpec:
        return SolverSpec.parse(self.solver_text(policy_version), env=self.config.env)

    def proposer_label(self) -> str:
        model, _ = self.endpoint()
        return f"the model {model!r}" if self.config.proposer == "openai" else "the scripted proposer"

    # -- pieces --------------------------------------------------------------------

    def executor(self, policy_version: int) -> Executor:
        if self._executor is not None:
            return self._executor
        if self.config.ray:
            from autoenv.rollout.ray_pool import ray_executor

            return ray_executor(self.config.ray, policy_version=policy_version)
        return local_executor(self.config.n_concurrent, policy_version=policy_version)

    def seed_cases(self, step: int) -> list[SeedCase]:
        cases = []
        for directory in (self.config.seed_cases_dir, self.out / "seed_cases"):
            if directory and Path(directory).is_dir():
                for path in sorted(Path(directory).glob("*.y*ml")) + sorted(Path(directory).glob("*.json")):
                    cases.append(SeedCase.load(path))
        if not cases:
            raise FileNotFoundError(
                "no seed cases to propose from: pass --seed-cases DIR (YAML/JSON seed cases); "
                + ("the bundled examples/seed_cases come with a source checkout of autoenv, or set AUTOENV_EXAMPLES to a copy"
                   if self.config.seed_cases_dir is None else f"{self.config.seed_cases_dir} holds none"))
        n = self.config.proposals_per_step
        return [cases[(step * n + i) % len(cases)] for i in range(n)]

    def pool(self) -> list[tuple[Path, str]]:
        """Tasks the solver trains on: this run's accepted proposals, newest first (or the static set).

        Newest first keeps the supply fresh: a task accepted steps ago was calibrated against an older
        solver and may have become too easy; the proposer's latest tasks were calibrated on the current one.
        """
        if self.config.static_dir is not None:
            return [(p, task_hash(p)) for p in find_tasks(Path(self.config.static_dir))]
        proposed = self.proposed_pool()
        if proposed:
            return proposed
        # before the proposer has produced anything, start from the bundled tasks
        if self.config.benchmark_dir:
            return [(p, task_hash(p)) for p in find_tasks(Path(self.config.benchmark_dir))]
        return []

    def proposed_pool(self) -> list[tuple[Path, str]]:
        """This run's accepted proposals, newest first."""
        pool: dict[str, Path] = {}
        for attempt in reversed(self.store.attempts(self.config.run)):
            if attempt["valid"] and attempt["calibrated"] and attempt["task_hash"] and attempt["task_hash"] not in pool:
                row = self.store.task(attempt["task_hash"])
                if row is not None and Path(row["path"]).is_dir():
                    pool[attempt["task_hash"]] = Path(row["path"])
        return [(path, h) for h, path in pool.items()]

    def register_tasks(self, tasks: list[tuple[Path, str]], method: str, origin: str) -> None:
        for path, h in tasks:
            if self.store.task(h) is None:
                self.store.upsert_task(hash=h, name=path.name, path=str(path.resolve()), origin=origin, method=method, n_files=count_files(path))

    async def propose(self, step: int, policy_version: int) -> list[AttemptRecord]:
        from autoenv.proposer.propose import propose_async

        records: list[AttemptRecord] = []
        done = {a["attempt_key"] for a in self.store.attempts(self.config.run, step)}
        for index, case in enumerate(self.seed_cases(step)):
            key = f"{step}/{index}/{case.id}"
            if key in done:
                continue
            self.progress("propose", {"seed_case": case.id, "method": self.config.method})
            model, base_url = self.endpoint()
            summary = await propose_async(
                case,
                method=self.config.method,
                policy=self.config.proposer,
                model=model if self.config.proposer == "openai" else None,
                base_url=base_url if self.config.proposer == "openai" else None,
                network=self.config.proposer_network_mode(),
                proposer_table=self.proposer_table(policy_version),
                out_dir=self.out / "tasks",
                workspace=self.out / "workspace",
                attempts=1,
                env=self.config.env,
                solver=self.solver_text(policy_version),
                rollouts=self.config.calibration_rollouts,
                seed=step * 1000 + index,
            )
            for record in summary.records:
                records.append(record)
                if record.task_hash and record.task_dir:
                    self.store.upsert_task(hash=record.task_hash, name=Path(record.task_dir).name, path=record.task_dir, origin=case.id,
                                           method=record.method, proposer=record.proposer, policy_version=policy_version,
                                           valid=record.valid, calibrated=record.calibrated, pass_rate=record.pass_rate,
                                           proposer_reward=record.reward, n_files=record.n_files, failed_check=None if record.valid else (record.reason or "")[:64])
                self.store.record_attempt(run=self.config.run, step=step, seed_case=case.id, method=record.method, proposer=record.proposer,
                                          policy_version=policy_version, task_hash=record.task_hash, valid=record.valid,
                                          calibrated=record.calibrated, reason=record.reason, reward=record.reward, n_files=record.n_files,
                                          n_actions=len(record.actions), actions=[a.model_dump() for a in record.actions],
                                          duration_sec=record.duration_sec, episode_path=record.episode_path, attempt_key=key)
        return records

    def harvest_seed_cases(self, step: int, groups: list[GroupResult], pool: dict[str, Path]) -> int:
        """Failed rollouts become the proposer's next seed cases (the loop's return edge).

        Each is written from the failed trial itself (:func:`autoenv.proposer.seeds.seed_case_from_trial`:
        the verifier's failing checks, the trajectory, the task's title, category and tags), so a
        bundled or foreign task's ``category`` stays a description and never poses as a template family.
        """
        from autoenv.proposer.seeds import seed_case_from_trial, task_family

        directory = self.out / "seed_cases"
        directory.mkdir(parents=True, exist_ok=True)
        made = 0
        for group in groups:
            if not group.rewards or min(group.rewards) >= 1.0:
                continue
            task_dir = pool[group.task_hash]
            failed = [r for r in self.store.rollouts(group_id=group.group_id) if (r["reward"] or 0) < 1.0]
            trial = Path(failed[0]["trajectory_path"]).parents[1] if failed and failed[0]["trajectory_path"] else None
            case = seed_case_from_trial(trial) if trial is not None and (trial / "result.json").is_file() else None
            if case is None:
                case = SeedCase(id="-", task=str(task_dir), failure_mode="the solver failed the task",
                                target_skill=f"the skill the failed task exercises: {task_dir.name}", family=task_family(task_dir))
            case = case.model_copy(update={
                "id": f"{task_dir.name}-s{step}", "task": str(task_dir), "reward": min(group.rewards),
                "failure_mode": f"The solver failed {len(failed)} of {len(group.rewards)} rollouts. {case.failure_mode}"})
            path = directory / f"{case.id}.yaml"
            if not path.exists():
                case.dump(path)
                made += 1
        return made

    def training_batch(self, step: int, policy_version: int, groups: list[GroupResult]):
        """Useful solver groups plus the step's proposer episodes (r_P), each as the policy saw it.

        Solver samples come from the rollouts' ATIF trajectories, proposer samples from the
        episodes recorded where the proposer ran (:mod:`autoenv.proposer.episode`), both with
        exact token ids and log-probs where the endpoint returned them. Proposer attempts are
        read from the store, so a resumed step trains on the same group.
        """
        from autoenv.train.batch import TrainingBatch, TrainingSample
        from autoenv.train.trajectories import sample_from_trajectory

        samples = []
        for group in groups:
            if not group.useful:
                continue  # GRPO: no reward variance, no signal
            for row in self.store.rollouts(group_id=group.group_id):
                if not row["trajectory_path"] or not Path(row["trajectory_path"]).exists():
                    continue
                samples.append(sample_from_trajectory(row["trajectory_path"], role="solver", task_hash=row["task_hash"], group_id=group.group_id,
                                                      rollout_id=row["id"], policy_version=row["policy_version"],
                                                      reward=row["reward"] or 0.0, advantage=row["advantage"] or 0.0))
        missing = 0
        attempts = self.store.attempts(self.config.run, step) if self.config.static_dir is None else []
        if self.config.proposer_training and attempts:
            from autoenv.proposer.episode import ProposerEpisode

            # the step's proposer attempts form one group: r_P relative to its mean
            advantages = group_advantages([a["reward"] for a in attempts])
            for row, advantage in zip(attempts, advantages):
                if advantage == 0.0:
                    continue
                if not row.get("episode_path") or not Path(row["episode_path"]).is_file():
                    missing += 1  # nothing the policy saw was recorded: no sample rather than an invented one
                    continue
                episode = ProposerEpisode.load(row["episode_path"])
                samples.append(TrainingSample(role="proposer", task_hash=row["task_hash"] or "", group_id=-1, rollout_id=-1,
                                              policy_version=row["policy_version"] if row["policy_version"] is not None else policy_version,
                                              messages=episode.messages, turns=episode.turns, reward=row["reward"], advantage=advantage,
                                              meta={"episode_path": row["episode_path"], "seed_case": row["seed_case"],
                                                    "method": row["method"], "source": episode.source,
                                                    **({"decisions": episode.decisions} if episode.decisions else {})}))
        return TrainingBatch(run=self.config.run, step=step, policy_version=policy_version, samples=samples,
                             meta={"proposer_episodes_missing": missing} if missing else {})

    async def benchmark(self, step: int, policy_version: int) -> float | None:
        if not self.config.benchmark_dir:
            return None
        tasks = find_tasks(Path(self.config.benchmark_dir))[: self.config.benchmark_tasks or None]
        if not tasks:
            return None
        spec = self.step_spec(policy_version)
        jobs = []
        for i in range(self.config.benchmark_rollouts):
            kwargs = dict(spec.kwargs)
            if spec.agent == "terminal":
                kwargs.update(seed=10_000 + 100 * step + i, policy_version=policy_version)
            jobs += [(t, spec.agent, kwargs) for t in tasks]
        outcomes: list[TrialOutcome] = await arun_many(jobs, n_concurrent=self.config.n_concurrent,
                                                       env=self.config.env, trials_dir=self.out / "trials" / "benchmark")
        return sum(o.reward or 0.0 for o in outcomes) / len(outcomes)

    # -- the loop ------------------------------------------------------------------

    async def step(self, step: int, policy_version: int) -> StepReport:
        from autoenv.train.backends import make_trainer

        row = self.store.start_step(self.config.run, step, policy_version)
        if row["status"] == "done":
            return StepReport(step=step, policy_version_in=row["policy_version_in"], policy_version_out=row["policy_version_out"], resumed=True,
                              useful_group_rate=row["useful_group_rate"] or 0.0, benchmark_score=row["benchmark_score"])
        report = StepReport(step=step, policy_version_in=policy_version, policy_version_out=policy_version)

        self.serve_version(policy_version)
        if self.config.static_dir is None:
            await self.propose(step, policy_version)
        step_attempts = self.store.attempts(self.config.run, step)
        report.proposals = len(step_attempts)
        report.accepted = sum(1 for a in step_attempts if a["valid"] and a["calibrated"])
        if step_attempts:
            report.proposer_valid_rate = sum(1 for a in step_attempts if a["valid"]) / len(step_attempts)

        proposed = self.proposed_pool() if self.config.static_dir is None else []
        pool = proposed or self.pool()
        self.register_tasks(pool, "static" if self.config.static_dir else "bundled", "static" if self.config.static_dir else "bundled")
        if not pool:
            raise RuntimeError("no tasks to train on: no accepted proposals, no bundled tasks and no --static set")
        k = min(self.config.tasks_per_step, len(pool))
        # the newest accepted tasks (fresh supply); a fixed set is cycled through
        chosen = pool[:k] if proposed else [pool[(step * k + i) % len(pool)] for i in range(k)]
        chosen = list(dict.fromkeys(chosen))
        started = time.monotonic()
        self.progress("collect", {"tasks": len(chosen), "group_size": self.config.group_size})
        groups = await collect_groups(self.store, run=self.config.run, step=step, tasks=chosen, group_size=self.config.group_size,
                                      spec=self.step_spec(policy_version), policy_version=policy_version, trials_dir=self.out / "trials",
                                      executor=self.executor(policy_version),
                                      on_rollout=lambda o: self.progress("rollout", {"task": o.task, "reward": o.reward}))
        report.collect_sec = time.monotonic() - started
        report.groups = len(groups)
        report.useful_groups = sum(g.useful for g in groups)
        report.useful_group_rate = report.useful_groups / max(1, len(groups))
        self.harvest_seed_cases(step, groups, {h: p for p, h in chosen})

        started = time.monotonic()
        batch = self.training_batch(step, policy_version, groups)
        trainer = make_trainer(self.config.trainer)
        self.progress("train", {"samples": len(batch.samples), "backend": self.config.trainer})
        result = trainer.train_step(batch, policy_dir=self.policy_dir(policy_version), out_dir=self.out / "train")
        report.train_sec = time.monotonic() - started
        report.loss = result.loss
        report.policy_version_out = result.policy_version_out

        if self.config.serve != "none":
            self.serve_version(report.policy_version_out)  # the benchmark scores the new weights
        report.benchmark_score = await self.benchmark(step, report.policy_version_out)
        self.store.update_step(self.config.run, step, status="done", policy_version_out=report.policy_version_out, backend=self.config.trainer,
                               loss=report.loss, n_samples=len(batch.samples), n_groups=report.groups, n_useful_groups=report.useful_groups,
                               useful_group_rate=report.useful_group_rate, collect_sec=report.collect_sec, train_sec=report.train_sec,
                               benchmark_score=report.benchmark_score, proposer_valid_rate=report.proposer_valid_rate,
                               checkpoint=str(result.checkpoint) if result.checkpoint else None)
        self.store.record_metrics(self.config.run, step, {k: v for k, v in {
            "useful_group_rate": report.useful_group_rate, "collect_sec": report.collect_sec, "train_sec": report.train_sec,
            "benchmark_score": report.benchmark_score, "proposer_valid_rate": report.proposer_valid_rate, "loss": report.loss,
            "samples": float(len(batch.samples)),
        }.items() if v is not None})
        return report

    def policy_dir(self, version: int) -> Path | None:
        path = self.out / "train" / f"v{version}"
        return path if path.exists() else None

    def serve_version(self, version: int) -> None:
        """Serve checkpoint v{version} at the shared endpoint before rollouts sample from it (``serve`` only)."""
        if self.config.serve == "none":
            return
        from autoenv.train.policy import checkpoint_dir
        from autoenv.train.serve import PolicyServer

        checkpoint = checkpoint_dir(self.out / "train", version)
        if not checkpoint.is_dir():
            if version != 0:
                raise FileNotFoundError(f"{checkpoint}: policy v{version} was never saved; the trainer {self.config.trainer!r} "
                                        "keeps no weights here (serving needs the trl backend)")
            if self.config.serve != "cpu":
                raise FileNotFoundError(f"{checkpoint}: put the model to serve as v0 there (a save_pretrained folder)")
            from autoenv.train.tiny import init_policy

            self.progress("serve", {"message": f"no v0 at {checkpoint}: building the tiny offline policy"})
            init_policy(checkpoint)
        if self.server is None:
            self.server = PolicyServer(kind=self.config.serve, port=self.config.serve_port, served_model_name="policy",
                                       log_dir=self.out / "serve", ready_timeout=900 if self.config.serve == "vllm" else 300)
        self.progress("serve", {"version": version, "checkpoint": str(checkpoint)})
        self.server.swap(checkpoint)

    async def run(self) -> list[StepReport]:
        reports = []
        version = 0
        try:
            for step in range(self.config.steps):
                self.progress("step", {"step": step, "of": self.config.steps})
                report = await self.step(step, version)
                version = report.policy_version_out
                reports.append(report)
                self.progress("step_done", report.model_dump())
        finally:
            if self.server is not None:
                self.server.stop()
                self.server = None
        return reports
