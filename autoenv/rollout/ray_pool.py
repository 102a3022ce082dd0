"""Run rollouts as Ray tasks, so one flywheel can use many machines.

Each rollout is one Ray task calling the same :func:`run_trial` the local pool
uses, so counts and rewards match the local path exactly. ``address`` is a
Ray cluster address (``ray://head:10001`` or ``auto``) or ``local`` for an
in-process cluster (tests, a single workstation). Every node needs autoenv
installed and the task folders reachable at the same paths (shared storage),
or a Ray ``runtime_env`` that ships them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from autoenv.rollout.collect import Executor, RolloutJob, _kwargs_for
from autoenv.spec import SolverSpec
from autoenv.trials.cluster import ray_init
from autoenv.trials.runner import TrialOutcome


def ray_executor(address: str = "local", policy_version: int = 0, num_cpus: int | None = None) -> Executor:
    ray = ray_init(address, num_cpus)

    @ray.remote(num_cpus=1)
    def one(task_dir: str, agent: str, env: str, kwargs: dict, trials_dir: str) -> dict:
        from autoenv.trials.runner import quiet_harbor_logs, run_trial

        quiet_harbor_logs()
        return run_trial(task_dir, agent, env=env, agent_kwargs=kwargs, trials_dir=trials_dir).model_dump()

    async def run(jobs: list[RolloutJob], spec: SolverSpec, trials_dir: Path) -> list[TrialOutcome]:
        refs = [
            one.remote(str(j.task_dir), spec.agent, spec.env, _kwargs_for(j, spec, policy_version), str(trials_dir))
            for j in jobs
        ]
        results = await asyncio.to_thread(ray.get, refs)
        return [TrialOutcome(**r) for r in results]

    return run


def shutdown() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()
