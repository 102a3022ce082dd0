"""Seed cases from failed Harbor trials: the flywheel's way from a failure back to the proposer.

A Harbor trial directory holds ``result.json`` (a ``TrialResult``: the task,
the agent, the verifier's rewards or the exception that ended the trial),
``verifier/test-stdout.txt`` and, for agents that record one,
``agent/trajectory.json``. A trial failed when its reward is below 1, it has no
reward, or it ended with an exception; each such trial becomes one seed case
whose failure mode is written from the exception or from the failing checks
the verifier printed, and whose target skill comes from the task's own
description (its title, category and tags).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from harbor.models.trial.result import TrialResult

from autoenv.families.base import slug
from autoenv.proposer.models import SeedCase
from autoenv.trials.runner import ERROR_KINDS

FAILED_TEST = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$", re.M)
ASSERT_LINE = re.compile(r"^E\s+(.*\S)", re.M)


if TYPE_CHECKING:
    from autoenv.shared.groups import GroupResult
    from autoenv.store.db import Store


def trial_dirs(root: Path | str) -> Iterator[Path]:
    """Every Harbor trial directory under ``root`` (or ``root`` itself), in path order."""
    root = Path(root)
    if (root / "result.json").is_file() and (root / "config.json").is_file():
        yield root
        return
    for result in sorted(root.rglob("result.json")):
        if (result.parent / "config.json").is_file() and result.parent != root:
            yield result.parent


def load_result(trial_dir: Path) -> TrialResult | None:
    try:
        return TrialResult.model_validate_json((trial_dir / "result.json").read_text())
    except (OSError, ValueError):
        return None  # a job-level result.json, or a trial still being written


def reward_of(result: TrialResult) -> float | None:
    rewards = result.verifier_result.rewards if result.verifier_result else None
    if not rewards:
        return None
    return float(rewards.get("reward", next(iter(rewards.values()))))


def failed(result: TrialResult) -> bool:
    reward = reward_of(result)
    return result.exception_info is not None or reward is None or reward < 1.0


def _task_dir(result: TrialResult) -> Path | None:
    path = getattr(result.config.task, "path", None)
    return Path(path) if path else None


def _task_meta(task_dir: Path | None) -> tuple[str, dict]:
    """(instruction title, [metadata]) of the original task, when it is still on disk."""
    if task_dir is None:
        return "", {}
    title = ""
    try:
        for line in (task_dir / "instruction.md").read_text().splitlines():
            if line.strip():
                title = line.lstrip("# ").strip()
                break
    except OSError:
        pass
    try:
        meta = tomllib.loads((task_dir / "task.toml").read_text()).get("metadata", {})
    except (OSError, ValueError):
        meta = {}
    return title, meta


def task_family(task_dir: Path | None) -> str | None:
    """The task's ``[metadata] family`` when it names one of the proposer's families, else None.

    Tasks written by others (and the bundled ones) describe themselves with ``category`` and
    ``tags``, or a ``family`` of their own; only a family the proposer has may steer it.
    """
    from autoenv.families.registry import FAMILIES

    family = _task_meta(task_dir)[1].get("family")
    return family if family in FAMILIES else None


def failure_mode(result: TrialResult, trial_dir: Path) -> str:
    """What went wrong, from the exception or from the checks the verifier reported failing."""
    if result.exception_info is not None:
        kind = result.exception_info.exception_type
        message = (result.exception_info.exception_message or "").strip().splitlines()
        short = ERROR_KINDS.get(kind, kind)
        return f"The trial ended with {short} ({kind}): {message[0][:240] if message else 'no message'}"
    reward = reward_of(result)
    try:
        out = (trial_dir / "verifier" / "test-stdout.txt").read_text(errors="replace")
    except OSError:
        out = ""
    failed_tests = FAILED_TEST.findall(out)
    if failed_tests:
        names = [name.split("::")[-1] for _, name, _ in failed_tests]
        why = next((detail for _, _, detail in failed_tests if detail), "") or next(iter(ASSERT_LINE.findall(out)), "")
        text = (
            f"Reward {reward:g}: {len(names)} verifier check(s) failed "
            f"({', '.join(names[:6])}{', ...' if len(names) > 6 else ''})"
        )
        return text + (f"; first: {why[:200]}" if why else "")
    if reward is None:
        return "The verifier produced no reward."
    tail = [line for line in out.strip().splitlines() if line.strip()][-2:]
    return f"Reward {reward:g}" + (
        f"; the verifier printed: {' | '.join(tail)[:240]}" if tail else "; the agent did not complete the task."
    )


def trajectory_summary(trial_dir: Path) -> str:
    """The trajectory file's path, with its length and how it ended (or a note that there is none)."""
    path = trial_dir / "agent" / "trajectory.json"
    if not path.is_file():
        logs = (
            sorted(p.name for p in (trial_dir / "agent").glob("*") if p.is_file())
            if (trial_dir / "agent").is_dir()
            else []
        )
        return f"no trajectory recorded (agent logs: {', '.join(logs) or 'none'})"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return str(path)
    steps = data.get("steps", [])
    calls = [c for s in steps for c in (s.get("tool_calls") or [])]
    finish = next(
        (c.get("arguments", {}).get("message") for c in reversed(calls) if c.get("function_name") == "finish"), None
    )
    stop = (data.get("final_metrics") or {}).get("extra", {}).get("stop_reason")
    parts = [str(path), f"{len(steps)} steps, {len(calls)} actions"]
    if stop:
        parts.append(f"stopped: {stop}")
    if finish:
        parts.append(f"last message: {str(finish)[:160]}")
    return "; ".join(parts)


