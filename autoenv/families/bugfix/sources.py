"""What a bugfix task ships, per function: the correct and the buggy source, the spec, the report driver and the
hidden tests (data, not code this package runs; ``generator.py`` assembles a task from them)."""

from __future__ import annotations

import textwrap

from autoenv.families.bugfix.reference import REFERENCE_BODIES

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

#: The tests' generator of random inputs, in every level's tests (one text: each level draws the same samples).
RANDOM_SAMPLES = '''\
def random_samples(rng, count=300):
    """Lists of 1 to 40 numbers, integers or floats, the same for the same seed."""
    for _ in range(count):
        n = rng.randint(1, 40)
        if rng.random() < 0.5:
            yield [rng.randint(-50, 50) for _ in range(n)]
        else:
            yield [rng.uniform(-1e3, 1e3) for _ in range(n)]
'''

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
