"""The reference solution with part of its work taken away: tests must notice.

Mutation testing of the oracle, in the manner of TerminalWorld's partial
solutions: a verifier that still gives full reward when the solution's
outputs are cut in half checks that files exist, or that they are not empty,
not what they contain, and an RL policy will find that out. This agent runs
``solution/solve.sh`` exactly as Harbor's oracle does, then damages every file
the solution created or changed (found by ctime against a marker written
before it ran, which no user process can set back):

``halved``
    every changed file keeps the first half of its bytes; where that leaves
    the non-blank content as it was (a one-character answer), its digits and
    letters are shifted by one instead. A correct test fails on any of them.

Processes the solution left running (a service it started) are stopped first:
a running service holds the code it loaded, and the service is part of what
the solution did. What it changed is recorded in ``agent/partial.json``, with what the solution had
written to the small text files (the leakage check looks for it in the instruction). Files under system,
cache and log folders are left alone (they are not deliverables, and
damaging an interpreter the verifier needs would only make the mutant fail
for the wrong reason). When the solution changed no file (its deliverable is
a deletion, a permission or a running process) nothing is damaged and the
record says so: the check that reads it then reports that it could not run, unless the solution created a
file the instruction names, which an honest scan would have found (then the check fails and says so).

Every probe runs with validation's own busybox (:mod:`autoenv.agents.toolset`), never the image's programs.

The probes are not the partial trial's alone: validation's oracle runs are :class:`ProbedOracleAgent`, which
does everything this agent does before and around ``solve.sh`` (the same tool uploads, the same marker, the same
scan for changed files) and damages nothing. A ``solve.sh`` cannot tell the two apart, so one that looks for the
marker to do nothing under the partial trial does nothing under the oracle too; and each trial records the files
the solution changed (``changed``), so a partial trial whose solution changed none while the oracle's did is seen
(:mod:`autoenv.validate.checks.probes`).
"""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path
from typing import override

from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from autoenv.agents.adversary import mentioned_paths
from autoenv.agents.named import NamedAgent
from autoenv.agents.oracle import TaskOracleAgent
from autoenv.agents.toolset import run_confined, upload_toolset

#: ``none``: the oracle's runs (the same probes, nothing damaged); ``halved``: the partial solution.
MUTATIONS = ("halved", "none")
MARKER = "/tmp/.autoenv-partial-mark"
CHANGED_LIST = "/tmp/.autoenv-partial-changed"
RECORD = "partial.json"
MAX_FILES = 2000

#: Folders whose files are never a task's deliverable (system, package caches, logs, Harbor's own mounts).
PRUNED = (
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/tmp",
    "/var/tmp",
    "/var/lib",
    "/var/cache",
    "/var/log",
    "/logs",
    "/tests",
    "/solution",
    "/installed-agent",
    "/usr",
    "/boot",
    "/root/.cache",
    "/root/.npm",
    "/root/.local/lib",
    # written by the container runtime when the sandbox starts (Docker), within the marker's second
    "/etc/hosts",
    "/etc/hostname",
    "/etc/resolv.conf",
)
PRUNED_NAMES = ("__pycache__", ".git", "node_modules", "site-packages", "dist-packages", ".pytest_cache", ".mypy_cache")


def changed_files_command() -> str:
    """Shell (busybox's: see :mod:`autoenv.agents.toolset`) that prints, one per line, the regular files whose
    ctime is not older than the marker's (deliverables only; no user process can set a ctime back)."""
    paths = " -o ".join(f"-path {shlex.quote(p)}" for p in PRUNED)
    names = " -o ".join(f"-name {shlex.quote(n)}" for n in PRUNED_NAMES)
    since = f"$(stat -c %Z {MARKER})"
    # /usr/local/bin is where a task's command-line deliverable lives, so it is searched on its own
    return (
        f"{{ find / \\( {paths} -o {names} \\) -prune -o -type f -exec stat -c '%Z %n' {{}} +; "
        f"find /usr/local/bin /usr/local/sbin -type f -exec stat -c '%Z %n' {{}} +; }} 2>/dev/null "
        f"| awk -v since={since} '$1 >= since {{ sub(/^[0-9]+ /, \"\"); print }}' | head -n {MAX_FILES}"
    )


