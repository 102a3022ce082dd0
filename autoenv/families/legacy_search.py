"""Which builds of a legacy tool printed what its archive holds: the generator's check that an archive pins the
numbers a tool was built with, and the scripted solver's search for them (it copies :func:`builds_matching`'s source
into the sandbox, so the function uses the standard library only and nothing else of this module's).

A build is a set of parameters; the tool's behaviour for a build is the family's replacement program (its
``report(data) -> (stdout, status)``) with those parameters filled in, which the tests show prints what the C build
prints on every hidden input and on random ones (``tests/proposer/test_legacy_*.py``).
"""

from __future__ import annotations

from typing import Any


def builds_matching(
    template: str, marker: str, space: dict[str, list[Any]], fixed: dict[str, Any], runs: list[tuple[bytes, bytes, int]]
) -> list[dict[str, Any]]:
    """Every build in ``space`` (each key's candidate values; ``fixed`` holds the rest) whose replacement, the
    program ``template`` with the build's parameters in place of the line ``marker``, prints each run's standard
    output and exits with its status for each run's input (``runs``: input, stdout, status)."""
    import itertools
    import json

    found = []
    for values in itertools.product(*space.values()):
        params = {**fixed, **dict(zip(space, values))}
        scope: dict[str, Any] = {"__name__": "candidate"}
        exec(template.replace(marker, f"PARAMS = json.loads({json.dumps(params)!r})\n", 1), scope)
        if all(scope["report"](data) == (stdout, status) for data, stdout, status in runs):
            found.append(params)
    return found
