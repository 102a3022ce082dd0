"""The paper's comparisons, offline: the flywheel against its baselines, side by side on the same seeds.

Three runs of the same loop with the offline learned policy (``terminal:policy=learned``,
``table`` trainer) share one store:

- ``autoenv``: the proposer writes tasks from the seed cases and is trained on r_P;
- ``static``: no proposer, the solver trains on a fixed set of generated tasks at the family's easiest
  level (Fig. 6/7's static baseline: a fixed set the solver can master);
- ``proposer-off``: the proposer writes tasks but is not trained (Fig. 20's baseline).

The seed case is ``csv-weighted-stats`` (family ``csv-stat``, graded: clean data at level 1, messy at 2
and 3); the benchmark is held-out tasks of the family at its default level (messy data).
Each prints, per step: the benchmark score (``--benchmark-rollouts`` per task),
the useful-group rate, the seconds to collect the groups, and the proposer's valid rate. Then the
valid-environment rate with 95% Wilson intervals per proposer method (prompt, feedback, agentic;
Fig. 4), from ``--method-attempts`` attempts of each with the untrained proposer. ``autoenv report
--db OUT/dynamics.db`` draws the same as figures.

Run: .venv/bin/python bench/flywheel_dynamics.py [--steps 6] [--out runs/bench-dynamics]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.registry import FAMILIES  # noqa: E402
from autoenv.flywheel.loop import Flywheel, FlywheelConfig  # noqa: E402
from autoenv.proposer.models import SeedCase  # noqa: E402
from autoenv.report.build import valid_rates  # noqa: E402
from autoenv.store.db import Store  # noqa: E402
from autoenv.trials.runner import quiet_harbor_logs  # noqa: E402
from bench._common import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: The graded family's seed case; validation and calibration of its tasks take seconds.
SEEDS = ("csv-weighted-stats",)
RUNS = ("autoenv", "static", "proposer-off")


def generated_set(root: Path, cases: list[SeedCase], *, per_case: int, seed: int, level: int | None = None) -> Path:
    """Tasks generated from the seed cases' families (fixed seeds): the benchmark and the static set."""
    root.mkdir(parents=True, exist_ok=True)
    for case in cases:
        family = FAMILIES[case.family]
        for i in range(per_case):
            family.draft(case, random.Random(f"{seed}:{case.id}:{i}"), level=level if family.levels else None).write(
                root
            )
    return root


def run_configs(
    out: Path, steps: int, seeds: Path, benchmark: Path, static: Path, benchmark_rollouts: int
) -> dict[str, FlywheelConfig]:
    common = dict(
        steps=steps,
        group_size=4,
        tasks_per_step=3,
        proposals_per_step=4,
        method="prompt",
        calibration_rollouts=4,
        solver="terminal:policy=learned",
        trainer="table:lr=2",
        seed_cases_dir=seeds,
        benchmark_dir=benchmark,
        benchmark_rollouts=benchmark_rollouts,
        n_concurrent=2,
        out_dir=out / "runs",
    )
    return {
        "autoenv": FlywheelConfig(run="autoenv", **common),
        "static": FlywheelConfig(run="static", static_dir=static, **common),
        "proposer-off": FlywheelConfig(run="proposer-off", proposer_training=False, **common),
    }


async def method_attempts(store: Store, cases: list[SeedCase], out: Path, attempts: int) -> None:
    """Fig. 4: each method on the same seed cases with the untrained proposer, recorded as run ``methods``."""
    from autoenv.proposer.propose import propose_async

    for method in ("prompt", "feedback", "agentic"):
        for i in range(attempts):
            case = cases[i % len(cases)]
            summary = await propose_async(
                case,
                method=method,
                policy="scripted",
                out_dir=out / "methods" / method / "tasks",
                workspace=out / "methods" / method / "workspace",
                attempts=1,
                seed=i,
                solver="terminal:policy=learned",
                rollouts=4,
            )
            for record in summary.records:
                store.record_attempt(
                    run="methods",
                    step=0,
                    seed_case=case.id,
                    method=method,
                    proposer=record.proposer,
                    policy_version=0,
                    task_hash=record.task_hash,
                    valid=record.valid,
                    calibrated=record.calibrated,
                    reason=record.reason,
                    reward=record.reward,
                    n_files=record.n_files,
                    n_actions=len(record.actions),
                    actions=[a.model_dump() for a in record.actions],
                    duration_sec=record.duration_sec,
                    episode_path=record.episode_path,
                    attempt_key=f"{method}/{i}/{case.id}",
                )


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "bench-dynamics")
    parser.add_argument("--benchmark-rollouts", type=int, default=2)
    parser.add_argument("--method-attempts", type=int, default=4, help="attempts per proposer method (0: skip)")
    parser.add_argument("--runs", default=",".join(RUNS), help="which runs, comma-separated")
    args = parser.parse_args()
    quiet_harbor_logs()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    cases = [SeedCase.load(REPO / "examples" / "seed_cases" / f"{name}.yaml") for name in SEEDS]
    seeds = args.out / "seed_cases"
    seeds.mkdir()
    for case in cases:
        case.dump(seeds / f"{case.id}.yaml")
    benchmark = generated_set(args.out / "benchmark", cases, per_case=4, seed=1000)
    static = generated_set(args.out / "static", cases, per_case=4, seed=2000, level=1)
    store = Store(args.out / "dynamics.db")
    print(f"machine: {machine()}")
    print(
        f"seed cases: {', '.join(SEEDS)}; benchmark: {len(list(benchmark.iterdir()))} held-out tasks x "
        f"{args.benchmark_rollouts} rollouts; "
        f"static set: {len(list(static.iterdir()))} tasks"
    )
    configs = run_configs(args.out, args.steps, seeds, benchmark, static, args.benchmark_rollouts)
    timings = {}
    for name in args.runs.split(","):
        started = time.monotonic()
        reports = asyncio.run(Flywheel(configs[name], store, progress=lambda e, d: None).run())
        timings[name] = time.monotonic() - started
        print(f"\n== {name} ({timings[name] / 60:.1f} min)")
        print(f"{'step':>4} {'policy':>8} {'benchmark':>9} {'useful':>6} {'collect s':>9} {'valid':>5} {'accepted':>8}")
        for r in reports:
            print(
                f"{r.step:>4} {f'v{r.policy_version_in}->v{r.policy_version_out}':>8} {fmt(r.benchmark_score):>9} "
                f"{fmt(r.useful_group_rate):>6} "
                f"{fmt(r.collect_sec, 1):>9} {fmt(r.proposer_valid_rate):>5} {r.accepted:>8}"
            )
    if args.method_attempts:
        started = time.monotonic()
        asyncio.run(method_attempts(store, cases, args.out, args.method_attempts))
        print(
            f"\n== valid-environment rate by method, untrained proposer ({(time.monotonic() - started) / 60:.1f} min)"
        )
        for row in valid_rates(store.attempts("methods"), "method"):
            print(
                f"{row['method']:>9}: {row['valid']}/{row['n']} = {row['rate']:.2f}  95% CI [{row['low']:.2f}, "
                f"{row['high']:.2f}]"
            )
    for name in timings:
        rows = store.attempts(name)
        if rows:
            valid = [r for r in rows if r["valid"]]
            print(f"{name}: proposer valid rate over the run {len(valid)}/{len(rows)}")
    print(f"\nstore: {store.url}  (autoenv report --db {args.out / 'dynamics.db'} --out {args.out / 'report'})")


if __name__ == "__main__":
    main()
