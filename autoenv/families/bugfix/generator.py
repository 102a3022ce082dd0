"""Buggy-function family: a small helper module with one realistic bug to fix.

The bug is one a person really writes (median of unsorted data, integer
division in a mean, an off-by-one range in factorial, a primality loop that
stops one short, a gcd that leaks the sign). The tests compare the function
with a reference on hundreds of inputs and check that the report script that
uses it now prints the right numbers, so a patch that special-cases the shipped
data does not pass.
"""

from __future__ import annotations

import random
import textwrap
from typing import TYPE_CHECKING

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.bugfix import ladder, level5
from autoenv.families.bugfix.sources import BUGGY, CORRECT, DRIVERS, EXTRA_HELPERS, MODULES, RANDOM_SAMPLES, SPEC, TESTS
from autoenv.families.levels import load_ladder

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "bugfix"
DESCRIPTION = "fix a buggy helper function so a report prints the right numbers"
KEYWORDS = ("bug", "fix", "median", "debug", "function", "off-by-one", "regression", "unit test")
CATEGORY = "debugging"
TAGS = ["python", "bugfix"]

LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file


def _data(func: str, rng: random.Random) -> tuple[str, list]:
    if func in ("median", "mean"):
        n = rng.randint(15, 41)
        values = [round(rng.lognormvariate(3.6, 0.45), 1) for _ in range(n)]
        return "\n".join(f"{v}" for v in values) + "\n", values
    if func == "factorial":
        values = [rng.randint(0, 12) for _ in range(rng.randint(6, 12))]
        return "\n".join(str(v) for v in values) + "\n", values
    if func == "is_prime":
        values = sorted(rng.sample(range(2, 5000), rng.randint(25, 50)))
        values += [p * p for p in rng.sample([3, 5, 7, 11, 13, 17, 19, 23, 29, 31], 3)]
        rng.shuffle(values)
        return "\n".join(str(v) for v in values) + "\n", values
    pairs = [(rng.randint(-900, 900), rng.randint(-900, 900)) for _ in range(rng.randint(8, 16))]
    pairs.append((0, rng.randint(1, 90)))
    return "\n".join(f"{a} {b}" for a, b in pairs) + "\n", pairs


def _driver(func: str, module: str, data_file: str, what: str, label: str) -> str:
    body = {
        "median": f'    print(f"{label}: {{{module}.median(values):.3f}}")',
        "mean": f'    print(f"{label}: {{{module}.mean(values):.3f}}")',
        "factorial": f'    print("{label}: " + " ".join(str({module}.factorial(int(v))) for v in values))',
        "is_prime": f'    print("{label}: " + " ".join(str(int(v)) for v in values if {module}.is_prime(int(v))))',
        "gcd": f'    print("{label}: " + " ".join(str({module}.gcd(a, b)) for a, b in values))',
    }[func]
    reader = (
        "        values = [tuple(int(x) for x in line.split()) for line in fh if line.strip()]"
        if func == "gcd"
        else "        values = [float(line) for line in fh if line.strip()]"
    )
    return (
        textwrap.dedent(f'''\
        """Summarises the {what} in {data_file} (run from /app)."""

        import sys

        import {module}


        def main(path="{data_file}"):
            with open(path) as fh:
        ''')
        + reader
        + "\n"
        + body
        + '\n\n\nif __name__ == "__main__":\n    main(*sys.argv[1:])\n'
    )


def patch_function(module: str, func: str) -> str:
    """The reference solution's step that puts the correct ``func`` into ``/app/<module>.py``."""
    return textwrap.dedent(f'''\
        python3 - <<'PY'
        import ast
        from pathlib import Path

        path = Path("/app/{module}.py")
        source = path.read_text()
        tree = ast.parse(source)
        node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "{func}")
        lines = source.splitlines(keepends=True)
        fixed = {CORRECT[func]!r}
        lines[node.lineno - 1:node.end_lineno] = [fixed]
        path.write_text("".join(lines))
        PY
        ''')


