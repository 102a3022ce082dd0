"""Three archive levels as one task: retire `logsum`, `grpstat` and `cfgnorm` together (an experiment, not a level).

bench/README's "three times the work, one task" measured a capable model on these: does work that outgrows the
turn budget make the archive levels hard? Each task puts the same draw's log-parse 6, csv-stat 7 and
config-repair 6 into one image (three archives, three samples), their three test files behind one
``test_outputs.py`` and their three reference solutions in one ``solve.sh``; the task passes only if all three
replacements are right. Check a written task with ``autoenv trial DIR`` (the oracle passes) and
``autoenv trial DIR --agent nop`` (it fails).

Run: .venv/bin/python bench/toolbox_task.py [--tasks N] [--out DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.families.base import dockerfile, pytest_test_sh, solve_sh, write_files  # noqa: E402
from autoenv.families.registry import FAMILIES  # noqa: E402
from autoenv.proposer.models import SeedCase  # noqa: E402

PARTS = (("log-parse", 6, "logsum"), ("csv-stat", 7, "grpstat"), ("config-repair", 6, "cfgnorm"))
HEAD = '"""The three replacements, each on its tool\'s hidden inputs."""\n'
INTRO = """\
# Retire the operations team's three legacy tools

Three C tools from the early 2000s are being retired together: `logsum` (log reports), `grpstat` (CSV extract
reports) and `cfgnorm` (the launcher's config reader). Each is described below, and each needs its Python
replacement; the task passes only if all three replacements are right.

"""


def toolbox(seed: str, out: Path) -> Path:
    """The composed task of draw ``seed`` in ``out`` (replaced if it exists)."""
    shutil.rmtree(out, ignore_errors=True)
    files: dict[str, str | bytes] = {}
    copies, bodies, solves, imports, support = [], [], [], [], set()
    toml = ""
    for family, level, tool in PARTS:
        case = SeedCase(id="bench", task="bench", failure_mode="bench", target_skill="bench", family=family)
        draft = FAMILIES[family].draft(case, random.Random(seed), level=level)
        for rel, content in draft.files.items():
            if rel.startswith("environment/app/"):
                files[rel] = content
            elif rel.startswith("environment/archive/"):
                files[rel.replace("environment/archive/", f"environment/archive-{tool}/")] = content
            elif rel == "tests/test_outputs.py":
                files[f"tests/test_{tool}.py"] = content
            elif rel.startswith("tests/") and rel != "tests/test.sh":
                files[rel] = content
                if rel != "tests/agentcall.py":
                    support.add(rel.removeprefix("tests/"))
        copies.append(f"COPY archive-{tool} /srv/{tool}-archive\n")
        bodies.append(str(draft.files["instruction.md"]).replace(f"# Retire the legacy `{tool}`", f"## `{tool}`", 1))
        solves.append(str(draft.files["solution/solve.sh"]).split("set -euo pipefail\n", 1)[1])
        imports.append(f"from test_{tool} import test_same_output_as_the_legacy_tool as test_{tool}_output  # noqa")
        toml = toml or str(draft.files["task.toml"])
    imports.append("from test_logsum import test_no_executable_binary_is_left_in_app  # noqa")
    tests = sorted(support) + [f"test_{tool}.py" for _, _, tool in PARTS]
    files.update({
        "instruction.md": INTRO + "\n".join(bodies),
        "task.toml": toml.replace("timeout_sec = 300.0\nenvironment_mode", "timeout_sec = 900.0\nenvironment_mode"),
        "environment/Dockerfile": dockerfile() + "".join(copies),
        "solution/solve.sh": solve_sh("\n".join(solves)),
        "tests/test.sh": pytest_test_sh(*tests),
        "tests/test_outputs.py": HEAD + "\n".join(imports) + "\n",
    })  # fmt: skip
    write_files(out, files, executable={"solution/solve.sh", "tests/test.sh"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="draws measure:0 .. measure:N-1")
    parser.add_argument("--out", type=Path, default=Path("toolbox-tasks"))
    args = parser.parse_args()
    for n in range(args.tasks):
        print(toolbox(f"measure:{n}", args.out / f"toolbox-{n}"))


if __name__ == "__main__":
    main()
