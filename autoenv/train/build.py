"""The batch-building stage: a step's useful solver groups and proposer episodes, as the policy saw them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autoenv.rollout.collect import GroupResult
from autoenv.store.db import Store
from autoenv.train.batch import TrainingBatch, TrainingSample
from autoenv.train.grpo import group_advantages
from autoenv.train.trajectories import sample_from_trajectory


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
            if not row["trajectory_path"] or not Path(row["trajectory_path"]).exists():
                continue
            samples.append(
                sample_from_trajectory(
                    row["trajectory_path"],
                    role="solver",
                    task_hash=row["task_hash"],
                    group_id=group.group_id,
                    rollout_id=row["id"],
                    policy_version=row["policy_version"],
                    reward=row["reward"] or 0.0,
                    advantage=row["advantage"] or 0.0,
                )
            )
    missing = 0
    if proposer_attempts:
        from autoenv.proposer.episode import ProposerEpisode

        advantages = group_advantages([a["reward"] for a in proposer_attempts])
        for row, advantage in zip(proposer_attempts, advantages):
            if advantage == 0.0:
                continue
            if not row.get("episode_path") or not Path(row["episode_path"]).is_file():
                missing += 1
                continue
            episode = ProposerEpisode.load(row["episode_path"])
            samples.append(
                TrainingSample(
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
                        "episode_path": row["episode_path"],
                        "seed_case": row["seed_case"],
                        "method": row["method"],
                        "source": episode.source,
                        **({"decisions": episode.decisions} if episode.decisions else {}),
                    },
                )
            )
    return TrainingBatch(
        run=run,
        step=step,
        policy_version=policy_version,
        samples=samples,
        meta={"proposer_episodes_missing": missing} if missing else {},
    )