def expected_line(func: str, label: str, data: list) -> str:
    """The line the fixed report prints for ``func`` on ``data``."""
    fixed: dict = {}
    exec(CORRECT[func], fixed)  # noqa: S102 - our own reference code
    f = fixed[func]
    if func in ("median", "mean"):
        return f"{label}: {f(data):.3f}"
    if func == "factorial":
        return f"{label}: " + " ".join(str(f(int(v))) for v in data)
    if func == "is_prime":
        return f"{label}: " + " ".join(str(int(v)) for v in data if f(int(v)))
    return f"{label}: " + " ".join(str(f(a, b)) for a, b in data)


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A bugfix task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 5:
        import sys

        return level5.generate(case, rng, sys.modules[__name__])
    if level >= 2:
        import sys

        return ladder.generate_multi(case, rng, level, sys.modules[__name__])
    hinted = [f for f in CORRECT if f in (case.target_skill + " " + case.failure_mode + " " + case.task).lower()]
    func = hinted[0] if hinted and rng.random() < 0.6 else rng.choice(sorted(CORRECT))
    module = rng.choice(MODULES)
    buggy, bug_desc = rng.choice(BUGGY[func])
    others = [f for f in sorted(CORRECT) if f != func]
    rng.shuffle(others)
    helpers = [buggy if f == func else CORRECT[f] for f in sorted(others[:2] + [func])]
    source = (
        '"""Small numeric helpers shared by the reporting jobs."""\n\nimport math  # noqa: F401\n\n\n'
        + "\n\n".join(helpers)
        + "\n\n"
        + EXTRA_HELPERS
    )
    data_file, what, label = DRIVERS[func]
    data_text, data = _data(func, rng)
    driver = _driver(func, module, data_file, what, label)
    # reference result of the driver, for the end-to-end test
    fixed = {}
    exec(CORRECT[func], fixed)  # noqa: S102 - our own reference code
    f = fixed[func]
    if func in ("median", "mean"):
        expected_line = f"{label}: {f(data):.3f}"
    elif func == "factorial":
        expected_line = f"{label}: " + " ".join(str(f(int(v))) for v in data)
    elif func == "is_prime":
        expected_line = f"{label}: " + " ".join(str(int(v)) for v in data if f(int(v)))
    else:
        expected_line = f"{label}: " + " ".join(str(f(a, b)) for a, b in data)

    instruction = (
        textwrap.dedent(f"""\
        # Fix `{func}` in the helper module

        The job `/app/report.py` (run it with `cd /app && python3 report.py`) reads
        `/app/{data_file}` ({what}) and prints a `{label}` line computed with the
        helper `{func}` from `/app/{module}.py`. That line is wrong, because `{func}`
        is buggy.

        Fix `{func}` in `/app/{module}.py` so that:

        """)
        + "\n".join(f"- {s}" for s in SPEC[func])
        + textwrap.dedent(f"""

        Keep the module name, the function names and their signatures unchanged
        (other code imports them), keep the other helpers working, and do not
        edit `/app/report.py` or `/app/{data_file}`.
        """)
    )
    tests = (
        textwrap.dedent(f'''\
        import math
        import random
        import statistics

        import pytest
        from agentcall import agent_module, run_agent  # the agent's code runs as nobody, never in this process

        RNG_SEED = {rng.randint(1, 10**6)}
        EXPECTED_LINE = {expected_line!r}


        @pytest.fixture()
        def mod():
            return agent_module("{module}")  # a fresh import, in a process of its own


        ''')
        + RANDOM_SAMPLES
        + "\n\n"
        + TESTS[func]
        + textwrap.dedent("""\


        def test_other_helpers_still_work(mod):
            assert mod.clamp(5, 0, 3) == 3
            assert mod.frange_sum([1, 2, 3.5]) == pytest.approx(6.5)


        def test_report_prints_fixed_line():
            out = run_agent(["python3", "report.py"], cwd="/app", text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout.strip() == EXPECTED_LINE
        """)
    )
    patch = "cd /app\n" + patch_function(module, func) + "python3 report.py\n"
    name = task_name("bugfix", rng, func)
    app = {f"{module}.py": source, "report.py": driver, f"{data_file}": data_text}
    files = task_files(
        case, NAME, CATEGORY, [*TAGS, func], instruction, solve_sh(patch), tests, app=app, difficulty="easy"
    )
    params = {
        "function": func,
        "module": module,
        "bug": bug_desc,
        "n_data": len(data),
        "leak_hint": None,
        "stale_output": None,
    }
    if func in ("median", "mean"):
        value = float(f"{f(data):.3f}")
        params["leak_hint"] = f"`{label}: {value:.3f}`"
    return TaskDraft(name=name, family="bugfix", files=files, params=params)