def seed_case_from_trial(trial_dir: Path | str, result: TrialResult | None = None) -> SeedCase | None:
    """The seed case for one failed trial (None when the trial passed or is unreadable)."""
    trial_dir = Path(trial_dir)
    result = result or load_result(trial_dir)
    if result is None or not failed(result):
        return None
    task_dir = _task_dir(result)
    title, meta = _task_meta(task_dir)
    agent = result.agent_info.name if result.agent_info else "agent"
    skill_bits = [title or result.task_name]
    if meta.get("category"):
        skill_bits.append(f"category {meta['category']}")
    if meta.get("tags"):
        skill_bits.append("tags " + ", ".join(map(str, meta["tags"])))
    return SeedCase(
        id=slug(f"{result.task_name}-{agent}-{result.trial_name.rsplit('__', 1)[-1]}", 60),
        task=str(task_dir) if task_dir else result.task_name,
        trajectory=trajectory_summary(trial_dir),
        failure_mode=failure_mode(result, trial_dir),
        target_skill="The skill the failed task exercises: " + "; ".join(skill_bits),
        family=task_family(task_dir),
        reward=reward_of(result),
        source_trial=str(trial_dir.resolve()),
    )


def extract_seed_cases(root: Path | str, *, agents: set[str] | None = None) -> list[SeedCase]:
    """Seed cases for every failed trial under ``root`` (optionally only those of some agents)."""
    cases = []
    for trial_dir in trial_dirs(root):
        result = load_result(trial_dir)
        if result is None:
            continue
        if (
            agents
            and (result.agent_info.name if result.agent_info else None) not in agents
            and result.config.agent.name not in agents
        ):
            continue
        case = seed_case_from_trial(trial_dir, result)
        if case is not None:
            cases.append(case)
    return cases


def write_seed_cases(cases: list[SeedCase], out_dir: Path | str) -> list[Path]:
    """One YAML file per case; an existing file with the same id is left alone (the cases are stable)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for case in cases:
        path = out_dir / f"{case.id}.yaml"
        if not path.exists():
            case.dump(path)
        written.append(path)
    return written


def harvest_seed_cases(
    store: Store, *, step: int, groups: list[GroupResult], tasks: dict[str, Path], out_dir: Path
) -> int:
    """Failed rollouts become the proposer's next seed cases (the loop's return edge); returns how many were new.

    One per group with a failure, written from a failed trial itself (:func:`seed_case_from_trial`: the
    verifier's failing checks, the trajectory, the task's title, category and tags), so a bundled or
    foreign task's ``category`` stays a description and never poses as a template family.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    made = 0
    for group in groups:
        if not group.rewards or min(group.rewards) >= 1.0:
            continue
        task_dir = tasks[group.task_hash]
        failed = [r for r in store.rollouts(group_id=group.group_id) if (r["reward"] or 0) < 1.0]
        trial = Path(failed[0]["trajectory_path"]).parents[1] if failed and failed[0]["trajectory_path"] else None
        case = seed_case_from_trial(trial) if trial is not None and (trial / "result.json").is_file() else None
        if case is None:
            case = SeedCase(
                id="-",
                task=str(task_dir),
                failure_mode="the solver failed the task",
                target_skill=f"the skill the failed task exercises: {task_dir.name}",
                family=task_family(task_dir),
            )
        case = case.model_copy(
            update={
                "id": f"{task_dir.name}-s{step}",
                "task": str(task_dir),
                "reward": min(group.rewards),
                "failure_mode": (
                    f"The solver failed {len(failed)} of {len(group.rewards)} rollouts. {case.failure_mode}"
                ),
            }
        )
        path = out_dir / f"{case.id}.yaml"
        if not path.exists():
            case.dump(path)
            made += 1
    return made
