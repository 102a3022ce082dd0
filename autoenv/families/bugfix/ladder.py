"""bugfix above level 1: several buggy helpers across modules, found from the report rather than named.

Level 2 breaks two functions of one module and names the module, not the functions; level 3 puts each broken
function in a module of its own and names neither; level 4 breaks three, spread over three modules, and leaves a
red herring: the last run's log blames a helper that is correct. The tests check every broken function against
its reference on many inputs, the correct helpers unchanged, and the report's lines end to end.
"""

from __future__ import annotations

import random
import textwrap
from typing import Any

from autoenv.families.base import solve_sh, task_files, task_name

#: Buggy functions and modules per level.
SHAPE = {2: (2, 1), 3: (2, 2), 4: (3, 3)}


def _tests_for(func: str, TESTS: dict[str, str]) -> str:
    """The family's tests of ``func``, renamed so several functions' tests live in one file."""
    text = TESTS[func]
    text = text.replace("(mod)", f"(mod_{func})").replace("mod.", f"mod_{func}.")
    text = text.replace("def test_", f"def test_{func}_").replace("def reference(", f"def reference_{func}(")
    return text


def generate_multi(case: Any, rng: random.Random, level: int, family: Any) -> Any:
    """A task of ``level`` >= 2 (``family``: the generator module, for its functions, tests and drivers)."""
    g = family
    n_funcs, n_modules = SHAPE[level]
    funcs = sorted(rng.sample(sorted(g.CORRECT), n_funcs))
    modules = rng.sample(g.MODULES, n_modules)
    home = {f: modules[i % n_modules] for i, f in enumerate(funcs)}
    sources: dict[str, list[str]] = {m: [] for m in modules}
    bugs = {}
    for f in funcs:
        buggy, bugs[f] = rng.choice(g.BUGGY[f])
        sources[home[f]].append(buggy)
    spare = [f for f in sorted(g.CORRECT) if f not in funcs]
    for m in modules:  # every module also holds a correct function or two
        sources[m].append(g.CORRECT[rng.choice(spare)] if spare else "")
    app: dict[str, str] = {}
    for m in modules:
        body = "\n\n".join(s for s in sorted(sources[m]) if s)
        app[f"{m}.py"] = '"""Numeric helpers of the reporting jobs."""\n\nimport math  # noqa: F401\n\n\n' + body
        app[f"{m}.py"] += "\n\n" + g.EXTRA_HELPERS
    lines, expected = [], []
    for f in funcs:
        data_file, what, label = g.DRIVERS[f]
        text, data = g._data(f, rng)
        app[data_file] = text
        lines.append((f, data_file, label))
        expected.append(g.expected_line(f, label, data))
    app["report.py"] = _report(lines, home)
    if level >= 4:
        innocent = modules[0]
        app["last_run.log"] = textwrap.dedent(f"""\
            2024-05-02T06:00:01Z report.py started
            Traceback (most recent call last):
              File "/app/report.py", line 12, in <module>
                main()
              File "/app/{innocent}.py", line 40, in clamp
                raise ValueError("low must not exceed high")
            ValueError: low must not exceed high
            2024-05-02T06:00:01Z report.py exited 1 (the numbers it printed before were wrong as well)
            """)
    where = f"`/app/{modules[0]}.py`" if n_modules == 1 else "the helper modules it imports from `/app`"
    instruction = textwrap.dedent(f"""\
        # The report prints wrong numbers

        The job `/app/report.py` (run it with `cd /app && python3 report.py`) reads data files from `/app`
        and prints one line per statistic, computed with helpers from {where}. Several of those lines
        are wrong: some helpers are buggy. Find every buggy helper and fix it, so that each helper does
        what its docstring says for every input (not only the shipped data): true division, sorted data
        for a median, `ValueError` for empty or negative input where the docstring rules it out, a result
        that is never negative where it says so.

        Keep the module names, the function names and their signatures unchanged (other code imports
        them), keep the correct helpers working, and do not edit `/app/report.py` or the data files.
        """)
    if level >= 4:
        instruction += "\n`/app/last_run.log` is the log of the job's last run.\n"
    fixtures = "".join(
        f'\n\n@pytest.fixture()\ndef mod_{f}():\n    return agent_module("{home[f]}")  # a fresh import, as nobody\n'
        for f in funcs
    )
    tests = (
        textwrap.dedent(f"""\
        import math
        import random
        import statistics

        import pytest
        from agentcall import agent_module, run_agent  # the agent's code runs as nobody, never in this process

        RNG_SEED = {rng.randint(1, 10**6)}
        EXPECTED_LINES = {expected!r}
        MODULES = {modules!r}


        """)
        + g.RANDOM_SAMPLES
        + fixtures
        + "".join("\n\n" + _tests_for(f, g.TESTS) for f in funcs)
        + textwrap.dedent("""\


        @pytest.mark.parametrize("module", MODULES)
        def test_other_helpers_still_work(module):
            mod = agent_module(module)
            assert mod.clamp(5, 0, 3) == 3
            assert mod.frange_sum([1, 2, 3.5]) == pytest.approx(6.5)


        def test_report_prints_fixed_lines():
            out = run_agent(["python3", "report.py"], cwd="/app", text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            assert out.stdout.strip().splitlines() == EXPECTED_LINES
        """)
    )
    patch = "cd /app\n" + "".join(g.patch_function(home[f], f) for f in funcs) + "python3 report.py\n"
    name = task_name("bugfix", rng, "-".join(funcs))
    files = task_files(case, g.NAME, g.CATEGORY, [*g.TAGS, *funcs], instruction, solve_sh(patch), tests, app=app)
    params = {"functions": funcs, "modules": modules, "bugs": bugs, "leak_hint": None, "stale_output": None}
    from autoenv.families.base import TaskDraft

    return TaskDraft(name=name, family="bugfix", files=files, params=params)


def _report(lines: list[tuple[str, str, str]], home: dict[str, str]) -> str:
    """report.py: one line per function, each from its data file."""
    imports = "".join(f"import {m}\n" for m in sorted(set(home.values())))
    body = []
    for f, data_file, label in lines:
        m = home[f]
        read = (
            f'    pairs = [tuple(int(x) for x in line.split()) for line in open("{data_file}") if line.strip()]\n'
            if f == "gcd"
            else f'    values = [float(line) for line in open("{data_file}") if line.strip()]\n'
        )
        show = {
            "median": f'    print(f"{label}: {{{m}.median(values):.3f}}")',
            "mean": f'    print(f"{label}: {{{m}.mean(values):.3f}}")',
            "factorial": f'    print("{label}: " + " ".join(str({m}.factorial(int(v))) for v in values))',
            "is_prime": f'    print("{label}: " + " ".join(str(int(v)) for v in values if {m}.is_prime(int(v))))',
            "gcd": f'    print("{label}: " + " ".join(str({m}.gcd(a, b)) for a, b in pairs))',
        }[f]
        body.append(read + show + "\n")
    return (
        '"""Prints the statistics of the data files in /app (run from /app)."""\n\n'
        + imports
        + "\n\ndef main():\n"
        + "".join(body)
        + '\n\nif __name__ == "__main__":\n    main()\n'
    )
