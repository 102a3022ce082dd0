"""csv-stat's number rule and statistics, written once: ``files/solver_program.py`` holds them, the rest read them.

Four places need the same definitions: the scripted solver's program (``files/solver_program.py``, a real file that
runs as it is), the reference solution of levels 1-3 (:mod:`autoenv.families.csv_stat.generator`), level 4's
reference program (:mod:`autoenv.families.csv_stat.ladder`) and the generator's own expected answers. They were four
copies that could drift apart (an answer computed one way, a reference solution shipping another). Now the solver's
file is the one source: the reference solutions embed its ``number`` function and its statistics' branches as text,
and the generator computes the expected answers by running that same text.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Callable
from typing import Any

from autoenv.families.solver import program_part


@functools.cache
def number_function() -> str:
    """``def number(text)``: a finite float, or None for anything else (empty, "n/a", nan, inf)."""
    return program_part(__file__, "def number(text):\n", "\ndef stat(xs):\n")


@functools.cache
def _cases() -> str:
    """The branches of ``stat`` from ``mean`` to ``range``; the last statistic (``sum``) is each program's fallback."""
    return program_part(__file__, '    if kind == "mean":\n', '    if kind == "sum":\n')


def stat_function(kind: str) -> str:
    """``def stat(xs)`` for the statistic the expression ``kind`` names (a literal, or ``P["stat"]``)."""
    return f"def stat(xs):\n    kind = {kind}\n" + _cases() + "    return sum(xs)\n"


@functools.cache
def _defined(text: str, name: str) -> Callable[..., Any]:
    """The function ``name`` that the program text ``text`` defines (it may use ``math`` and ``statistics``)."""
    scope: dict[str, Any] = {"math": math, "statistics": statistics}
    exec(text, scope)  # noqa: S102 - the family's own file's text
    return scope[name]


def number(text: str) -> float | None:
    """The number a cell holds by the tasks' rule (None: the row is invalid), as the reference solutions read it."""
    return _defined(number_function(), "number")(text)


def compute(kind: str, xs: list[float]) -> float:
    """The statistic ``kind`` of ``xs``, by the very code the reference solutions ship."""
    return _defined(stat_function(repr(kind)), "stat")(xs)
