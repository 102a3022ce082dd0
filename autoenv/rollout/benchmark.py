"""The benchmark stage: the current solver's mean reward on a fixed, held-out task set after each step."""

from __future__ import annotations

from pathlib import Path

from autoenv.spec import SolverSpec
from autoenv.taskfmt.check import find_tasks
from autoenv.trials.attribution import stop_on_machine_fault
from autoenv.trials.runner import TrialOutcome, arun_many


async def score_benchmark(
    benchmark_dir: Path | None,
    *,
    spec: SolverSpec,
    step: int,
    policy_version: int,
    max_tasks: int | None = None,
    rollouts: int = 1,
    n_concurrent: int = 2,
    trials_dir: Path,
) -> float | None:
    """Mean reward of ``rollouts`` solver runs on each of the first ``max_tasks`` tasks (None: no benchmark).

    Seeds differ per step and rollout but not between runs, so two runs (a method and its baseline) are
    scored on the same draws.
    """
    if not benchmark_dir:
        return None
    tasks = find_tasks(Path(benchmark_dir))[: max_tasks or None]
    if not tasks:
        return None
    jobs = []
    for i in range(rollouts):
        kwargs = dict(spec.kwargs)
        if spec.agent == "terminal":
            kwargs.update(seed=10_000 + 100 * step + i, policy_version=policy_version)
        jobs += [(t, spec.agent, kwargs) for t in tasks]
    outcomes: list[TrialOutcome] = await arun_many(jobs, n_concurrent=n_concurrent, env=spec.env, trials_dir=trials_dir)
    stop_on_machine_fault(outcomes)
    return sum(o.reward or 0.0 for o in outcomes) / len(outcomes)
