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
from autoenv.families.bugfix import ladder
from autoenv.families.bugfix.reference import REFERENCE_BODIES

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.proposer.models import SeedCase

NAME = "bugfix"
DESCRIPTION = "fix a buggy helper function so a report prints the right numbers"
KEYWORDS = ("bug", "fix", "median", "debug", "function", "off-by-one", "regression", "unit test")
CATEGORY = "debugging"
TAGS = ["python", "bugfix"]

LADDER = ladder.LADDER
DEFAULT_LEVEL = 1

MODULES = ["stats_utils", "numkit", "mathlib", "calc_helpers", "metrics_core", "num_tools"]

#: The correct functions: signature and docstring here, the body the scripted solver's fix_function recipe
#: writes too (one definition of what each function must do).
SIGNATURES = {
    "median": ("values", "Median of a non-empty sequence (mean of the two middle values for even lengths)."),
    "mean": ("values", "Arithmetic mean of a non-empty sequence."),
    "factorial": ("n", "n! for a non-negative integer n."),
    "is_prime": ("n", "True when n is a prime number."),
    "gcd": ("a, b", "Greatest common divisor of two integers (never negative; gcd(0, 0) == 0)."),
}
CORRECT = {
    name: f'def {name}({params}):\n    """{doc}"""\n'
    + textwrap.indent(REFERENCE_BODIES[name].format(*params.split(", ")), "    ")
    for name, (params, doc) in SIGNATURES.items()
}

BUGGY = {
    "median": [
        (
            '''\
def median(values):
    """Median of a non-empty sequence (mean of the two middle values for even lengths)."""
    n = len(values)
    mid = n // 2
    if n % 2 == 1:
        return values[mid]
    return (values[mid] + values[mid + 1]) / 2
''',
            "indexes the unsorted input and takes the wrong pair for even lengths",
        ),
        (
            '''\
def median(values):
    """Median of a non-empty sequence (mean of the two middle values for even lengths)."""
    values.sort()
    n = len(values)
    mid = n // 2
    if n % 2 == 1:
        return values[mid]
    return values[mid]
''',
            "sorts the caller's list in place and ignores the lower middle value",
        ),
    ],
    "mean": [
        (
            '''\
def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    return sum(values) // len(values)
''',
            "integer division, and no error for empty input",
        ),
        (
            '''\
def mean(values):
    """Arithmetic mean of a non-empty sequence."""
    total = 0
    for v in values[1:]:
        total += v
    return total / (len(values) - 1)
''',
            "skips the first value",
        ),
    ],
    "factorial": [
        (
            '''\
def factorial(n):
    """n! for a non-negative integer n."""
    result = 1
    for k in range(1, n):
        result *= k
    return result
''',
            "the loop stops one short",
        ),
        (
            '''\
def factorial(n):
    """n! for a non-negative integer n."""
    if n <= 1:
        return n
    return n * factorial(n - 1)
''',
            "0! comes out as 0 and negative input is not rejected",
        ),
    ],
    "is_prime": [
        (
            '''\
def is_prime(n):
    """True when n is a prime number."""
    if n == 2:
        return True
    k = 2
    while k * k < n:
        if n % k == 0:
            return False
        k += 1
    return n > 0
''',
            "squares of primes and 1 are reported prime",
        ),
        (
            '''\
def is_prime(n):
    """True when n is a prime number."""
    for k in range(2, int(n ** 0.5)):
        if n % k == 0:
            return False
    return True
''',
            "the trial-division range stops too early and small inputs are mishandled",
        ),
    ],
    "gcd": [
        (
            '''\
def gcd(a, b):
    """Greatest common divisor of two integers (never negative; gcd(0, 0) == 0)."""
    while b:
        a, b = b, a % b
    return a
''',
            "the sign of the inputs leaks into the result",
        ),
        (
            '''\
def gcd(a, b):
    """Greatest common divisor of two integers (never negative; gcd(0, 0) == 0)."""
    if a == 0 or b == 0:
        return 0
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a
''',
            "a zero argument gives 0 instead of the other number",
        ),
    ],
}

SPEC = {
    "median": [
        "for an odd number of values it returns the middle value of the **sorted** data, and for an even number the "
        "mean of the two middle values;",
        "it accepts any sequence of numbers (lists and tuples, ints and floats, negative numbers, duplicates) in any "
        "order;",
        "it raises `ValueError` for an empty sequence and never modifies the sequence passed in.",
    ],
    "mean": [
        "it returns the arithmetic mean as a float (true division), for lists and tuples of ints and floats;",
        "every value counts, including the first one;",
        "it raises `ValueError` for an empty sequence.",
    ],
    "factorial": [
        "it returns n! for every integer n >= 0 (with 0! = 1! = 1), exactly, also for large n;",
        "it raises `ValueError` for a negative n.",
    ],
    "is_prime": [
        "it returns `True` exactly for the prime numbers (2, 3, 5, 7, 11, ...);",
        "0, 1, negative numbers and composites (including squares of primes such as 9, 25 and 49) give `False`.",
    ],
    "gcd": [
        "it returns the greatest common divisor of two integers, which is never negative;",
        "`gcd(0, n)` and `gcd(n, 0)` are `abs(n)`, `gcd(0, 0)` is 0, and negative inputs are allowed.",
    ],
}

