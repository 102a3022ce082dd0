"""The proposer as a flywheel stage: one attempt per seed case, recorded in the store under idempotent keys.

Each attempt is judged where it is made (:mod:`autoenv.validate.judge`: validation, then calibration
against the current solver), because the feedback and agentic methods repair a draft on its verdict;
what this stage returns are the judged attempts. A resumed step skips the attempts the store already has.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autoenv.proposer.models import AttemptRecord, ProposeOptions, SeedCase
from autoenv.proposer.propose import propose_async
from autoenv.store.db import Store

#: AttemptRecord fields stored as they are, in the tasks and in the attempts table.
TASK_COLUMNS = {"method", "proposer", "valid", "calibrated", "pass_rate", "n_files", "parent_name", "parent_hash"}
ATTEMPT_COLUMNS = TASK_COLUMNS - {"pass_rate"} | {
    "seed_case",
    "task_hash",
    "reason",
    "reward",
    "duration_sec",
    "episode_path",
}


async def propose_step(
    store: Store,
    *,
    run: str,
    step: int,
    cases: list[SeedCase],
    policy_version: int,
    out_dir: Path,
    workspace: Path,
    options: ProposeOptions,
    on_case: Callable[[SeedCase], None] | None = None,
) -> list[AttemptRecord]:
    """Propose once from each of ``cases`` with ``options`` (one attempt each, seeded ``options.seed * 1_000_000 +
    step * 1000 + index``), and record every attempt and task in the store."""
    records: list[AttemptRecord] = []
    done = {a["attempt_key"] for a in store.attempts(run, step)}
    for index, case in enumerate(cases):
        key = f"{step}/{index}/{case.id}"
        if key in done:
            continue
        if on_case is not None:
            on_case(case)
        attempt = options.model_copy(update={"attempts": 1, "seed": options.seed * 1_000_000 + step * 1000 + index})
        summary = await propose_async(case, attempt, out_dir=out_dir, workspace=workspace)
        for record in summary.records:
            records.append(record)
            record_attempt(store, record, run=run, step=step, key=key, policy_version=policy_version)
    return records


def record_attempt(
    store: Store, record: AttemptRecord, *, run: str, step: int, key: str, policy_version: int | None = None
) -> bool:
    """Store one attempt under its natural key (``run``, ``key``) and the task it wrote, with its parent when it
    evolved one; False when the store had the attempt already."""
    if record.task_hash and record.task_dir:
        row = record.model_dump(include=TASK_COLUMNS)
        row |= {"hash": record.task_hash, "name": Path(record.task_dir).name, "path": record.task_dir}
        row |= {"origin": record.seed_case, "policy_version": policy_version, "proposer_reward": record.reward}
        row["failed_check"] = None if record.valid else (record.reason or "")[:64]
        store.upsert_task(**row)
    row = record.model_dump(include=ATTEMPT_COLUMNS) | {"run": run, "step": step, "attempt_key": key}
    actions = [a.model_dump() for a in record.actions]
    return store.record_attempt(**row, policy_version=policy_version, n_actions=len(actions), actions=actions)
