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
from typing import Any

from pydantic import BaseModel

from autoenv.flywheel.config import RESUMABLE_OPTIONS, FlywheelConfig, RunConfigMismatch
from autoenv.flywheel.events import emit
from autoenv.proposer.models import AttemptRecord, ProposeOptions, SeedCase
from autoenv.proposer.seeds import harvest_seed_cases
from autoenv.proposer.stage import propose_step
from autoenv.report.trackers import NoTracker, Tracker, make_tracker
from autoenv.rollout.benchmark import score_benchmark
from autoenv.rollout.collect import Executor, GroupResult, collect_groups, local_executor
from autoenv.spec import SolverSpec
from autoenv.store.db import Store
from autoenv.taskfmt.check import find_tasks
from autoenv.taskfmt.hashing import count_files, task_hash
from autoenv.train.backends import TrainResult, make_trainer
from autoenv.train.batch import TrainingBatch
from autoenv.train.build import build_batch
from autoenv.validate.stats import wilson_interval
from autoenv.vocab import ProposerPolicy, ServeKind


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
    #: The 95% Wilson interval of the step's valid-environment rate.
    proposer_valid_low: float | None = None
    proposer_valid_high: float | None = None
    #: Mean proposer reward r_P of the step's attempts.
    proposer_reward_mean: float | None = None
    #: Mean reward of the step's solver rollouts (all groups).
    solver_pass_rate: float | None = None
    #: Completion tokens in the training batch, where the endpoint recorded them (None: re-tokenised messages).
    tokens: int | None = None
    propose_sec: float = 0.0
    benchmark_sec: float = 0.0
    resumed: bool = False

    def count_attempts(self, attempts: list[dict[str, Any]], seconds: float = 0.0) -> None:
        self.propose_sec = seconds
        self.proposals = len(attempts)
        self.accepted = sum(1 for a in attempts if a["valid"] and a["calibrated"])
        if attempts:
            valid = sum(1 for a in attempts if a["valid"])
            self.proposer_valid_rate = valid / len(attempts)
            self.proposer_valid_low, self.proposer_valid_high = wilson_interval(valid, len(attempts))
            rewards = [a["reward"] for a in attempts if a.get("reward") is not None]
            self.proposer_reward_mean = sum(rewards) / len(rewards) if rewards else None

    def count_groups(self, groups: list[GroupResult], seconds: float) -> None:
        self.collect_sec = seconds
        self.groups = len(groups)
        self.useful_groups = sum(g.useful for g in groups)
        self.useful_group_rate = self.useful_groups / max(1, len(groups))
        rewards = [r for g in groups for r in g.rewards]
        self.solver_pass_rate = sum(rewards) / len(rewards) if rewards else None

    def metrics(self) -> dict[str, float]:
        """What a step is followed by (store metrics, TensorBoard/trackio scalars); unmeasured ones left out."""
        names = (
            "benchmark_score", "solver_pass_rate", "useful_group_rate", "groups", "proposer_valid_rate",
            "proposer_valid_low", "proposer_valid_high", "proposer_reward_mean", "proposals", "accepted", "loss",
            "tokens", "propose_sec", "collect_sec", "train_sec", "benchmark_sec",
        )  # fmt: skip
        values = {n: getattr(self, n) for n in names}
        return {n: float(v) for n, v in values.items() if v is not None}

    def count_training(self, result: TrainResult, seconds: float) -> None:
        self.train_sec = seconds
        self.loss = result.loss
        self.policy_version_out = result.policy_version_out


Progress = Callable[[str, dict[str, Any]], None]


def _noop(_event: str, _data: dict[str, Any]) -> None:
    pass


