"""The paper's comparisons, offline: the flywheel against its baselines, side by side on the same seeds.

Three runs of the same loop with the offline learned policy (``terminal:policy=learned``,
``table`` trainer) share one store:

- ``autoenv``: the proposer writes tasks from the seed cases and is trained on r_P;
- ``static``: no proposer, the solver trains on a fixed set of generated tasks at the family's easiest
  level (Fig. 6/7's static baseline: a fixed set the solver can master);
- ``proposer-off``: the proposer writes tasks but is not trained (Fig. 20's baseline).

The seed case is ``csv-weighted-stats`` (family ``csv-stat``, graded: clean data at level 1, messy at 2
and 3, messy with a program run on unseen files at 4); the benchmark is held-out tasks of the family at its
default level (messy data).
Each prints, per step: the benchmark score (``--benchmark-rollouts`` per task),
the useful-group rate, the mean level of the tasks accepted at that step (their task.toml's ``level``, read by
:func:`autoenv.report.levels.accepted_levels` over the store: issue 42's "the accepted level rises while the
useful-group rate stays above 0.5"), the seconds to collect the groups, and the proposer's valid rate. Then the
valid-environment rate with 95% Wilson intervals per proposer method (prompt, feedback, agentic;
Fig. 4), from ``--method-attempts`` attempts of each with the untrained proposer. ``autoenv report
--db OUT/dynamics.db`` draws the same as figures.

With ``--seeds N`` every arm runs on N seeds (a fresh benchmark draw and static set per seed, the proposals'
and rollouts' randomness per seed), and the summary gives per step the mean benchmark and useful-group rate with
a 95% t-interval, then the flywheel minus each baseline, paired by seed, with its interval.

Run: .venv/bin/python bench/flywheel_dynamics.py [--steps 6] [--seeds 5] [--out runs/bench-dynamics]
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
from autoenv.report.levels import accepted_levels  # noqa: E402
from autoenv.store.db import Store  # noqa: E402
from autoenv.trials.runner import quiet_harbor_logs  # noqa: E402
from autoenv.validate.stats import mean_interval  # noqa: E402
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
    out: Path, steps: int, seeds: Path, benchmark: Path, static: Path, benchmark_rollouts: int, seed: int = 0
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
        seed=seed,
    )
    suffix = f"-s{seed}" if seed else ""  # the report draws runs named NAME-sK as one band per NAME
    return {
        "autoenv": FlywheelConfig(run=f"autoenv{suffix}", **common),
        "static": FlywheelConfig(run=f"static{suffix}", static_dir=static, **common),
        "proposer-off": FlywheelConfig(run=f"proposer-off{suffix}", proposer_training=False, **common),
    }


async def method_attempts(store: Store, cases: list[SeedCase], out: Path, attempts: int) -> None:
    """Fig. 4: each method on the same seed cases with the untrained proposer, recorded as run ``methods``."""
    from autoenv.proposer.models import ProposeOptions
    from autoenv.proposer.propose import propose_async

    for method in ("prompt", "feedback", "agentic"):
        for i in range(attempts):
            case = cases[i % len(cases)]
            options = ProposeOptions(
                method=method, policy="scripted", attempts=1, seed=i, solver="terminal:policy=learned", rollouts=4
            )
            summary = await propose_async(
                case,
                options,
                out_dir=out / "methods" / method / "tasks",
                workspace=out / "methods" / method / "workspace",
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


def step_levels(store: Store, run: str) -> dict[int, tuple[float, list[int]]]:
    """Per step of ``run``: the mean level of the tasks accepted there, and their levels (the report's
    accepted_levels.png from the same rows); a step that accepted no laddered task is absent."""
    paths = {t["hash"]: t["path"] for t in store.tasks()}
    return {row["step"]: (row["mean"], sorted(row["levels"])) for row in accepted_levels(store.attempts(run), paths)}


def fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_ci(values: list[float]) -> str:
    if not values:
        return "-"
    mean, low, high = mean_interval(values)
    return f"{mean:.2f} [{low:.2f}, {high:.2f}]" if len(values) > 1 else f"{mean:.2f}"


def run_seed(args: argparse.Namespace, cases: list[SeedCase], store: Store, seed: int) -> dict[str, list]:
    """Every arm on one seed: its own benchmark draw and static set, the arms' run names suffixed -sK."""
    out = args.out if args.seeds == 1 else args.out / f"seed-{seed}"
    seeds_dir = out / "seed_cases"
    seeds_dir.mkdir(parents=True, exist_ok=True)
    for case in cases:
        case.dump(seeds_dir / f"{case.id}.yaml")
    benchmark = generated_set(
        out / "benchmark", cases, per_case=args.benchmark_tasks, seed=1000 + seed, level=args.benchmark_level
    )
    static = generated_set(out / "static", cases, per_case=4, seed=2000 + seed, level=1)
    if seed == 0:
        print(
            f"seed cases: {', '.join(SEEDS)}; benchmark: {len(list(benchmark.iterdir()))} held-out tasks x "
            f"{args.benchmark_rollouts} rollouts (a fresh draw per seed); static set: {len(list(static.iterdir()))} "
            f"tasks"
        )
    configs = run_configs(out, args.steps, seeds_dir, benchmark, static, args.benchmark_rollouts, seed=seed)
    reports = {}
    for name in args.runs.split(","):
        started = time.monotonic()
        reports[name] = asyncio.run(Flywheel(configs[name], store, progress=lambda e, d: None).run())
        minutes = (time.monotonic() - started) / 60
        print(f"\n== {configs[name].run} ({minutes:.1f} min)")
        levels = step_levels(store, configs[name].run)
        print(
            f"{'step':>4} {'policy':>8} {'benchmark':>9} {'useful':>6} {'level':>5} {'levels accepted':>15} "
            f"{'collect s':>9} {'valid':>5} {'accepted':>8}"
        )
        for r in reports[name]:
            mean, accepted = levels.get(r.step, (None, []))
            print(
                f"{r.step:>4} {f'v{r.policy_version_in}->v{r.policy_version_out}':>8} {fmt(r.benchmark_score):>9} "
                f"{fmt(r.useful_group_rate):>6} {fmt(mean):>5} {' '.join(map(str, accepted)) or '-':>15} "
                f"{fmt(r.collect_sec, 1):>9} {fmt(r.proposer_valid_rate):>5} {r.accepted:>8}",
                flush=True,
            )
        rows = store.attempts(configs[name].run)
        if rows:
            print(f"proposer valid rate over the run {len([r for r in rows if r['valid']])}/{len(rows)}")
    return reports


