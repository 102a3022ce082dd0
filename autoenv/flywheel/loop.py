"""The flywheel: failures -> proposer -> accepted tasks -> rollouts -> training -> failures.

Each step is resumable: the store records attempts, groups and rollouts under
natural keys and the step's status, so rerunning after a crash redoes only
what is missing. Baselines are the same loop with a part switched off:
``static_dir`` trains on a fixed task set (no proposer), and
``proposer_training=False`` keeps proposing but trains on solver data only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenv.proposer.models import AttemptRecord, Method, SeedCase
from autoenv.rollout.collect import Executor, GroupResult, SolverSpec, collect_groups, local_executor
from autoenv.store.db import Store
from autoenv.taskfmt.check import find_tasks
from autoenv.taskfmt.hashing import count_files, task_hash
from autoenv.train.grpo import group_advantages
from autoenv.trials.runner import TrialOutcome, arun_many

REPO_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class FlywheelConfig(BaseModel):
    run: str = "main"
    steps: int = 3
    group_size: int = 4
    tasks_per_step: int = 3
    solver: str = "terminal:policy=scripted,success_rate=0.6"
    proposer_policy: str = "scripted"
    method: Method = "feedback"
    proposals_per_step: int = 2  # a group of one proposer episode has no advantage
    calibration_rollouts: int = 4
    seed_cases_dir: Path = REPO_EXAMPLES / "seed_cases"
    benchmark_dir: Path | None = REPO_EXAMPLES / "tasks"
    benchmark_tasks: int | None = None  # None: every task of benchmark_dir
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
        stored = store.ensure_run(config.run, json.loads(config.model_dump_json()))
        if stored.get("baseline", config.baseline) != config.baseline and stored != json.loads(config.model_dump_json()):
            progress("warning", {"message": f"run {config.run!r} exists with another configuration; resuming it as stored"})
        self.out = Path(config.out_dir) / config.run
        self.out.mkdir(parents=True, exist_ok=True)
        self.progress = progress
        self.spec = SolverSpec.parse(config.solver, env=config.env)
        self._executor = executor

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
            return []
        n = self.config.proposals_per_step
        return [cases[(step * n + i) % len(cases)] for i in range(n)]

    def pool(self) -> list[tuple[Path, str]]:
        """Tasks the solver trains on: accepted proposals (or the static set)."""
        if self.config.static_dir is not None:
            return [(p, task_hash(p)) for p in find_tasks(Path(self.config.static_dir))]
        rows = [r for r in self.store.tasks(valid=True, calibrated=True) if r["method"] in ("prompt", "feedback", "agentic") and Path(r["path"]).is_dir()]
        if rows:
            return [(Path(r["path"]), r["hash"]) for r in rows]
        # before the proposer has produced anything, start from the bundled tasks
        if self.config.benchmark_dir:
            return [(p, task_hash(p)) for p in find_tasks(Path(self.config.benchmark_dir))]
        return []

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
            summary = await propose_async(
                case,
                method=self.config.method,
                policy=self.config.proposer_policy,
                out_dir=self.out / "tasks",
                workspace=self.out / "workspace",
                attempts=1,
                env=self.config.env,
                solver=self.config.solver,
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
                                          duration_sec=record.duration_sec, attempt_key=key)
        return records

    def harvest_seed_cases(self, step: int, groups: list[GroupResult], pool: dict[str, Path]) -> int:
        """Failed rollouts become the proposer's next seed cases (the loop's return edge)."""
        directory = self.out / "seed_cases"
        directory.mkdir(parents=True, exist_ok=True)
        made = 0
        for group in groups:
            if not group.rewards or min(group.rewards) >= 1.0:
                continue
            task_dir = pool[group.task_hash]
            failed = [r for r in self.store.rollouts(group_id=group.group_id) if (r["reward"] or 0) < 1.0]
            family = _task_family(task_dir)
            case = SeedCase(
                id=f"{task_dir.name}-s{step}",
                task=str(task_dir),
                trajectory=failed[0]["trajectory_path"] or "" if failed else "",
                failure_mode=f"solver failed {len(failed)}/{len(group.rewards)} rollouts" + (f" ({failed[0]['error']})" if failed and failed[0]["error"] else ""),
                target_skill=family or task_dir.name,
                family=family,
                reward=min(group.rewards),
            )
            path = directory / f"{case.id}.yaml"
            if not path.exists():
                case.dump(path)
                made += 1
        return made

    def training_batch(self, step: int, policy_version: int, groups: list[GroupResult], attempts: list[AttemptRecord]):
        """Useful solver groups (exact token ids/logprobs where recorded) plus proposer episodes (r_P)."""
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
        if self.config.proposer_training and attempts:
            # the step's proposer attempts form one group: r_P relative to its mean
            advantages = group_advantages([a.reward for a in attempts])
            for record, advantage in zip(attempts, advantages):
                if advantage == 0.0:
                    continue
                samples.append(TrainingSample(role="proposer", task_hash=record.task_hash or "", group_id=-1, rollout_id=-1,
                                              policy_version=policy_version, messages=_proposer_messages(record),
                                              reward=record.reward, advantage=advantage))
        return TrainingBatch(run=self.config.run, step=step, policy_version=policy_version, samples=samples)

    async def benchmark(self, step: int, policy_version: int) -> float | None:
        if not self.config.benchmark_dir:
            return None
        tasks = find_tasks(Path(self.config.benchmark_dir))[: self.config.benchmark_tasks or None]
        if not tasks:
            return None
        kwargs = dict(self.spec.kwargs)
        if self.spec.agent == "terminal":
            kwargs.update(seed=10_000 + step, policy_version=policy_version)
        outcomes: list[TrialOutcome] = await arun_many([(t, self.spec.agent) for t in tasks], n_concurrent=self.config.n_concurrent,
                                                       env=self.config.env, agent_kwargs=kwargs, trials_dir=self.out / "trials" / "benchmark")
        return sum(o.reward or 0.0 for o in outcomes) / len(outcomes)

    # -- the loop ------------------------------------------------------------------

    async def step(self, step: int, policy_version: int) -> StepReport:
        from autoenv.train.backends import make_trainer

        row = self.store.start_step(self.config.run, step, policy_version)
        if row["status"] == "done":
            return StepReport(step=step, policy_version_in=row["policy_version_in"], policy_version_out=row["policy_version_out"], resumed=True,
                              useful_group_rate=row["useful_group_rate"] or 0.0, benchmark_score=row["benchmark_score"])
        report = StepReport(step=step, policy_version_in=policy_version, policy_version_out=policy_version)

        attempts: list[AttemptRecord] = []
        if self.config.static_dir is None:
            attempts = await self.propose(step, policy_version)
        step_attempts = self.store.attempts(self.config.run, step)
        report.proposals = len(step_attempts)
        report.accepted = sum(1 for a in step_attempts if a["valid"] and a["calibrated"])
        if step_attempts:
            report.proposer_valid_rate = sum(1 for a in step_attempts if a["valid"]) / len(step_attempts)

        pool = self.pool()
        self.register_tasks(pool, "static" if self.config.static_dir else "bundled", "static" if self.config.static_dir else "bundled")
        if not pool:
            raise RuntimeError("no tasks to train on: no accepted proposals, no bundled tasks and no --static set")
        k = min(self.config.tasks_per_step, len(pool))
        chosen = [pool[(step * k + i) % len(pool)] for i in range(k)]
        chosen = list(dict.fromkeys(chosen))
        started = time.monotonic()
        self.progress("collect", {"tasks": len(chosen), "group_size": self.config.group_size})
        groups = await collect_groups(self.store, run=self.config.run, step=step, tasks=chosen, group_size=self.config.group_size,
                                      spec=self.spec, policy_version=policy_version, trials_dir=self.out / "trials",
                                      executor=self.executor(policy_version),
                                      on_rollout=lambda o: self.progress("rollout", {"task": o.task, "reward": o.reward}))
        report.collect_sec = time.monotonic() - started
        report.groups = len(groups)
        report.useful_groups = sum(g.useful for g in groups)
        report.useful_group_rate = report.useful_groups / max(1, len(groups))
        self.harvest_seed_cases(step, groups, {h: p for p, h in chosen})

        started = time.monotonic()
        batch = self.training_batch(step, policy_version, groups, attempts)
        trainer = make_trainer(self.config.trainer)
        self.progress("train", {"samples": len(batch.samples), "backend": self.config.trainer})
        result = trainer.train_step(batch, policy_dir=self.policy_dir(policy_version), out_dir=self.out / "train")
        report.train_sec = time.monotonic() - started
        report.loss = result.loss
        report.policy_version_out = result.policy_version_out

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

    async def run(self) -> list[StepReport]:
        reports = []
        version = 0
        for step in range(self.config.steps):
            self.progress("step", {"step": step, "of": self.config.steps})
            report = await self.step(step, version)
            version = report.policy_version_out
            reports.append(report)
            self.progress("step_done", report.model_dump())
        return reports


def _task_family(task_dir: Path) -> str | None:
    try:
        import tomllib

        meta = tomllib.loads((task_dir / "task.toml").read_text()).get("metadata", {})
    except (OSError, ValueError):
        return None
    return meta.get("family") or meta.get("category")


def _proposer_messages(record: AttemptRecord) -> list[dict[str, str]]:
    """The proposer episode as chat: seed-case prompt, then the task it wrote."""
    written = ""
    if record.task_dir and Path(record.task_dir).is_dir():
        for path in sorted(Path(record.task_dir).rglob("*")):
            if path.is_file() and path.stat().st_size < 20_000 and ".autoenv" not in path.parts:
                written += f"### {path.relative_to(record.task_dir)}\n{path.read_text(errors='replace')}\n"
    return [
        {"role": "system", "content": "You write Harbor tasks that a solver passes sometimes, not always and not never."},
        {"role": "user", "content": f"Seed case: {record.seed_case}. Method: {record.method}."},
        {"role": "assistant", "content": written or (record.reason or "")},
    ]
