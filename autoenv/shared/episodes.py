"""What a policy lived, as training reads it: one model call's exact tokens (:class:`TokenTurn`) and a proposer
attempt's episode (:class:`ProposerEpisode`, written where the proposer ran, read by the batch builder).

Pydantic only: the 3.11 training worker reads :class:`TokenTurn` through :mod:`autoenv.train.batch`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator


class TokenTurn(BaseModel):
    """One model call as the endpoint saw it: exact ids, optional sampling log-probs."""

    prompt_token_ids: list[int]
    completion_token_ids: list[int]
    logprobs: list[float] | None = None

    @model_validator(mode="after")
    def _aligned(self) -> TokenTurn:
        if self.logprobs is not None and len(self.logprobs) != len(self.completion_token_ids):
            raise ValueError(f"{len(self.logprobs)} logprobs for {len(self.completion_token_ids)} completion tokens")
        return self


EpisodeSource = Literal["model", "agent", "scripted"]


class ProposerEpisode(BaseModel):
    """Messages the proposer received and sent, in order; exact token turns when every model call had them."""

    source: EpisodeSource
    messages: list[dict[str, Any]]
    turns: list[TokenTurn] | None = None
    trajectory_path: str | None = None
    policy_versions: list[str] = Field(default_factory=list, description="The version each model call reported.")
    decisions: list[dict[str, Any]] = Field(
        default_factory=list, description="The offline learned proposer's draws (key, choice, probabilities)."
    )

    def save(self, path: Path | str) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(self.model_dump_json(exclude_none=True))
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: Path | str) -> ProposerEpisode:
        return cls.model_validate_json(Path(path).read_text())