def summarise(results: dict[str, list[list]], steps: int) -> None:
    """Per step, the mean over seeds with its 95% interval; then the flywheel against each baseline."""
    n = len(next(iter(results.values())))
    print(f"\n== over {n} seed(s): mean [95% t-interval] per step")
    for field, title in (("benchmark_score", "benchmark"), ("useful_group_rate", "useful-group rate")):
        print(f"\n{title}")
        print(f"{'step':>4} " + " ".join(f"{name:>20}" for name in results))
        for step in range(steps):
            cells = []
            for per_seed in results.values():
                values = [getattr(r[step], field) for r in per_seed if len(r) > step]
                cells.append(fmt_ci([v for v in values if v is not None]))
            print(f"{step:>4} " + " ".join(f"{c:>20}" for c in cells))
    if "autoenv" not in results:
        return
    late = range(max(0, steps - 2), steps)  # the last two steps: one noisy benchmark draw weighs less
    print(f"\nflywheel minus baseline, benchmark score, paired by seed (mean [95% t-interval] over {n} seed(s))")
    for base in (b for b in results if b != "autoenv"):
        last = [a[-1].benchmark_score - b[-1].benchmark_score for a, b in zip(results["autoenv"], results[base])]
        tail = [
            sum(a[s].benchmark_score - b[s].benchmark_score for s in late) / len(late)
            for a, b in zip(results["autoenv"], results[base])
        ]
        steps_seen = f"{late.start}-{late.stop - 1}"
        print(f"  vs {base:<13} final step {fmt_ci(last):>22}   mean of steps {steps_seen} {fmt_ci(tail):>22}")


