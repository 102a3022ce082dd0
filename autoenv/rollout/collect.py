"""Collect solver rollouts in GRPO groups and record them in the store.

A group is G rollouts of one task by the current policy version. Rollouts are
keyed by (group, index) in the store, so collecting a step again after an
interruption runs only the missing indices: nothing lost, nothing duplicated.
The executor is pluggable: a local asyncio pool, or Ray across machines
(:mod:`autoenv.rollout.ray_pool`), with identical results.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoenv.shared.groups import GroupResult
from autoenv.spec import SolverSpec
from autoenv.store.db import Store
from autoenv.train.grpo import group_advantages
from autoenv.trials.attribution import stop_on_machine_fault
from autoenv.trials.runner import TrialOutcome, arun_trial


@dataclass
class RolloutJob:
    task_dir: Path
    task_hash: str
    group_id: int
    index: int
    seed: int


#: An executor runs jobs and returns outcomes in job order.
Executor = Callable[[list[RolloutJob], SolverSpec, Path], Awaitable[list[TrialOutcome]]]


def rollout_seed(run: str, step: int, task_hash: str, index: int) -> int:
    digest = hashlib.sha256(f"{run}/{step}/{task_hash}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _kwargs_for(job: RolloutJob, spec: SolverSpec, policy_version: int) -> dict[str, Any]:
    kwargs = dict(spec.kwargs)
    if spec.seeded:
        kwargs["seed"] = job.seed
    if spec.agent == "terminal":
        kwargs.setdefault("policy_version", policy_version)
    return kwargs


def local_executor(n_concurrent: int = 2, policy_version: int = 0) -> Executor:
    async def run(jobs: list[RolloutJob], spec: SolverSpec, trials_dir: Path) -> list[TrialOutcome]:
        semaphore = asyncio.Semaphore(max(1, n_concurrent))

        async def one(job: RolloutJob) -> TrialOutcome:
            async with semaphore:
                return await arun_trial(
                    job.task_dir,
                    spec.agent,
                    env=spec.env,
                    agent_kwargs=_kwargs_for(job, spec, policy_version),
                    trials_dir=trials_dir,
                )

        return list(await asyncio.gather(*(one(j) for j in jobs)))

    return run


async def collect_groups(
    store: Store,
    *,
    run: str,
    step: int,
    tasks: list[tuple[Path, str]],
    group_size: int,
    spec: SolverSpec,
    policy_version: int,
    trials_dir: Path,
    executor: Executor | None = None,
    on_rollout: Callable[[TrialOutcome], None] | None = None,
) -> list[GroupResult]:
    """Run the missing rollouts of every (task, hash) group and close the groups."""
    executor = executor or local_executor(policy_version=policy_version)
    started = time.monotonic()
    jobs: list[RolloutJob] = []
    group_ids: dict[str, int] = {}
    for task_dir, task_hash in tasks:
        gid = store.group_id(run, step, task_hash, "solver", group_size)
        group_ids[task_hash] = gid
        done = store.done_indices(gid)
        jobs += [
            RolloutJob(task_dir, task_hash, gid, i, rollout_seed(run, step, task_hash, i))
            for i in range(group_size)
            if i not in done
        ]

    # run in chunks so an interruption loses at most one chunk of work
    chunk = max(1, 2 * group_size)
    for start in range(0, len(jobs), chunk):
        batch = jobs[start : start + chunk]
        outcomes = await executor(batch, spec, trials_dir)
        stop_on_machine_fault(outcomes)  # before storing: a rerun resumes these rollouts on a repaired machine
        for job, outcome in zip(batch, outcomes):
            store.add_rollout(
                run=run,
                step=step,
                group_id=job.group_id,
                task_hash=job.task_hash,
                index=job.index,
                policy_version=policy_version,
                reward=outcome.reward if outcome.reward is not None else 0.0,
                n_turns=outcome.n_turns,
                error=outcome.error,
                trajectory_path=_trajectory_path(outcome),
                duration_sec=outcome.duration_sec,
            )
            if on_rollout:
                on_rollout(outcome)

    elapsed = time.monotonic() - started
    results = []
    for _task_dir, task_hash in tasks:
        gid = group_ids[task_hash]
        rows = sorted(store.rollouts(group_id=gid), key=lambda r: r["index"])
        rewards = [float(r["reward"] or 0.0) for r in rows]
        advantages = group_advantages(rewards)
        summary = store.finish_group(gid, rewards, advantages, collection_sec=elapsed / max(1, len(tasks)))
        results.append(
            GroupResult(gid, task_hash, rewards, advantages, summary["useful"], elapsed / max(1, len(tasks)))
        )
    return results


def _trajectory_path(outcome: TrialOutcome) -> str | None:
    if not outcome.trial_dir:
        return None
    path = Path(outcome.trial_dir) / "agent" / "trajectory.json"
    return str(path) if path.exists() else None