class Flywheel:
    def __init__(
        self, config: FlywheelConfig, store: Store, *, executor: Executor | None = None, progress: Progress = _noop
    ):
        self.config = config
        self.store = store
        wanted = json.loads(config.model_dump_json())
        stored = store.ensure_run(config.run, wanted)
        derived = set(FlywheelConfig.model_computed_fields)  # follow from the options compared
        changed = sorted(
            k for k in stored.keys() & wanted.keys() if k not in RESUMABLE_OPTIONS | derived and stored[k] != wanted[k]
        )
        if changed:
            raise RunConfigMismatch(
                f"run {config.run!r} in {store.url} was started with another configuration ("
                + "; ".join(f"{k}: {stored[k]!r} then, {wanted[k]!r} now" for k in changed)
                + "). Resuming would mix two experiments: give this configuration another --run name, "
                "or rerun with the options the run was started with."
            )
        self.out = Path(config.out_dir) / config.run
        self.out.mkdir(parents=True, exist_ok=True)
        if config.init_policy is not None:
            from autoenv.train.policy import install_initial_policy

            install_initial_policy(config.init_policy, self.out / "train")
        self._on_event = progress
        self.tracker: Tracker = NoTracker()  # opened by run() (--report-to)
        self.server = None
        self.spec = SolverSpec.parse(self.solver_text(), env=config.env)
        self._executor = executor
        if config.policies == "mixed":
            self.progress(
                "warning",
                {
                    "message": f"mixed policies: the proposer is {self.proposer_label()} "
                    f"but the solver is {self.solver_text()!r}; "
                    "the mission's shared policy needs both to be the same model"
                },
            )

    def progress(self, event: str, data: dict[str, Any]) -> None:
        """One event: logged (:mod:`autoenv.flywheel.events`) and passed to the caller's ``progress``."""
        emit(event, data)
        self._on_event(event, data)

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
        if self.config.proposer != ProposerPolicy.SCRIPTED or not self.config.trainer.startswith("table"):
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
        return f"the model {model!r}" if self.config.proposer == ProposerPolicy.OPENAI else "the scripted proposer"

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
                + (
                    "the bundled examples/seed_cases come with a source checkout of autoenv, or set AUTOENV_EXAMPLES "
                    "to a copy"
                    if self.config.seed_cases_dir is None
                    else f"{self.config.seed_cases_dir} holds none"
                )
            )
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
                self.store.upsert_task(
                    hash=h,
                    name=path.name,
                    path=str(path.resolve()),
                    origin=origin,
                    method=method,
                    n_files=count_files(path),
                )

    # -- the loop ------------------------------------------------------------------

    async def step(self, step: int, policy_version: int) -> StepReport:
        """One step: each stage is a call into its own package, with typed results in between."""
        row = self.store.start_step(self.config.run, step, policy_version)
        if row["status"] == "done":  # a step an earlier run of this command finished: what it recorded, not zeros
            done = StepReport(
                step=step,
                policy_version_in=row["policy_version_in"],
                policy_version_out=row["policy_version_out"],
                resumed=True,
                useful_group_rate=row["useful_group_rate"] or 0.0,
                benchmark_score=row["benchmark_score"],
            )
            done.count_attempts(self.store.attempts(self.config.run, step))
            return done
        report = StepReport(step=step, policy_version_in=policy_version, policy_version_out=policy_version)
        self.serve_version(policy_version)

        started = time.monotonic()
        await self.propose(step, policy_version)  # proposer/ (each draft judged by validate/ where it is made)
        report.count_attempts(self.store.attempts(self.config.run, step), time.monotonic() - started)
        tasks = self.choose_tasks(step)  # this run's newest accepted tasks, or the static set
        started = time.monotonic()
        groups = await self.collect(step, policy_version, tasks)  # rollout/: GRPO groups of the current solver
        report.count_groups(groups, time.monotonic() - started)
        harvest_seed_cases(
            self.store, step=step, groups=groups, tasks={h: p for p, h in tasks}, out_dir=self.out / "seed_cases"
        )

        started = time.monotonic()
        batch = self.training_batch(step, policy_version, groups)  # train/build
        result = self.train(batch, policy_version)  # train/backends
        report.count_training(result, time.monotonic() - started)

        self.serve_version(report.policy_version_out)  # the benchmark scores the new weights
        started = time.monotonic()
        report.benchmark_score = await score_benchmark(  # rollout/benchmark
            self.config.benchmark_dir,
            spec=self.step_spec(report.policy_version_out),
            step=step,
            policy_version=report.policy_version_out,
            max_tasks=self.config.benchmark_tasks,
            rollouts=self.config.benchmark_rollouts,
            n_concurrent=self.config.n_concurrent,
            trials_dir=self.out / "trials" / "benchmark",
        )
        report.benchmark_sec = time.monotonic() - started
        report.tokens = _completion_tokens(batch)
        self.finish_step(step, report, batch, result)
        return report

    # -- the stages, as this run configures them ---------------------------------------

    async def propose(self, step: int, policy_version: int) -> list[AttemptRecord]:
        if self.config.static_dir is not None:
            return []  # the static baseline has no proposer
        return await propose_step(
            self.store,
            run=self.config.run,
            step=step,
            cases=self.seed_cases(step),
            policy_version=policy_version,
            out_dir=self.out / "tasks",
            workspace=self.out / "workspace",
            options=self.propose_options(policy_version),
            on_case=lambda case: self.progress("propose", {"seed_case": case.id, "method": self.config.method}),
        )

    def propose_options(self, policy_version: int) -> ProposeOptions:
        """The proposer's options for a step, built once from the run's configuration (typed, never a dict): the
        shared model when it proposes, the table and the solver of ``policy_version``."""
        model, base_url = self.endpoint() if self.config.proposer == ProposerPolicy.OPENAI else (None, None)
        return ProposeOptions(
            method=self.config.method,
            policy=self.config.proposer,
            model=model,
            base_url=base_url,
            network=self.config.proposer_network_mode(),
            proposer_table=self.proposer_table(policy_version),
            env=self.config.env,
            validation=self.config.validation,
            solver=self.solver_text(policy_version),
            rollouts=self.config.calibration_rollouts,
            accept_undetermined=self.config.accept_undetermined,
            seed=self.config.seed,
        )

    def choose_tasks(self, step: int) -> list[tuple[Path, str]]:
        """The step's tasks: the newest accepted ones (fresh supply), else a fixed set cycled through."""
        proposed = self.proposed_pool() if self.config.static_dir is None else []
        pool = proposed or self.pool()
        origin = "static" if self.config.static_dir else "bundled"
        self.register_tasks(pool, origin, origin)
        if not pool:
            raise RuntimeError("no tasks to train on: no accepted proposals, no bundled tasks and no --static set")
        k = min(self.config.tasks_per_step, len(pool))
        chosen = pool[:k] if proposed else [pool[(step * k + i) % len(pool)] for i in range(k)]
        return list(dict.fromkeys(chosen))

    async def collect(self, step: int, policy_version: int, tasks: list[tuple[Path, str]]) -> list[GroupResult]:
        self.progress("collect", {"tasks": len(tasks), "group_size": self.config.group_size})
        return await collect_groups(
            self.store,
            run=self.config.run,
            step=step,
            tasks=tasks,
            group_size=self.config.group_size,
            spec=self.step_spec(policy_version),
            policy_version=policy_version,
            trials_dir=self.out / "trials",
            executor=self.executor(policy_version),
            on_rollout=lambda o: self.progress("rollout", {"task": o.task, "reward": o.reward}),
        )

    def training_batch(self, step: int, policy_version: int, groups: list[GroupResult]) -> TrainingBatch:
        """Useful solver groups plus, when the proposer trains, the step's proposer episodes (:func:`build_batch`)."""
        trains_proposer = self.config.proposer_training and self.config.static_dir is None
        return build_batch(
            self.store,
            run=self.config.run,
            step=step,
            policy_version=policy_version,
            groups=groups,
            proposer_attempts=self.store.attempts(self.config.run, step) if trains_proposer else [],
        )

    def train(self, batch: TrainingBatch, policy_version: int) -> TrainResult:
        self.progress("train", {"samples": len(batch.samples), "backend": self.config.trainer})
        return make_trainer(self.config.trainer).train_step(
            batch, policy_dir=self.policy_dir(policy_version), out_dir=self.out / "train"
        )

    def finish_step(self, step: int, report: StepReport, batch: TrainingBatch, result: TrainResult) -> None:
        self.store.update_step(
            self.config.run,
            step,
            status="done",
            policy_version_out=report.policy_version_out,
            backend=self.config.trainer,
            loss=report.loss,
            n_samples=len(batch.samples),
            n_groups=report.groups,
            n_useful_groups=report.useful_groups,
            useful_group_rate=report.useful_group_rate,
            collect_sec=report.collect_sec,
            train_sec=report.train_sec,
            benchmark_score=report.benchmark_score,
            proposer_valid_rate=report.proposer_valid_rate,
            checkpoint=str(result.checkpoint) if result.checkpoint else None,
        )
        metrics = report.metrics() | {"samples": float(len(batch.samples))}
        self.store.record_metrics(self.config.run, step, metrics)
        self.tracker.log(step, metrics)

    def policy_dir(self, version: int) -> Path | None:
        path = self.out / "train" / f"v{version}"
        return path if path.exists() else None

    def serve_version(self, version: int) -> None:
        """Serve checkpoint v{version} at the shared endpoint before rollouts sample from it (``serve`` only)."""
        if self.config.serve == ServeKind.NONE:
            return
        from autoenv.train.policy import checkpoint_dir
        from autoenv.train.serve import PolicyServer

        checkpoint = checkpoint_dir(self.out / "train", version)
        if not checkpoint.is_dir():
            if version != 0:
                raise FileNotFoundError(
                    f"{checkpoint}: policy v{version} was never saved; the trainer {self.config.trainer!r} "
                    "keeps no weights here (serving needs the trl backend)"
                )
            if self.config.serve != ServeKind.CPU:
                raise FileNotFoundError(f"{checkpoint}: put the model to serve as v0 there (a save_pretrained folder)")
            from autoenv.train.tiny import init_policy

            self.progress("serve", {"message": f"no v0 at {checkpoint}: building the tiny offline policy"})
            init_policy(checkpoint)
        if self.server is None:
            self.server = PolicyServer(
                kind=self.config.serve,
                port=self.config.serve_port,
                served_model_name="policy",
                log_dir=self.out / "serve",
                ready_timeout=900 if self.config.serve == ServeKind.VLLM else 300,
            )
        self.progress("serve", {"version": version, "checkpoint": str(checkpoint)})
        self.server.swap(checkpoint)

    async def run(self) -> list[StepReport]:
        reports = []
        version = 0
        self.tracker = make_tracker(
            self.config.report_to,
            out_dir=Path(self.config.out_dir),
            run=self.config.run,
            config=json.loads(self.config.model_dump_json()),
        )
        try:
            for step in range(self.config.steps):
                self.progress("step", {"step": step, "of": self.config.steps})
                report = await self.step(step, version)
                version = report.policy_version_out
                reports.append(report)
                self.progress("step_done", report.model_dump())
        finally:
            self.tracker.close()
            self.tracker = NoTracker()
            if self.server is not None:
                self.server.stop()
                self.server = None
        return reports


def _completion_tokens(batch: TrainingBatch) -> int | None:
    """Completion tokens the batch trains on, where the endpoint recorded them (None when none did)."""
    counts = [sum(len(t.completion_token_ids) for t in turns) for s in batch.samples if (turns := s.token_turns())]
    return sum(counts) if counts else None
