"""Why the flywheel does not beat the no-proposer-training baseline offline: a model of the learned-table loop.

``bench/flywheel_dynamics.py`` runs the real loop (real tasks, sandboxes, validation, calibration, rollouts) and
takes about 4 minutes per arm and seed. This script replays the same loop on the learned policy's tables alone,
thousands of seeds a minute, with the loop's own pieces where they decide something: the table's softmax and
draws (``autoenv.agents.policies.learned``), GRPO's group advantages (``autoenv.train.grpo``), the ``table``
trainer's update (``autoenv.train.table.policy_gradient_step``) and r_P's constants (``autoenv.validate.reward``).
What it leaves out is replaced by what the real runs measured:

- a rollout passes iff the drawn strategy passes on the task's level: ``solve`` always, ``naive`` on clean data
  (level 1) only, ``rush`` and ``give_up`` never (what the csv-stat recipes do in the real sandboxes);
- a careful first draft is valid, a careless one valid with probability ``careless_valid`` (0.28: the real
  proposer-off runs were valid 77/120 = 0.64 with care drawn 50/50);
- the solver's decision key is the recipe's difficulty: ``clean`` for level 1, ``messy`` for levels 2 and 3.

It is a model, not a measurement: it is checked against the real 5-seed run (the ``measured`` row of the sweep
reproduces bench/README.md's curves within their intervals) and then asks what the last stop proposed, without
an hour of machine per question: a benchmark at the hardest level with more rollouts, an r_P that counts what
the solver fails, a faster-learning proposer, more proposals, an untrained proposer that writes easy tasks, and
a separate skill per level. For each it prints the flywheel minus proposer-off at the final step (mean and 95%
interval over the simulated seeds) and how much of the solver's training was on the benchmark's skill.

Run: .venv/bin/python bench/flywheel_model.py [--seeds 400] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.agents.policies.learned import NAIVE, STRATEGIES, PolicyTable, draw  # noqa: E402
from autoenv.proposer.scripted import DRAFT_CHOICES, FIRST_DRAFT  # noqa: E402
from autoenv.train.grpo import group_advantages  # noqa: E402
from autoenv.train.table import policy_gradient_step  # noqa: E402
from autoenv.validate.reward import ACCEPTED_REWARD, SHAPING, VALID_REWARD  # noqa: E402
from autoenv.validate.stats import mean_interval  # noqa: E402
from bench._common import machine  # noqa: E402

LEVELS = ("1", "2", "3")
LEVEL_KEY = "level:csv-stat"
SOLVER_OPTIONS = (*STRATEGIES, NAIVE)
ARMS = ("autoenv", "static", "proposer-off")


@dataclass(frozen=True)
class Setup:
    """One configuration of the loop; the defaults are bench/flywheel_dynamics.py's."""

    steps: int = 6
    proposals: int = 4
    tasks_per_step: int = 3
    group_size: int = 4
    calibration_rollouts: int = 4
    benchmark_level: int = 2
    benchmark_rollouts: int = 8  # 4 tasks x 2 rollouts: every task of a level is the same to the table
    lr: float = 2.0
    proposer_weight: float = 1.0
    careless_valid: float = 0.28
    #: r_P of an accepted task: "calibrated" (1, as autoenv's r_P) or "failures" (0.5 + 0.5 x the share the
    #: solver failed: an accepted task the solver fails more is worth more; still above any rejected task)
    reward: str = "calibrated"
    #: the untrained proposer's logits per level (empty: uniform, as autoenv's untrained table)
    level_prior: dict[str, float] = field(default_factory=dict)
    #: the solver's skill per level; by default levels 2 and 3 are one skill (the recipe's "messy")
    skills: dict[int, str] = field(default_factory=lambda: {1: "clean", 2: "messy", 3: "messy"})


VARIANTS: dict[str, Setup] = {
    "measured": Setup(),
    "hardest benchmark x16": Setup(benchmark_level=3, benchmark_rollouts=16),
    "r_P counts failures": Setup(reward="failures"),
    "both": Setup(benchmark_level=3, benchmark_rollouts=16, reward="failures"),
    "proposer lr x3": Setup(proposer_weight=3.0, reward="failures"),
    "8 proposals a step": Setup(proposals=8, reward="failures"),
    "easy-task prior": Setup(level_prior={"1": 2.0}, reward="failures"),
    "a skill per level": Setup(
        benchmark_level=3, benchmark_rollouts=16, reward="failures", skills={1: "clean", 2: "messy", 3: "hard"}
    ),
    "a skill per level, 10 steps": Setup(
        steps=10,
        benchmark_level=3,
        benchmark_rollouts=16,
        reward="failures",
        skills={1: "clean", 2: "messy", 3: "hard"},
    ),
}


def proposer_reward(setup: Setup, valid: bool, passes: int, n: int) -> float:
    """r_P as autoenv.validate.reward computes it (calibration band 0 < p < 1), or the ``failures`` variant."""
    if not valid:
        return 0.0
    p = passes / n
    if not 0 < passes < n:
        return VALID_REWARD + SHAPING * 4.0 * p * (1.0 - p)
    return ACCEPTED_REWARD if setup.reward == "calibrated" else 0.5 + 0.5 * (1.0 - p)


