"""Parse the subset of Dockerfile syntax the local backend can honour.

The local backend has no image store: a task's ``FROM`` is approximated by the
host system and every other instruction is replayed into an overlay layer.
Anything we cannot replay faithfully must fail the build *with the line that
caused it*, because a silently ignored instruction makes a task pass here and
fail under Docker (or the reverse), which poisons validation.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

#: Base images whose userland the host (Debian with python3) stands in for.
#: Extend with ``AUTOENV_LOCAL_BASE_IMAGES`` (comma-separated glob patterns).
DEFAULT_BASE_IMAGES = (
    "python:*",
    "debian:*",
    "ubuntu:*",
    "buildpack-deps:*",
    "*/t-bench/python-*",
    "*/t-bench/ubuntu-*",
)

#: Instructions that only matter to a container runtime Harbor never uses
#: (Harbor starts containers with its own command) and are safe to skip.
IGNORED = {"CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "MAINTAINER", "VOLUME", "STOPSIGNAL", "HEALTHCHECK"}
SUPPORTED = {"FROM", "WORKDIR", "COPY", "ADD", "RUN", "ENV", "ARG", "USER"} | IGNORED


class DockerfileError(Exception):
    """A Dockerfile instruction the local backend cannot honour."""

    def __init__(self, path: Path | str, line: int, message: str):
        self.path = Path(path)
        self.line = line
        self.message = message
        super().__init__(f"{path}:{line}: {message}")


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int
    flags: dict[str, str] = field(default_factory=dict)

    def exec_form(self) -> list[str] | None:
        """The JSON ("exec") form of RUN/COPY arguments, if used."""
        text = self.args.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return None
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return value
        return None


def base_image_patterns() -> list[str]:
    extra = os.environ.get("AUTOENV_LOCAL_BASE_IMAGES", "")
    return list(DEFAULT_BASE_IMAGES) + [p.strip() for p in extra.split(",") if p.strip()]


def is_supported_base(image: str) -> bool:
    image = image.removeprefix("docker.io/").removeprefix("library/")
    if ":" not in image.rsplit("/", 1)[-1]:
        image += ":latest"
    return any(fnmatch.fnmatch(image, pattern) for pattern in base_image_patterns())


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join backslash continuations, drop comments, keep the first line number."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if buf and stripped.startswith("#"):
            continue  # comment lines inside a continuation are dropped by Docker too
        if not buf:
            start = number
        if stripped.endswith("\\"):
            buf.append(stripped[:-1])
            continue
        buf.append(stripped)
        out.append((start, " ".join(part for part in buf if part)))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


_FLAG = re.compile(r"^--([a-z-]+)(?:=(\S*))?\s*")


def parse(path: Path) -> list[Instruction]:
    """Parse a Dockerfile into instructions; raise DockerfileError on the first bad line."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise DockerfileError(path, 0, f"cannot read Dockerfile: {exc}") from exc
    instructions: list[Instruction] = []
    saw_from = False
    for line, content in _logical_lines(text):
        keyword, _, rest = content.partition(" ")
        keyword = keyword.upper()
        if keyword not in SUPPORTED:
            raise DockerfileError(path, line, f"instruction {keyword} is not supported by the local backend")
        flags: dict[str, str] = {}
        rest = rest.strip()
        while keyword in {"COPY", "ADD", "RUN", "FROM"} and (m := _FLAG.match(rest)):
            flags[m.group(1)] = m.group(2) or ""
            rest = rest[m.end():]
        if keyword == "FROM":
            if saw_from:
                raise DockerfileError(path, line, "multi-stage builds (a second FROM) are not supported by the local backend")
            saw_from = True
        elif not saw_from and keyword != "ARG":
            raise DockerfileError(path, line, f"{keyword} before FROM")
        instructions.append(Instruction(keyword, rest, line, flags))
    if not saw_from:
        raise DockerfileError(path, 1, "no FROM instruction")
    return instructions


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def substitute(text: str, variables: dict[str, str]) -> str:
    """Docker's ``$VAR`` / ``${VAR}`` / ``${VAR:-default}`` expansion for ENV, WORKDIR, COPY."""

    def repl(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        if name in variables:
            return variables[name]
        return m.group(2) or ""

    return _VAR.sub(repl, text)


def parse_env_args(args: str) -> dict[str, str]:
    """``ENV a=1 b="2 3"`` and the legacy ``ENV a 1 2`` form."""
    parts = shlex.split(args, posix=True)
    if parts and "=" not in parts[0]:
        return {parts[0]: " ".join(parts[1:])}
    result: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"expected KEY=VALUE, got {part!r}")
        result[key] = value
    return result
