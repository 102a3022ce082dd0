"""A solver's pass rate on every level of laddered families: one task a level, K rollouts, real sandboxes.

bench/README's level tables come from it: the scripted solver (``terminal:policy=scripted,success_rate=1.0``)
shows that every level is within a recipe's reach; the untrained learned solver (``terminal:policy=learned``)
shows its strategies' share of passes, level by level. The tasks are ``random.Random("measure:N")``'s draws, the
ones the capable-model tables were measured on.

Run: .venv/bin/python bench/solver_by_level.py [--solver SPEC] [--rollouts K] [--tasks N] [--levels 5,6]
     [--out DIR] FAMILY...
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.registry import FAMILIES  # noqa: E402
from autoenv.proposer.models import SeedCase  # noqa: E402
from autoenv.validate.calibration import CalibrationSettings, calibrate  # noqa: E402
from bench._common import machine  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("families", nargs="+", choices=sorted(name for name in FAMILIES if FAMILIES[name].levels))
    parser.add_argument("--solver", default="terminal:policy=learned", help="a solver spec, as calibration takes")
    parser.add_argument("--rollouts", type=int, default=8, help="rollouts per task")
    parser.add_argument("--tasks", type=int, default=1, help="tasks per level (measure:0, measure:1, ...)")
    parser.add_argument("--levels", default="", help="only these levels (comma-separated); default every level")
    parser.add_argument("--out", type=Path, default=None, help="where tasks and trials go (default: a temp dir)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="autoenv-levels-"))
    wanted = {int(n) for n in args.levels.split(",") if n}
    print(f"{machine()}; solver {args.solver}; {args.tasks} task(s) x {args.rollouts} rollouts a level; in {out}")
    for name in args.families:
        family = FAMILIES[name]
        case = SeedCase(id="bench", task="bench", failure_mode="bench", target_skill="bench", family=name)
        cells = []
        for level in family.levels:
            if wanted and level not in wanted:
                continue
            passes = runs = 0
            turns: list[float] = []
            started = time.monotonic()
            for n in range(args.tasks):
                task = family.draft(case, random.Random(f"measure:{n}"), level=level).write(out / "tasks" / name)
                settings = CalibrationSettings(solver=args.solver, rollouts=args.rollouts)
                report = calibrate(task, settings, trials_dir=out / "trials" / f"{name}-{level}-{n}")
                passes, runs = passes + report.passes, runs + report.n
                turns += [report.mean_turns] if report.mean_turns is not None else []
            mean = f"{sum(turns) / len(turns):.1f}" if turns else "-"
            print(f"{name} level {level}: {passes}/{runs} passed, {mean} turns, {time.monotonic() - started:.0f} s")
            cells.append(f"{passes}/{runs}")
        print(f"| `{name}` | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
