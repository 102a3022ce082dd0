"""A closed GRPO group of solver rollouts: what collection hands to the batch builder and the seed harvest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GroupResult:
    group_id: int
    task_hash: str
    rewards: list[float]
    advantages: list[float]
    useful: bool
    collection_sec: float