def task_levels(store: Store, run: str) -> dict[str, str]:
    """Each accepted task's level, as the proposer drew it (its episode's decisions)."""
    import json

    levels = {}
    for attempt in store.attempts(run):
        path = attempt.get("episode_path")
        if not attempt["task_hash"] or not path or not Path(path).is_file():
            continue
        decisions = json.loads(Path(path).read_text()).get("decisions") or []
        level = next((d["strategy"] for d in decisions if str(d.get("key", "")).startswith("level:")), None)
        if level is not None:
            levels[attempt["task_hash"]] = level
    return levels


def level_mix(store: Store, runs: list[str], steps: int) -> None:
    """What the solver trained on, per arm: useful groups by task level, and the steps that had a useful group on
    messy data (levels 2-4: the benchmark's skill). The trained proposer can only matter through these."""
    print("\nuseful solver groups by the task's level (the proposer's draw; 'other': the benchmark's or static tasks)")
    print(
        f"{'arm':>13} {'level 1':>8} {'level 2':>8} {'level 3':>8} {'level 4':>8} {'other':>6}   "
        "steps with a useful messy group"
    )
    for name in ("autoenv", "proposer-off"):
        counts = {"1": 0, "2": 0, "3": 0, "4": 0, "other": 0}
        messy_steps, arm_runs = 0, [r for r in runs if r == name or r.startswith(f"{name}-s")]
        for run in arm_runs:
            levels = task_levels(store, run)
            with_messy = set()
            for group in store.groups(run):
                if group["role"] != "solver" or not group["useful"]:
                    continue
                level = levels.get(group["task_hash"], "other")
                counts[level] += 1
                if level in ("2", "3", "4"):
                    with_messy.add(group["step"])
            messy_steps += len(with_messy)
        print(
            f"{name:>13} {counts['1']:>8} {counts['2']:>8} {counts['3']:>8} {counts['4']:>8} {counts['other']:>6}   "
            f"{messy_steps}/{steps * len(arm_runs)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--seeds", type=int, default=1, help="repeat every arm on this many seeds (0..N-1)")
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "bench-dynamics")
    parser.add_argument("--benchmark-rollouts", type=int, default=2)
    parser.add_argument("--benchmark-tasks", type=int, default=4, help="held-out tasks per seed case")
    parser.add_argument(
        "--benchmark-level", type=int, default=None, help="the benchmark's difficulty level (default: the family's)"
    )
    parser.add_argument("--method-attempts", type=int, default=4, help="attempts per proposer method (0: skip)")
    parser.add_argument("--runs", default=",".join(RUNS), help="which runs, comma-separated")
    args = parser.parse_args()
    quiet_harbor_logs()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    cases = [SeedCase.load(REPO / "examples" / "seed_cases" / f"{name}.yaml") for name in SEEDS]
    store = Store(args.out / "dynamics.db")
    print(f"machine: {machine()}")
    started = time.monotonic()
    results: dict[str, list[list]] = {name: [] for name in args.runs.split(",")}
    for seed in range(args.seeds):
        for name, reports in run_seed(args, cases, store, seed).items():
            results[name].append(reports)
    print(f"\nall arms on {args.seeds} seed(s): {(time.monotonic() - started) / 60:.1f} min")
    summarise(results, args.steps)
    level_mix(store, store.run_names(), args.steps)
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
    print(f"\nstore: {store.url}  (autoenv report --db {args.out / 'dynamics.db'} --out {args.out / 'report'})")


if __name__ == "__main__":
    main()
