"""A training sample as token sequences: what the GRPO and SFT workers train on.

From the exact token turns where the endpoint returned them (no re-tokenisation drift; consecutive calls whose
prompt extends the previous call's prompt + completion share one sequence), otherwise from the ``messages``
rendered with the policy's chat template, training only on assistant messages (spans found by rendering prefixes,
which needs a prefix-preserving template; TRL's training template is used when the tokenizer's is not). Imports no
Harbor: it runs in the training env on Python 3.11.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from autoenv.train.batch import TokenTurn, TrainingBatch, TrainingSample


class TemplateError(ValueError):
    """The chat template cannot delimit assistant turns for this sample."""


@dataclass
class Sequence:
    """One forward pass: token ids, which positions are trained, and their sampling log-probs (NaN: unknown)."""

    sample: int
    ids: list[int]
    mask: list[int]
    old: list[float]
    advantage: float
    source: str  # recorded | retokenised
    truncated: bool = False


def training_template(tokenizer: Any) -> tuple[str, str]:
    """The template to render messages with, and where it came from.

    A tokenizer without a template gets the tiny policy's generic one (and the
    saved checkpoint keeps it, so serving renders prompts the same way).
    """
    from autoenv.train.tiny import CHAT_TEMPLATE

    template = tokenizer.chat_template
    if isinstance(template, dict):
        template = template.get("default")
    if not template:
        return CHAT_TEMPLATE, "autoenv-default"
    if re.search(r"\{%-?\s*generation\s*-?%\}", template):
        return template, "tokenizer"  # written for training already; prefix-preservation is still checked per sample
    try:
        from trl.chat_template_utils import get_training_chat_template

        patched = get_training_chat_template(tokenizer)
    except ValueError:
        return template, "tokenizer (unpatched: prefix-checked per sample)"
    except ImportError:
        return template, "tokenizer (trl not installed)"
    return (patched, "trl-training") if patched else (template, "tokenizer")


def _render(
    tokenizer: Any,
    template: str,
    messages: list[dict[str, Any]],
    generation_prompt: bool = False,
    tools: list[dict[str, Any]] | None = None,
) -> str:
    clean = [{k: v for k, v in m.items() if k != "train"} for m in messages]
    return tokenizer.apply_chat_template(
        clean, chat_template=template, tokenize=False, add_generation_prompt=generation_prompt, tools=tools
    )


def encode_messages(
    tokenizer: Any, template: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> tuple[list[int], list[int]]:
    """Token ids of the rendered conversation and a 0/1 mask of trainable assistant tokens.

    ``tools``: the JSON schemas the conversation was held with, for templates that render them (Qwen3's
    system block), so training sees the context the policy will be sampled in.
    """
    import jinja2  # the chat templates' engine (a dependency of transformers)

    full = _render(tokenizer, template, messages, tools=tools)
    spans: list[tuple[int, int]] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant" or message.get("train") is False:
            continue
        upto = _render(tokenizer, template, messages[: i + 1], tools=tools)
        if not full.startswith(upto):
            raise TemplateError(f"chat template is not prefix-preserving at message {i}")
        try:
            before = _render(tokenizer, template, messages[:i], generation_prompt=True, tools=tools) if i else ""
        except (
            ValueError,
            jinja2.TemplateError,
        ):  # some templates refuse a conversation that does not start with a user turn
            before = ""
        start = 0
        for a, b in zip(before, upto):
            if a != b:
                break
            start += 1
        if len(upto) > start:
            spans.append((start, len(upto)))
    encoding = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(encoding["input_ids"])
    mask = [0] * len(ids)
    for j, (s, e) in enumerate(encoding["offset_mapping"]):
        if e > s and any(a <= s < b for a, b in spans):
            mask[j] = 1
    return ids, mask


def encode_turns(turns: list[TokenTurn]) -> list[tuple[list[int], list[int], list[float]]]:
    """Recorded calls as sequences: a call whose prompt extends the previous sequence continues it."""
    sequences: list[tuple[list[int], list[int], list[float]]] = []
    ids: list[int] = []
    mask: list[int] = []
    old: list[float] = []
    for turn in turns:
        prompt = list(turn.prompt_token_ids)
        if ids and len(prompt) >= len(ids) and prompt[: len(ids)] == ids:
            extra = prompt[len(ids) :]
        else:
            if ids:
                sequences.append((ids, mask, old))
            ids, mask, old, extra = [], [], [], prompt
        ids += extra
        mask += [0] * len(extra)
        old += [math.nan] * len(extra)
        ids += turn.completion_token_ids
        mask += [1] * len(turn.completion_token_ids)
        old += list(turn.logprobs) if turn.logprobs is not None else [math.nan] * len(turn.completion_token_ids)
    if ids:
        sequences.append((ids, mask, old))
    return sequences


def build_sequences(
    batch: TrainingBatch,
    tokenizer: Any,
    template: str,
    *,
    vocab_size: int,
    max_length: int,
    proposer_weight: float = 1.0,
) -> tuple[list[Sequence], list[int], Counter]:
    """Every sample as sequences to train on; returns them, the indices of samples used, and why others were skipped."""
    sequences: list[Sequence] = []
    used: list[int] = []
    skipped: Counter = Counter()
    for index, sample in enumerate(batch.samples):
        advantage = sample.advantage * (proposer_weight if sample.role == "proposer" else 1.0)
        if advantage == 0.0 or not math.isfinite(advantage):
            skipped["zero_advantage"] += 1
            continue
        parts = sample_parts(sample, tokenizer, template, vocab_size, skipped)
        kept = []
        for ids, mask, old, source in parts:
            truncated = len(ids) > max_length
            if truncated:  # keep the end: the latest context and turns, which the reward judged
                ids, mask, old = ids[-max_length:], mask[-max_length:], old[-max_length:]
            mask[0] = 0  # the first token has no context to be predicted from
            if sum(mask):
                kept.append(Sequence(index, ids, mask, old, advantage, source, truncated))
        if not kept:
            skipped["no_trainable_tokens"] += 1
            continue
        sequences += kept
        used.append(index)
    return sequences, used, skipped


def sample_parts(
    sample: TrainingSample, tokenizer: Any, template: str, vocab_size: int, skipped: Counter
) -> list[tuple[list[int], list[int], list[float], str]]:
    turns = sample.token_turns()
    if turns:
        encoded = encode_turns(turns)
        if all(0 <= t < vocab_size for ids, _, _ in encoded for t in ids):
            return [(ids, mask, old, "recorded") for ids, mask, old in encoded]
        skipped["recorded_ids_out_of_vocab_retokenised"] += 1  # ids from another tokenizer: not this policy's samples
    if not sample.messages:
        return []
    try:
        ids, mask = encode_messages(tokenizer, template, sample.messages, sample.meta.get("tools"))
    except TemplateError:
        skipped["template_not_prefix_preserving"] += 1
        return []
    return [(ids, mask, [math.nan] * len(ids), "retokenised")]