def existing_command(paths: list[str]) -> str:
    """Shell that prints each of ``paths`` that exists, one per line."""
    return "".join(f"[ -e {shlex.quote(p)} ] && echo {shlex.quote(p)}; " for p in paths) + "true"


#: Damages one file ($1) in place (permissions and owner kept) and prints what it did.
HALVE = r"""
halve() {
  f=$1; size=$(wc -c < "$f" 2>/dev/null) || return 0
  [ "$size" -gt 0 ] || return 0
  # what the solution wrote, for the leakage check (is the answer in the instruction?)
  [ "$size" -le 4096 ] && printf 'ORIGINAL\t%s\t%s\n' "$(base64 < "$f" | tr -d '\n')" "$f"
  tmp=/tmp/.autoenv-partial-tmp
  head -c $((size / 2)) "$f" > "$tmp" || return 0
  how="halved $size to $((size / 2)) bytes"
  if [ "$size" -lt 4096 ] && [ "$(tr -d '[:space:]' < "$tmp")" = "$(tr -d '[:space:]' < "$f")" ]; then
    tr '0-9a-zA-Z' '1-90b-zaB-ZA' < "$f" > "$tmp"
    how="letters and digits shifted by one"
  fi
  cat "$tmp" > "$f" && printf 'MUTATED\t%s\t%s\n' "$how" "$f"
  rm -f "$tmp"
}
"""


#: Stops every process the solution left running (a service it started holds the code it loaded, so
#: damaging its files alone would not reach it): the processes started since the marker, but for this script,
#: the processes that run it and what it started. Start times and the marker's moment are both read on the
#: clock /proc counts in (1/100 s since boot: a process's starttime, /proc/uptime when the marker was written).
#: Whole wall-clock seconds (the marker's ctime against the boot time plus the start tick) missed a service the
#: solution started within a second or two of the marker: the rounding put it before the marker.
STOP_LEFTOVERS = r"""
me=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
since=$(sed -n '1{s/^\([0-9]*\)\.\([0-9][0-9]\).*/\1\2/p;}' @MARKER@ 2>/dev/null)
case "$since" in ''|*[!0-9]*) since=;; esac
# this script and the processes that run it (the exec session's shell and whatever started it) are not leftovers
mine=" $$ "; p=$$
while [ "$p" -gt 1 ] 2>/dev/null; do
  p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status 2>/dev/null); mine="$mine$p "
done
for d in /proc/[0-9]*; do
  pid=${d#/proc/}
  [ "$pid" = 1 ] && continue
  case "$mine" in *" $pid "*) continue ;; esac
  started=$(sed 's/.*) //' "$d/stat" 2>/dev/null | cut -d' ' -f20) || continue
  [ -n "$started" ] && [ "$started" -lt "$me" ] || continue
  # started since the marker (the solution's), never the sandbox's own keep-alive process; nothing when the
  # marker is unreadable (a solution that removed it stops its own services from being reached: partial fails)
  [ -n "$since" ] && [ "$started" -ge "$since" ] || continue
  cmd=$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null | cut -c1-120)
  kill -9 "$pid" 2>/dev/null && printf 'STOPPED\t%s\t%s\n' "$pid" "$cmd"
done
""".replace("@MARKER@", MARKER)


def mutation_script(mutation: str) -> str:
    """The script run after the solution: it lists the changed files (``CHANGED``) and, but for ``none``, stops
    what the solution left running and damages them."""
    if mutation not in MUTATIONS:
        raise ValueError(f"unknown mutation {mutation!r}; choose from {', '.join(MUTATIONS)}")
    listing = (
        f"{changed_files_command()} > {CHANGED_LIST}\n"
        f"while IFS= read -r f; do printf 'CHANGED\\t-\\t%s\\n' \"$f\"; done < {CHANGED_LIST}\n"
    )
    if mutation == "none":
        return listing + f"rm -f {CHANGED_LIST}\nexit 0\n"
    return (
        STOP_LEFTOVERS
        + HALVE
        + listing
        + f'while IFS= read -r f; do halve "$f"; done < {CHANGED_LIST}\nrm -f {CHANGED_LIST}\nexit 0\n'
    )


