"""The bugfix family's reference solution: the correct body of each function its tasks break.

The family's generator writes ``solution/solve.sh`` from these; the offline solver's fix-a-function recipe
(:mod:`autoenv.agents.policies.recipes`) knows the same bodies, as an engineer who has fixed such bugs before
would. The family owns them; the solver looks them up.
"""

from __future__ import annotations

#: Reference bodies, keyed by function name; ``{0}``, ``{1}`` are the original parameter names.
REFERENCE_BODIES: dict[str, str] = {
    "median": """\
data = sorted({0})
n = len(data)
if n == 0:
    raise ValueError("median() of empty data")
mid = n // 2
if n % 2 == 1:
    return data[mid]
return (data[mid - 1] + data[mid]) / 2
""",
    "mean": """\
data = list({0})
if not data:
    raise ValueError("mean() of empty data")
return sum(data) / len(data)
""",
    "factorial": """\
if {0} < 0:
    raise ValueError("factorial() not defined for negative values")
result = 1
for k in range(2, {0} + 1):
    result *= k
return result
""",
    "is_prime": """\
if {0} < 2:
    return False
if {0} % 2 == 0:
    return {0} == 2
k = 3
while k * k <= {0}:
    if {0} % k == 0:
        return False
    k += 2
return True
""",
    "gcd": """\
a, b = abs({0}), abs({1})
while b:
    a, b = b, a % b
return a
""",
}

#: Runs inside the sandbox: replace a function's body (keeping its signature and docstring).
