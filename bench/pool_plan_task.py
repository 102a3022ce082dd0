"""Write primer-tm level 5's task (split a multiplex PCR panel into the kit's pools) at any size and density.

bench/README's "a capable model splitting a panel into pools" measured a capable model on these tasks, first as an
experiment (600 and 800 amplicons at 8.6 clashes per amplicon), then at the level's own panel (800 at 8.8). The task
is :mod:`autoenv.families.primer_tm.pools`: draw ``k`` is ``random.Random("pool-plan:k")``, so the draws measured
are the level's tasks for those streams. Check a written task with ``autoenv validate DIR``.

Run: .venv/bin/python bench/pool_plan_task.py [--tasks N] [--first K] [--amplicons N] [--degree D] [--out DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.primer_tm import pools  # noqa: E402
from autoenv.families.primer_tm.generator import NAME  # noqa: E402
from autoenv.shared.seed import SeedCase  # noqa: E402

CASE = SeedCase(id="bench", task="pool plan", failure_mode="-", target_skill="search", family=NAME)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="how many draws")
    parser.add_argument("--first", type=int, default=0, help="the first draw's number")
    parser.add_argument("--amplicons", type=int, default=pools.AMPLICONS)
    parser.add_argument("--degree", type=float, default=pools.DEGREE, help="mean number of clashes per amplicon")
    parser.add_argument("--out", type=Path, default=Path("runs/pool-plan"))
    args = parser.parse_args()
    for k in range(args.first, args.first + args.tasks):
        rng = random.Random(f"pool-plan:{k}")
        draft = pools.generate(CASE, rng, family=NAME, n=args.amplicons, degree=args.degree)
        draft.name = f"pool-plan-{k}"
        print(draft.write(args.out))


if __name__ == "__main__":
    main()
