"""``python -m autoenv.families.office``: write office/web task variants or the bundled tasks.

python -m autoenv.families.office generate FAMILY OUT_DIR [--seed N]
python -m autoenv.families.office bundled [--root examples/tasks]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autoenv.families.office.bundled import BUNDLED, generate, office_families, write_bundled

REPO_TASKS = Path(__file__).resolve().parents[3] / "examples" / "tasks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autoenv.families.office", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="write one task of a family")
    g.add_argument("family", choices=sorted(office_families()))
    g.add_argument("out", type=Path)
    g.add_argument("--seed", type=int, default=0)
    b = sub.add_parser("bundled", help=f"rewrite the bundled tasks ({', '.join(BUNDLED)})")
    b.add_argument("--root", type=Path, default=REPO_TASKS)
    args = parser.parse_args(argv)
    if args.command == "generate":
        print(generate(args.family, args.out, seed=args.seed))
    else:
        for path in write_bundled(args.root):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
