"""What a Dockerfile starts from, read from its text: every backend builds the same Dockerfiles, and the task lint
(:mod:`autoenv.taskfmt.check`) reads the same list without any backend."""

from __future__ import annotations

import re

FROM_LINE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE | re.MULTILINE)
_ARG = re.compile(r"^\s*ARG\s+(\w+)(?:=(\S*))?", re.IGNORECASE | re.MULTILINE)


def base_images(dockerfile_text: str) -> list[str]:
    """The external images a Dockerfile starts from (stages and ``scratch`` excluded)."""
    args = {m.group(1): (m.group(2) or "").strip("\"'") for m in _ARG.finditer(dockerfile_text.split("\nFROM")[0])}
    stages: set[str] = set()
    bases: list[str] = []
    for match in FROM_LINE.finditer(dockerfile_text):
        ref = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), match.group(1))
        if ref.lower() != "scratch" and ref.lower() not in stages and ref not in bases:
            bases.append(ref)
        if match.group(2):
            stages.add(match.group(2).lower())
    return bases