class PartialSolutionAgent(NamedAgent, TaskOracleAgent):
    """Runs the reference solution, then damages what it produced (see the module docstring)."""

    AGENT_NAME = "autoenv-partial-solution"

    def __init__(self, logs_dir: Path, model_name: str | None = None, *, mutation: str = "halved", **kwargs):
        super().__init__(logs_dir, model_name, **kwargs)
        mutation_script(mutation)  # reject an unknown mutation at construction, not mid-trial
        self.mutation = mutation

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        # validation's own tools, never the image's (whose find or sh the task's author may have replaced): one
        # copy before the solution for the marker, a fresh one after it, at a name the solution never saw
        named = mentioned_paths(instruction)
        before = await upload_toolset(environment)
        # the marker: its ctime dates the files the solution writes, its content (/proc/uptime) the processes
        mark = f"cat /proc/uptime > {MARKER}; {existing_command(named)}"
        probe = await run_confined(environment, mark, before, timeout_sec=30)
        existed = set((probe.stdout or "").split("\n"))
        try:
            await self.run_solution(instruction, environment, context)
        finally:
            after = await upload_toolset(environment)
            script = mutation_script(self.mutation)
            created = await run_confined(environment, existing_command(named), after, timeout_sec=30)
            result = await run_confined(environment, script, after, timeout_sec=120)
            mutated, originals, stopped, changed = [], {}, [], []
            for line in (result.stdout or "").splitlines():
                parts = line.split("\t", 2)
                if len(parts) == 3 and parts[0] == "CHANGED":
                    changed.append(parts[2])
                elif len(parts) == 3 and parts[0] == "MUTATED":
                    mutated.append({"path": parts[2], "how": parts[1]})
                elif len(parts) == 3 and parts[0] == "STOPPED":
                    stopped.append({"pid": parts[1], "command": parts[2]})
                elif len(parts) == 3 and parts[0] == "ORIGINAL":
                    try:
                        originals[parts[2]] = base64.b64decode(parts[1]).decode("utf-8")
                    except (ValueError, UnicodeDecodeError):
                        pass  # binary outputs say nothing an instruction could state
            record = {
                "mutation": self.mutation,
                # files the instruction names that the solution brought into being (outputs a scan must find)
                "created": [p for p in (created.stdout or "").split("\n") if p and p in named and p not in existed],
                "changed": changed,
                "mutated": mutated,
                "stopped": stopped,
                "outputs": originals,
                "return_code": result.return_code,
                "stderr": (result.stderr or "")[-2000:],
            }
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            (self.logs_dir / RECORD).write_text(json.dumps(record, indent=2))
            context.metadata = {"n_turns": 1, "mutation": self.mutation, "mutated": len(mutated)}


class ProbedOracleAgent(PartialSolutionAgent):
    """Validation's oracle: the reference solution with the partial trial's probes around it, nothing damaged.

    It records (``agent/partial.json``) the files the solution changed, as the partial trial does."""

    AGENT_NAME = "autoenv-oracle"

    def __init__(self, logs_dir: Path, model_name: str | None = None, **kwargs):
        kwargs.pop("mutation", None)
        super().__init__(logs_dir, model_name, mutation="none", **kwargs)


def solution_outputs(trial_dir: str | Path) -> dict[str, str]:
    """The text files (up to 4 KiB) the reference solution wrote in a partial-solution trial, before damage."""
    try:
        return json.loads((Path(trial_dir) / "agent" / RECORD).read_text()).get("outputs") or {}
    except (OSError, ValueError, AttributeError):
        return {}


def created_outputs(trial_dir: str | Path) -> list[str]:
    """Files the instruction names that did not exist before the solution ran and did after it."""
    try:
        return list(json.loads((Path(trial_dir) / "agent" / RECORD).read_text()).get("created") or [])
    except (OSError, ValueError, AttributeError):
        return []


def changed_files(trial_dir: str | Path) -> list[str] | None:
    """The files the solution changed in a probed trial (oracle or partial), or None when it recorded nothing."""
    try:
        return list(json.loads((Path(trial_dir) / "agent" / RECORD).read_text())["changed"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def mutated_files(trial_dir: str | Path) -> list[dict[str, str]] | None:
    """What a partial-solution trial damaged, or None when it recorded nothing (it did not get that far)."""
    try:
        return json.loads((Path(trial_dir) / "agent" / RECORD).read_text())["mutated"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
