"""A seed case: a base agent's failure on a real task, which the proposer turns into a new task.

Here, on the floor every stage imports, because the proposer reads it, the families' generators write tasks from
it, and the harvest writes it (``runs/flywheel/<run>/seed_cases/*.yaml``).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError


class SeedCase(BaseModel):
    """A base agent's failure on a real task."""

    id: str = Field(description="Stable identifier, e.g. 'fasttext-accuracy-timeout'.")
    task: str = Field(description="Original task: a path to a Harbor task, or a summary of it.")
    trajectory: str = Field(
        default="", description="Path to the failed trajectory, or a summary of what the agent did."
    )
    failure_mode: str = Field(description="What went wrong, in one or two sentences.")
    target_skill: str = Field(description="The skill a new task should exercise.")
    family: str | None = Field(default=None, description="Template family for the scripted proposer (optional hint).")
    reward: float | None = None
    source_trial: str | None = None

    @classmethod
    def load(cls, path: Path | str) -> SeedCase:
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ValueError(f"{path}: cannot read seed case: {exc}") from exc
        try:
            data = yaml.safe_load(text)  # JSON is YAML too
        except yaml.YAMLError as exc:
            raise ValueError(f"{path}: not valid YAML/JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"{path}: a seed case must be a mapping with id, task, failure_mode, target_skill")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ValueError(f"{path}: invalid seed case: {exc}") from exc

    def dump(self, path: Path | str) -> None:
        Path(path).write_text(yaml.safe_dump(self.model_dump(exclude_none=True), sort_keys=False))