class Loop:
    """One arm on one seed: the tables, the pool of accepted tasks (their levels), the step's draws."""

    def __init__(self, setup: Setup, arm: str, rng: random.Random):
        self.setup, self.arm, self.rng = setup, arm, rng
        self.table = PolicyTable(proposer={LEVEL_KEY: dict(setup.level_prior)} if setup.level_prior else {})
        self.pool: list[int] = []  # accepted tasks' levels, newest first

    def rollout(self, level: int) -> tuple[float, dict]:
        key = self.setup.skills[level]
        probs = self.table.probs("solver", key, SOLVER_OPTIONS)
        strategy = draw(probs, self.rng)
        passed = strategy == "solve" or (strategy == NAIVE and level == 1)
        return float(passed), {"role": "solver", "key": key, "strategy": strategy, "probs": probs}

    def propose(self) -> list[tuple[float, list[dict]]]:
        attempts = []
        for _ in range(self.setup.proposals):
            care_probs = self.table.probs("proposer", FIRST_DRAFT, DRAFT_CHOICES)
            level_probs = self.table.probs("proposer", LEVEL_KEY, LEVELS)
            care, level = draw(care_probs, self.rng), draw(level_probs, self.rng)
            valid = care == "careful" or self.rng.random() < self.setup.careless_valid
            n = self.setup.calibration_rollouts
            passes = int(sum(self.rollout(int(level))[0] for _ in range(n))) if valid else 0
            if valid and 0 < passes < n:
                self.pool.insert(0, int(level))
            decisions = [
                {"role": "proposer", "key": FIRST_DRAFT, "strategy": care, "probs": care_probs},
                {"role": "proposer", "key": LEVEL_KEY, "strategy": level, "probs": level_probs},
            ]
            attempts.append((proposer_reward(self.setup, valid, passes, n), decisions))
        return attempts

    def tasks(self, step: int) -> list[int]:
        k = self.setup.tasks_per_step
        if self.arm == "static":
            return [1] * k  # the static set: clean tasks, cycled
        if self.pool:
            return self.pool[:k]
        return [self.setup.benchmark_level] * k  # before any acceptance: the benchmark's own tasks

    def step(self, step: int) -> tuple[float, float]:
        attempts = self.propose() if self.arm != "static" else []
        draws, on_skill, useful = [], 0, 0
        tasks = self.tasks(step)
        for level in tasks:
            group = [self.rollout(level) for _ in range(self.setup.group_size)]
            advantages = group_advantages([r for r, _ in group])
            if any(advantages):
                useful += 1
                on_skill += self.setup.skills[level] == self.setup.skills[self.setup.benchmark_level]
            draws += [(a, "solver", [d]) for a, (_, d) in zip(advantages, group) if a]
        if self.arm == "autoenv" and attempts:
            advantages = group_advantages([r for r, _ in attempts])
            draws += [(a, "proposer", ds) for a, (_, ds) in zip(advantages, attempts) if a]
        policy_gradient_step(self.table, draws, lr=self.setup.lr, proposer_weight=self.setup.proposer_weight)
        score = statistics.fmean(
            self.rollout(self.setup.benchmark_level)[0] for _ in range(self.setup.benchmark_rollouts)
        )
        return score, on_skill / len(tasks)


def run(setup: Setup, seeds: int) -> dict[str, list[tuple[list[float], list[float]]]]:
    """Every arm on ``seeds`` seeds: per arm and seed, the benchmark per step and the on-skill share per step."""
    results: dict[str, list] = {}
    for arm in ARMS:
        per_seed = []
        for seed in range(seeds):
            loop = Loop(setup, arm, random.Random(f"{arm}:{seed}"))
            steps = [loop.step(s) for s in range(setup.steps)]
            per_seed.append(([b for b, _ in steps], [o for _, o in steps]))
        results[arm] = per_seed
    return results


def fmt(values: list[float]) -> str:
    mean, low, high = mean_interval(values)
    return f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=400, help="simulated seeds per arm and variant")
    parser.add_argument("--only", default="", help="variant names, comma-separated (default: all)")
    args = parser.parse_args()
    names = [n for n in VARIANTS if not args.only or n in args.only.split(",")]
    print(f"machine: {machine()}; {args.seeds} simulated seeds per arm and variant")
    started = time.monotonic()
    for name in names:
        setup = VARIANTS[name]
        results = run(setup, args.seeds)
        last = setup.steps - 1
        print(f"\n== {name}: {setup.steps} steps, benchmark level {setup.benchmark_level}, r_P {setup.reward}")
        print(f"{'step':>4} " + " ".join(f"{arm:>13}" for arm in ARMS) + "   (mean benchmark score)")
        for step in range(setup.steps):
            means = [statistics.fmean(b[step] for b, _ in results[arm]) for arm in ARMS]
            print(f"{step:>4} " + " ".join(f"{m:>13.2f}" for m in means))
        diff = [a[0][last] - b[0][last] for a, b in zip(results["autoenv"], results["proposer-off"])]
        static = [a[0][last] - b[0][last] for a, b in zip(results["autoenv"], results["static"])]
        share = {
            arm: statistics.fmean(statistics.fmean(o) for _, o in results[arm]) for arm in ("autoenv", "proposer-off")
        }
        print(
            f"final step, flywheel minus proposer-off {fmt(diff)}, minus static {fmt(static)}; useful groups on the "
            f"benchmark's skill per task: flywheel {share['autoenv']:.2f}, proposer-off {share['proposer-off']:.2f}"
        )
    print(f"\n{len(names)} variant(s) in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
