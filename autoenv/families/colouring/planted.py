"""A planted colouring of a random graph: what a search level's task is drawn around.

Every item gets one of ``colours`` classes at random, then clashes are drawn uniformly between items of different
planted classes until the graph has ``degree`` clashes per item. The planted classes prove that a clash-free sheet
exists (the reference writes it); near the density where random graphs stop being colourable, few others exist
and the textbook searches stall a clash or two short (bench/README). primer-tm's panel draws its own (overlapping
regions are clashes too); the levels whose clashes are plain pairs draw them here.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def names(rng: random.Random, n: int, *parts: Sequence[str], numbers: int = 40) -> list[str]:
    """``n`` distinct names ``part-part-number`` (one word of each of ``parts``), in a drawn order: a name says
    nothing of its class or its neighbours."""
    choices = [list(words) for words in parts]
    found: set[str] = set()
    while len(found) < n:
        found.add("-".join(rng.choice(words) for words in choices) + f"-{rng.randrange(1, numbers)}")
    order = sorted(found)
    rng.shuffle(order)
    return order


def graph(
    rng: random.Random, items: Sequence[str], colours: int, degree: float
) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """The clashing pairs (each sorted, in sorted order) and the planted class of every item (1-based)."""
    population = list(items)
    planted = {item: rng.randrange(colours) + 1 for item in population}
    edges: set[tuple[str, str]] = set()
    while len(edges) < int(degree * len(population) / 2):
        a, b = rng.sample(population, 2)
        if planted[a] != planted[b]:
            edges.add((a, b) if a < b else (b, a))
    return sorted(edges), planted  # sorted, not set order: that follows the interpreter's string hashing


def sheet(header: tuple[str, str], planted: dict[str, int]) -> str:
    """The planted sheet: a header line, then one ``item<TAB>class`` line per item in sorted order."""
    return "\t".join(header) + "\n" + "".join(f"{item}\t{planted[item]}\n" for item in sorted(planted))