#: Data and the driver that uses the function, per function.
DRIVERS = {
    "median": ("latencies.txt", "response times in milliseconds", "median"),
    "mean": ("scores.txt", "exam scores", "mean"),
    "factorial": ("sizes.txt", "group sizes", "arrangements"),
    "is_prime": ("ids.txt", "ticket numbers", "prime_ids"),
    "gcd": ("pairs.txt", "gear tooth counts", "gcds"),
}

TESTS = {
    "median": """\
def test_reference_cases(mod):
    for values in random_samples(random.Random(RNG_SEED)):
        assert mod.median(values) == pytest.approx(statistics.median(values)), values
    assert mod.median((7, 3, 5)) == 5
    assert mod.median([4, 1, 3, 2]) == pytest.approx(2.5)


def test_edge_cases(mod):
    with pytest.raises(ValueError):
        mod.median([])
    values = [9, 1, 8, 2, 7, 3]
    # the list as the agent's code left it, looked at in the agent's process
    assert mod.run("m.median(values); result = values", values=values) == [9, 1, 8, 2, 7, 3]


def reference(data):
    return statistics.median(data)
""",  # noqa: E501
    "mean": """\
def test_reference_cases(mod):
    for values in random_samples(random.Random(RNG_SEED)):
        assert mod.mean(values) == pytest.approx(statistics.fmean(values)), values
    assert mod.mean((1, 2)) == pytest.approx(1.5)
    assert isinstance(mod.mean([1, 2]), float)


def test_edge_cases(mod):
    with pytest.raises(ValueError):
        mod.mean([])


def reference(data):
    return statistics.fmean(data)
""",  # noqa: E501
    "factorial": """\
def test_reference_cases(mod):
    for n in range(0, 60):
        assert mod.factorial(n) == math.factorial(n), n


def test_edge_cases(mod):
    with pytest.raises(ValueError):
        mod.factorial(-1)
    with pytest.raises(ValueError):
        mod.factorial(-7)


def reference(data):
    return [math.factorial(int(v)) for v in data]
""",
    "is_prime": """\
def _prime(n):
    return n >= 2 and all(n % k for k in range(2, int(math.isqrt(n)) + 1))


def test_reference_cases(mod):
    for n in range(-20, 3000):
        assert mod.is_prime(n) == _prime(n), n


def test_edge_cases(mod):
    for n in (0, 1, 4, 9, 25, 49, 121, 169, 289, 361):
        assert mod.is_prime(n) is False, n
    for n in (2, 3, 5, 7, 11, 13, 7919):
        assert mod.is_prime(n) is True, n


def reference(data):
    return [int(v) for v in data if _prime(int(v))]
""",
    "gcd": """\
def test_reference_cases(mod):
    rng = random.Random(RNG_SEED)
    for _ in range(500):
        a, b = rng.randint(-10**6, 10**6), rng.randint(-10**6, 10**6)
        assert mod.gcd(a, b) == math.gcd(a, b), (a, b)


def test_edge_cases(mod):
    assert mod.gcd(0, 0) == 0
    assert mod.gcd(0, 12) == 12
    assert mod.gcd(-12, 0) == 12
    assert mod.gcd(-4, 6) == 2


def reference(data):
    return [math.gcd(int(a), int(b)) for a, b in data]
""",
}

# module-level helpers in each generated module (besides the target), all correct
EXTRA_HELPERS = '''\
def clamp(value, low, high):
    """Limit value to the closed interval [low, high]."""
    if low > high:
        raise ValueError("low must not exceed high")
    return max(low, min(high, value))


def frange_sum(values):
    """Sum of a sequence of numbers (0 for an empty one)."""
    total = 0
    for v in values:
        total += v
    return total
'''


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


        def random_samples(rng, count=300):
            """Lists of 1 to 40 numbers, integers or floats, the same for the same seed."""
            for _ in range(count):
                n = rng.randint(1, 40)
                if rng.random() < 0.5:
                    yield [rng.randint(-50, 50) for _ in range(n)]
                else:
                    yield [rng.uniform(-1e3, 1e3) for _ in range(n)]


        ''')
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
