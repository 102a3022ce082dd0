"""Supervised fine-tuning with TRL's ``SFTTrainer``, run inside the training env: the Cold-Start step.

``python -m autoenv.train.sft_worker --data episodes.jsonl --policy BASE --out DIR`` trains the policy on the
samples of a training batch file (:mod:`autoenv.train.batch`'s format: what :mod:`autoenv.train.sft` collects
from a store) and saves the result to ``DIR`` as policy version 0, printing one JSON result line.

Each sample is trained as the conversation was lived: the recorded token turns when the policy's tokenizer made
them (exact ids), else the messages rendered with the policy's training chat template (and the tools the
conversation was held with), with the loss on assistant tokens only and every other token (briefs, tool results,
validator feedback) masked. The tokenised rows go to ``SFTTrainer`` as a pre-tokenised dataset (``input_ids`` +
``assistant_masks``), so TRL does batching, padding, the loss and the optimizer, and autoenv only decides which
tokens are the policy's. No Harbor here: this runs on Python 3.11.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from autoenv.train.batch import TrainingBatch
from autoenv.train.policy import publish_dir, read_policy_meta, write_policy_meta

__all__ = ["encode_batch", "sft_train", "main"]


def log(message: str) -> None:
    print(f"[sft_worker] {message}", file=sys.stderr, flush=True)


def encode_batch(
    batch: TrainingBatch, tokenizer: Any, *, max_length: int
) -> tuple[list[dict[str, list[int]]], Counter]:
    """Rows of ``input_ids`` and ``assistant_masks`` (1: a token the policy wrote), and why samples were skipped.

    The GRPO worker's sequences (:func:`~autoenv.train.tokens.build_sequences`): the same tokens, masks and
    truncation, so a policy imitates exactly what it would be reinforced on.
    """
    from autoenv.train.tokens import build_sequences, training_template

    template, _ = training_template(tokenizer)
    sequences, _, skipped = build_sequences(
        batch, tokenizer, template, vocab_size=len(tokenizer), max_length=max_length
    )
    return [{"input_ids": s.ids, "assistant_masks": s.mask} for s in sequences], skipped


def sft_train(
    rows: list[dict[str, list[int]]],
    policy: Path,
    out: Path,
    *,
    steps: int = 100,
    lr: float = 1e-4,
    batch_size: int = 4,
    seed: int = 0,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train ``policy`` on ``rows`` with TRL's ``SFTTrainer`` for ``steps`` optimizer steps; save it whole to ``out``.

    ``out`` receives the model, the tokenizer and ``autoenv_policy.json`` (version 0, parent ``policy``), written
    aside and renamed into place, so a crash leaves no half checkpoint a flywheel would start from.
    """
    import torch
    import transformers
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    if not rows:
        raise ValueError("no sample with tokens to train on")
    transformers.utils.logging.disable_progress_bar()
    started = time.monotonic()
    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(policy)
    model = AutoModelForCausalLM.from_pretrained(policy)
    with tempfile.TemporaryDirectory(prefix="autoenv-sft-") as scratch:
        config = SFTConfig(
            output_dir=scratch,
            max_steps=steps,
            learning_rate=lr,
            per_device_train_batch_size=batch_size,
            lr_scheduler_type="constant",
            warmup_steps=0,
            logging_steps=1,
            save_strategy="no",
            report_to="none",
            seed=seed,
            use_cpu=not torch.cuda.is_available(),
            max_length=None,
            dataset_num_proc=None,
            disable_tqdm=True,
            gradient_checkpointing=False,  # TRL turns it on by default: it trades time for memory a small model has
            # TRL defaults to bf16 autocast, ~10x slower than float32 on CPUs without AMX (measured here)
            bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        )
        trainer = SFTTrainer(
            model=model, args=config, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
        )
        trainer.train()
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    chat_format = (read_policy_meta(policy) or {}).get("chat_format")

    def fill(tmp: Path) -> None:
        trainer.model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        write_policy_meta(tmp, version=0, parent=str(policy), backend="sft", chat_format=chat_format, **(meta or {}))

    out = publish_dir(Path(out).resolve(), fill)
    return {
        "checkpoint": str(out),
        "rows": len(rows),
        "tokens_trained": sum(sum(r["assistant_masks"]) for r in rows),
        "steps": steps,
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "losses": losses,
        "seconds": round(time.monotonic() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autoenv.train.sft_worker", description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="samples to imitate (training batch JSONL)")
    parser.add_argument("--policy", required=True, type=Path, help="the policy to start from (save_pretrained folder)")
    parser.add_argument("--out", required=True, type=Path, help="folder for the fine-tuned policy")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--meta", type=json.loads, default={}, help="JSON fields for autoenv_policy.json")
    args = parser.parse_args(argv)

    from transformers import AutoTokenizer

    batch = TrainingBatch.read_jsonl(args.data)
    rows, skipped = encode_batch(batch, AutoTokenizer.from_pretrained(args.policy), max_length=args.max_length)
    log(f"{len(batch.samples)} samples -> {len(rows)} sequences; skipped: {dict(skipped) or 'none'}")
    result = sft_train(
        rows,
        args.policy,
        args.out,
        steps=args.steps,
        lr=args.lr,
        batch_size=args.batch_size,
        seed=args.seed,
        meta={"samples": len(batch.samples), **args.meta},
    )
    result["skipped"] = dict(skipped)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
