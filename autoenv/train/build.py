"""The batch-building stage: a step's useful solver groups and proposer episodes, as the policy saw them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autoenv.shared.episodes import ProposerEpisode
from autoenv.shared.groups import GroupResult
from autoenv.store.db import Store
from autoenv.train.batch import TrainingBatch, TrainingSample
from autoenv.train.grpo import group_advantages
from autoenv.train.trajectories import sample_from_trajectory


def solver_sample(row: dict[str, Any], *, advantage: float) -> TrainingSample | None:
    """A rollout row as a training sample, from its ATIF trajectory (None when the trajectory file is gone)."""
    if not row["trajectory_path"] or not Path(row["trajectory_path"]).exists():
        return None
    return sample_from_trajectory(
        row["trajectory_path"],
        role="solver",
        task_hash=row["task_hash"],
        group_id=row.get("group_id", -1),
        rollout_id=row["id"],
        policy_version=row["policy_version"],
        reward=row["reward"] or 0.0,
        advantage=advantage,
    )


def proposer_sample(row: dict[str, Any], *, advantage: float, policy_version: int = 0) -> TrainingSample | None:
    """An attempt row as a training sample, from its recorded episode (None when the attempt has none)."""
    if not row.get("episode_path") or not Path(row["episode_path"]).is_file():
        return None
    episode = ProposerEpisode.load(row["episode_path"])
    return TrainingSample(
        role="proposer",
        task_hash=row["task_hash"] or "",
        group_id=-1,
        rollout_id=-1,
        policy_version=row["policy_version"] if row["policy_version"] is not None else policy_version,
        messages=episode.messages,
        turns=episode.turns,
        reward=row["reward"],
        advantage=advantage,
        meta={
            "run": row.get("run"),
            "episode_path": row["episode_path"],
            "seed_case": row["seed_case"],
            "method": row["method"],
            "source": episode.source,
            **({"decisions": episode.decisions} if episode.decisions else {}),
        },
    )


def build_batch(
    store: Store,
    *,
    run: str,
    step: int,
    policy_version: int,
    groups: list[GroupResult],
    proposer_attempts: list[dict[str, Any]],
) -> TrainingBatch:
    """Useful solver groups plus the step's proposer episodes (rewarded by r_P), with exact tokens where recorded.

    Solver samples come from the rollouts' ATIF trajectories; a group without reward variance gives no
    signal under GRPO and is left out. ``proposer_attempts`` (the step's attempts as the store holds them,
    empty when the proposer is not trained) form one group: r_P relative to its mean. Their samples are the
    episodes recorded where the proposer ran (:mod:`autoenv.proposer.episode`); an attempt with none gives
    no sample rather than an invented one, and the batch header counts it.
    """
    samples = []
    for group in groups:
        if not group.useful:
            continue
        for row in store.rollouts(group_id=group.group_id):
            if (sample := solver_sample(row, advantage=row["advantage"] or 0.0)) is not None:
                samples.append(sample)
    missing = 0
    if proposer_attempts:
        advantages = group_advantages([a["reward"] for a in proposer_attempts])
        for row, advantage in zip(proposer_attempts, advantages):
            if advantage == 0.0:
                continue
            sample = proposer_sample(row, advantage=advantage, policy_version=policy_version)
            if sample is None:
                missing += 1
            else:
                samples.append(sample)
    return TrainingBatch(
        run=run,
        step=step,
        policy_version=policy_version,
        samples=samples,
        meta={"proposer_episodes_missing": missing} if missing else {},
    )
