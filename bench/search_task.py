"""Write a search level's task (a planted colouring to find) at any size and density, on named draws.

bench/README's sections on a capable model splitting a panel into pools, planning maintenance windows and
scheduling batch jobs measured a capable model on these tasks. Each level is a module of its family; draw ``k`` of
a level is ``random.Random("STREAM:k")`` (its stream below), so the draws measured are the level's tasks for those
streams. Check a written task with ``autoenv validate DIR``.

Run: .venv/bin/python bench/search_task.py LEVEL [--tasks N] [--first K] [--items N] [--degree D] [--out DIR]
  LEVEL: pools (primer-tm level 5), windows (config-repair level 7), slots (log-parse level 7)
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.config_repair import windows  # noqa: E402
from autoenv.families.log_parse import lock_slots  # noqa: E402
from autoenv.families.primer_tm import pools  # noqa: E402
from autoenv.shared.seed import SeedCase  # noqa: E402

#: level: (its module, its family, the draws' stream, how many items by default)
LEVELS: dict[str, tuple[ModuleType, str, str, int]] = {
    "pools": (pools, "primer-tm", "pool-plan", pools.AMPLICONS),
    "windows": (windows, "config-repair", "windows", windows.SERVICES),
    "slots": (lock_slots, "log-parse", "lock-slots", lock_slots.JOBS),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level", choices=sorted(LEVELS))
    parser.add_argument("--tasks", type=int, default=3, help="how many draws")
    parser.add_argument("--first", type=int, default=0, help="the first draw's number")
    parser.add_argument("--items", type=int, help="how many items (amplicons, services, jobs); default: the level's")
    parser.add_argument("--degree", type=float, help="mean number of clashes per item; default: the level's")
    parser.add_argument("--out", type=Path, help="default: runs/STREAM")
    args = parser.parse_args()
    module, family, stream, items = LEVELS[args.level]
    case = SeedCase(id="bench", task=args.level, failure_mode="-", target_skill="search", family=family)
    for k in range(args.first, args.first + args.tasks):
        extra = {"degree": args.degree} if args.degree is not None else {}
        draft = module.generate(case, random.Random(f"{stream}:{k}"), family=family, n=args.items or items, **extra)
        draft.name = f"{stream}-{k}"
        print(draft.write(args.out or Path("runs") / stream))


if __name__ == "__main__":
    main()
