"""What a model should know of the sandbox before its first turn, found by the sandbox itself.

A model that is not told spends turns finding out (``which python3``, ``awk --version``) or, worse, writes a
``gensub`` for an awk that is mawk. At the start of a trial the agent runs :data:`PROBE` (one ``exec``: the working
directory, the OS, the shell and which of python3/awk/sed/jq/git/curl exist, with their flavour) and
:func:`note` turns its output into a few lines of the first message. The facts are cached per image
(:func:`image_key`), so later trials on the same image ask only for the working directory (still one ``exec``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The tools a task's commands most often assume, in the order the note names them.
TOOLS = ("python3", "awk", "sed", "jq", "git", "curl")

#: POSIX shell (it runs under bash, dash or busybox sh): ``@key value`` lines after the working directory.
PROBE = r"""pwd
if [ -r /etc/os-release ]; then . /etc/os-release; echo "@os ${PRETTY_NAME:-$NAME}"; else echo "@os $(uname -s)"; fi
echo "@arch $(uname -m)"
echo "@bash ${BASH_VERSION:-}"
echo "@sh $(readlink -f /bin/sh 2>/dev/null)"
for t in python3 awk sed jq git curl; do
  p=$(command -v "$t" 2>/dev/null) || { echo "@tool $t"; continue; }
  real=$(readlink -f "$p" 2>/dev/null || echo "$p")
  case "$t" in
    awk) v=$("$p" --version </dev/null 2>/dev/null | head -n 1)
         [ -n "$v" ] || v=$("$p" -W version </dev/null 2>&1 | head -n 1) ;;
    *) v=$("$p" --version </dev/null 2>&1 | head -n 1) ;;
  esac
  echo "@tool $t $real $v"
done
"""


@dataclass
class Sandbox:
    """The facts the probe found (``tools``: name -> ``(resolved path, first line of --version)``, None: absent)."""

    os: str = ""
    arch: str = ""
    bash: str = ""
    sh: str = ""
    tools: dict[str, tuple[str, str] | None] = field(default_factory=dict)


def parse(stdout: str) -> tuple[str | None, Sandbox]:
    """The working directory and the facts from :data:`PROBE`'s output."""
    workdir: str | None = None
    box = Sandbox()
    for line in stdout.splitlines():
        if not line.startswith("@"):
            if workdir is None and line.startswith("/"):
                workdir = line.strip()
            continue
        key, _, value = line[1:].partition(" ")
        value = value.strip()
        if key == "tool":
            name, _, rest = value.partition(" ")
            path, _, version = rest.partition(" ")
            box.tools[name] = (path, version.strip()) if path else None
        elif key in ("os", "arch", "bash", "sh"):
            setattr(box, key, value)
    return workdir, box


def _version(text: str) -> str:
    found = re.search(r"\d+(\.\d+)+", text)
    return found.group(0) if found else ""


def flavour(name: str, path: str, version: str) -> str:
    """``mawk 1.3.4``, ``GNU awk 5.2.1``, ``busybox sed``, ``python3 3.12.8``: which program a name runs."""
    base = Path(path).name
    if base == "busybox" or "BusyBox" in version:
        return f"busybox {name}"
    if name == "awk":
        if base == "gawk" or "GNU Awk" in version:
            return f"GNU awk {_version(version)}".strip()
        if base == "mawk" or version.startswith("mawk"):
            return f"mawk {_version(version)} (not GNU awk: no gensub or asort)"
        return f"awk ({base})"
    if name == "sed":
        return f"GNU sed {_version(version)}".strip() if "GNU" in version else f"sed ({base})"
    return f"{name} {_version(version)}".strip()


def note(box: Sandbox) -> str:
    """The environment section's lines (Markdown bullets), from the facts."""
    lines = []
    system = box.os or "Linux"
    if box.arch:
        system += f" ({box.arch})"
    shell = f"bash {_version(box.bash)}" if box.bash else "sh"
    if box.sh and Path(box.sh).name not in ("bash", ""):
        shell += f"; /bin/sh is {Path(box.sh).name}"
    lines.append(f"- OS: {system}; commands run in {shell}")
    present = [flavour(name, *box.tools[name]) for name in TOOLS if box.tools.get(name)]
    missing = [name for name in TOOLS if name in box.tools and not box.tools[name]]
    if present:
        lines.append("- Installed: " + ", ".join(present))
    if missing:
        lines.append("- Not installed: " + ", ".join(missing))
    return "\n".join(lines)


def image_key(environment: Any) -> str | None:
    """What identifies the sandbox's image: its prebuilt image name, else its Dockerfile's text (None: unknown)."""
    config = getattr(environment, "task_env_config", None)
    image = getattr(config, "docker_image", None)
    if image:
        return f"image:{image}"
    folder = getattr(environment, "environment_dir", None)
    dockerfile = Path(folder) / "Dockerfile" if folder else None
    if dockerfile is not None and dockerfile.is_file():
        return "dockerfile:" + hashlib.sha256(dockerfile.read_bytes()).hexdigest()
    return None


#: image key -> the facts its probe found (one process: a run's trials share it).
_CACHE: dict[str, Sandbox] = {}


async def probe(environment: Any, *, timeout_sec: int = 30) -> tuple[str | None, str | None]:
    """The working directory and the environment note, from one ``exec`` in the sandbox (the facts cached per
    image); ``(None, None)`` when the sandbox does not answer."""
    key = image_key(environment)
    cached = _CACHE.get(key) if key else None
    try:
        res = await environment.exec("pwd" if cached else PROBE, timeout_sec=timeout_sec)
    except Exception:  # noqa: BLE001 - a best-effort query: no answer means no note
        return None, None
    workdir, box = parse(res.stdout or "")
    if res.return_code != 0 and workdir is None:
        return None, note(cached) if cached else None
    if cached is None:
        if not box.tools:  # the probe did not run to its end: no facts to keep
            return workdir, None
        if key:
            _CACHE[key] = box
        cached = box
    return workdir, note(cached)
