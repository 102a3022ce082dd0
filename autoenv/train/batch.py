"""Training batches: what one flywheel step hands to a trainer, and the export format.

One JSONL file per batch, UTF-8, one JSON object per line:

- line 1, the header::

    {"format": "autoenv.training-batch", "version": 1, "run": "main", "step": 3,
     "policy_version": 3, "n_samples": 24, "meta": {}}

  ``policy_version`` is the version the samples were collected with (the
  trainer's input); the trainer's output is ``policy_version + 1``.

- every further line, one :class:`TrainingSample`::

    {"role": "solver", "task_hash": "9f2c...", "group_id": 7, "rollout_id": 31,
     "policy_version": 3, "reward": 1.0, "advantage": 0.866,
     "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."},
                  {"role": "assistant", "content": "..."}, ...],
     "turns": [{"prompt_token_ids": [...], "completion_token_ids": [...], "logprobs": [...]}],
     "meta": {"trajectory_path": "..."}}

Field by field:

``role``
    ``solver`` (a rollout on a task) or ``proposer`` (an episode that wrote a
    task, rewarded by r_P). Both train the same policy; the role is kept so a
    trainer can weight or filter them.
``task_hash``, ``group_id``, ``rollout_id``
    Keys into the store (``tasks.hash``, ``groups.id``, ``rollouts.id``);
    ``-1`` where the sample has no such row (proposer episodes have no group
    in the store: their group is the step's proposer attempts).
``policy_version``
    The policy version that produced this sample (may lag the batch's when a
    resumed step mixes versions; an off-policy-aware trainer can use it).
``reward``, ``advantage``
    The raw reward and the GRPO advantage computed within the sample's group
    (:func:`autoenv.train.grpo.group_advantages`). Trainers use ``advantage``.
``messages``
    The episode as chat messages (OpenAI style: ``role`` in system, user,
    assistant, tool; ``content`` text; assistant ``tool_calls`` and tool
    ``tool_call_id`` where the agent used tools). Always present, so any
    trainer can re-tokenise with its own chat template. An assistant message
    with ``"train": false`` is context only (ATIF copied context) and must not
    be trained on.
``turns`` (optional)
    The exact tokens of each model call, when the endpoint returned them
    (vLLM ``return_token_ids`` / ``logprobs``): ``prompt_token_ids`` (the
    whole context of that call), ``completion_token_ids`` (what the model
    generated) and ``logprobs`` (one per completion token, under the policy
    that sampled it; absent if the endpoint gave none). Training on these
    avoids re-tokenisation drift, and the log-probs give the importance ratio.
``prompt_token_ids``, ``completion_token_ids``, ``logprobs`` (optional)
    Shorthand for a single-call episode (one turn); never together with
    ``turns``.
``meta``
    Free-form provenance (trajectory path, seed case, ...); trainers ignore it.

Absent optional fields are omitted, not written as ``null``. This module
imports nothing but pydantic and :mod:`autoenv.shared.episodes` (pydantic only): the 3.11 training worker and
external trainers read batches with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from autoenv.shared.episodes import TokenTurn

__all__ = ["FORMAT", "FORMAT_VERSION", "TokenTurn", "TrainingSample", "TrainingBatch", "read_batch", "write_batch"]

FORMAT = "autoenv.training-batch"
FORMAT_VERSION = 1


class TrainingSample(BaseModel):
    role: Literal["solver", "proposer"]
    task_hash: str = ""
    group_id: int = -1
    rollout_id: int = -1
    policy_version: int = 0
    messages: list[dict[str, Any]] = Field(default_factory=list)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    turns: list[TokenTurn] | None = None
    reward: float = 0.0
    advantage: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> TrainingSample:
        for message in self.messages:
            if not isinstance(message.get("role"), str):
                raise ValueError(f"message without a role: {message!r}")
        flat = (self.prompt_token_ids, self.completion_token_ids, self.logprobs)
        if any(v is not None for v in flat):
            if self.turns is not None:
                raise ValueError("give either turns or the single-turn prompt/completion ids, not both")
            if self.prompt_token_ids is None or self.completion_token_ids is None:
                raise ValueError("prompt_token_ids and completion_token_ids go together")
            TokenTurn(
                prompt_token_ids=self.prompt_token_ids,
                completion_token_ids=self.completion_token_ids,
                logprobs=self.logprobs,
            )
        if not self.messages and self.token_turns() is None:
            raise ValueError("a sample needs messages or token ids")
        return self

    def token_turns(self) -> list[TokenTurn] | None:
        """The recorded model calls, whichever way they were given; None means re-tokenise ``messages``."""
        if self.turns:
            return self.turns
        if self.completion_token_ids is not None and self.prompt_token_ids is not None:
            return [
                TokenTurn(
                    prompt_token_ids=self.prompt_token_ids,
                    completion_token_ids=self.completion_token_ids,
                    logprobs=self.logprobs,
                )
            ]
        return None


class TrainingBatch(BaseModel):
    run: str
    step: int
    policy_version: int
    samples: list[TrainingSample] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "run": self.run,
            "step": self.step,
            "policy_version": self.policy_version,
            "n_samples": len(self.samples),
            "meta": self.meta,
        }

    def write_jsonl(self, path: Path | str) -> Path:
        """Write atomically (temp file + rename) so a reader never sees half a batch."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.header(), ensure_ascii=False) + "\n")
            for sample in self.samples:
                f.write(json.dumps(sample.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n")
        tmp.replace(path)
        return path

    @classmethod
    def read_jsonl(cls, path: Path | str) -> TrainingBatch:
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f if line.strip()]
        if not lines:
            raise ValueError(f"{path}: empty file, expected an {FORMAT} header line")
        header = json.loads(lines[0])
        if header.get("format") != FORMAT:
            raise ValueError(f"{path}: not an {FORMAT} file (header {header.get('format')!r})")
        if int(header.get("version", 0)) > FORMAT_VERSION:
            raise ValueError(f"{path}: format version {header['version']} is newer than this reader ({FORMAT_VERSION})")
        samples = [TrainingSample.model_validate_json(line) for line in lines[1:]]
        if "n_samples" in header and header["n_samples"] != len(samples):
            raise ValueError(f"{path}: header says {header['n_samples']} samples, file has {len(samples)} (truncated?)")
        return cls(
            run=header["run"],
            step=header["step"],
            policy_version=header["policy_version"],
            samples=samples,
            meta=header.get("meta") or {},
        )


def write_batch(batch: TrainingBatch, path: Path | str) -> Path:
    return batch.write_jsonl(path)


def read_batch(path: Path | str) -> TrainingBatch:
    return TrainingBatch.read_jsonl(path)
