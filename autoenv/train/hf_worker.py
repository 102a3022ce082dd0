"""The training step, run inside the training env (torch + transformers + trl).

``python -m autoenv.train.hf_worker --batch step-00003.jsonl --policy runs/x/train/v3 --out runs/x/train``
loads the policy (a ``save_pretrained`` folder), trains it on the batch and
saves ``<out>/v{N+1}`` (N = the batch's policy version), printing one JSON
result line on stdout (progress goes to stderr).

Why not TRL's ``GRPOTrainer``: it is an *online* trainer. It owns generation
(it samples completions from its dataset's prompts, with the model or its
vLLM server) and scores them with reward functions it calls itself. Our
rollouts are multi-turn terminal episodes that ran in sandboxes long before
training, rewarded by Harbor verifiers, with advantages already computed per
group in the store and proposer episodes (r_P) mixed in; feeding those
through ``GRPOTrainer`` would mean faking its generation and reward hooks.
So the update is written here, following GRPO's loss, and TRL is used where
it fits offline data: its training chat templates (prefix-preserving, with
generation markers, for masking assistant turns of known model families) and
its memory-lean ``selective_log_softmax``.

The objective, per sample i with advantage A_i (GRPO, group-normalised) and
trainable (assistant) tokens t:

    ratio_t = exp(logp_t - old_logp_t)
    obj_i   = sum_t min(ratio_t * A_i, clip(ratio_t, 1 - eps, 1 + eps) * A_i)
    loss    = -mean_i obj_i                       (--loss-agg sum, the default)
            = -sum_i,t (...) / n_tokens          (--loss-agg token-mean, DAPO-style)

``old_logp`` is the endpoint's recorded log-prob of the sampled token when
the trajectory has one (the importance ratio then corrects for sampler /
trainer mismatch and for staleness), else the policy's own log-prob before the
first update of this step (ratio 1 on the first optimizer step, so that step
is exactly the policy gradient -mean(A_i * sum_t logp_t); later steps on the
same batch are clipped as in PPO). No KL-to-reference term: the group
baseline and clipping keep updates small, and a reference model would double
memory (Dr. GRPO / DAPO drop it too). The reported ``loss`` is the policy
gradient loss -mean(A_i * sum_t logp_t) before the update and ``loss_after``
the same after, which is what "the loss went down" means for this step.

Tokens come from the recorded turns when the sample has them (exact ids, no
re-tokenisation drift; consecutive calls whose prompt extends the previous
call's prompt + completion share one sequence), otherwise from the
``messages`` rendered with the policy's chat template, training only on
assistant messages (spans found by rendering prefixes, which needs a
prefix-preserving template; TRL's training template is used when the
tokenizer's is not; :mod:`autoenv.train.tokens`). This module imports no Harbor: it runs on Python 3.11.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autoenv.train.batch import TrainingBatch
from autoenv.train.policy import checkpoint_dir, policy_version, publish_dir, write_policy_meta
from autoenv.train.tokens import Sequence, build_sequences, training_template

BACKEND = "trl"


def log(message: str) -> None:
    print(f"[hf_worker] {message}", file=sys.stderr, flush=True)


# -- the update -------------------------------------------------------------------------


@dataclass
class StepConfig:
    lr: float = 1e-5
    steps: int = 1
    micro_batch_size: int = 4
    max_length: int = 4096
    clip_eps: float = 0.2
    loss_agg: str = "sum"
    grad_clip: float = 1.0
    weight_decay: float = 0.0
    proposer_weight: float = 1.0
    seed: int = 0
    device: str = "auto"
    gradient_checkpointing: bool = False


def _token_logprobs(model: Any, sequences: list[Sequence], device: Any, pad_id: int) -> list[Any]:
    """Per-position log-prob of each sequence's own next token (index p: log p(ids[p] | ids[:p]); index 0 is 0)."""
    import torch

    selective_log_softmax = _selective_log_softmax(device)

    length = max(len(s.ids) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    attention = torch.zeros((len(sequences), length), dtype=torch.long)
    for row, s in enumerate(sequences):
        ids[row, : len(s.ids)] = torch.tensor(s.ids)
        attention[row, : len(s.ids)] = 1
    ids, attention = ids.to(device), attention.to(device)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else _null()
    with autocast:
        logits = model(input_ids=ids, attention_mask=attention).logits
    logps = selective_log_softmax(logits[:, :-1].float(), ids[:, 1:])
    logps = torch.nn.functional.pad(logps, (1, 0))
    return [logps[row, : len(s.ids)] for row, s in enumerate(sequences)]


def _selective_log_softmax(device: Any) -> Any:
    """TRL's row-chunked log-softmax gather on GPU, where a (batch, length, vocab) log-softmax is what runs out of
    memory; on CPU the plain equivalent, since importing TRL costs seconds and saves nothing at that scale."""
    import torch

    if device.type != "cpu":
        try:
            from trl.trainer.utils import selective_log_softmax

            return selective_log_softmax
        except ImportError:
            pass

    def plain(logits: Any, index: Any) -> Any:
        return torch.gather(logits.log_softmax(-1), -1, index.unsqueeze(-1)).squeeze(-1)

    return plain


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), max(1, size))]


def train_on_batch(
    batch: TrainingBatch,
    policy_dir: Path,
    out_dir: Path,
    config: StepConfig,
    *,
    version_out: int | None = None,
    batch_path: str | None = None,
) -> dict[str, Any]:
    """Load, train ``config.steps`` optimizer steps, save ``v{N}``; returns the JSON-able result."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    started = time.monotonic()
    torch.manual_seed(config.seed)
    device = torch.device(
        "cuda"
        if config.device == "auto" and torch.cuda.is_available()
        else ("cpu" if config.device == "auto" else config.device)
    )
    version_in = batch.policy_version
    version_out = version_out if version_out is not None else version_in + 1
    result: dict[str, Any] = {
        "backend": BACKEND,
        "policy_version_in": version_in,
        "policy_dir": str(policy_dir),
        "n_samples": 0,
        "n_batch_samples": len(batch.samples),
        "device": str(device),
    }

    tokenizer = AutoTokenizer.from_pretrained(policy_dir)
    template, template_source = training_template(tokenizer)
    model = AutoModelForCausalLM.from_pretrained(policy_dir, dtype=torch.float32).to(device)
    vocab_size = model.get_input_embeddings().weight.shape[0]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    sequences, used, skipped = build_sequences(
        batch,
        tokenizer,
        template,
        vocab_size=vocab_size,
        max_length=config.max_length,
        proposer_weight=config.proposer_weight,
    )
    roles = Counter(batch.samples[i].role for i in used)
    result.update(
        n_samples=len(used),
        n_sequences=len(sequences),
        n_tokens=sum(sum(s.mask) for s in sequences),
        skipped=dict(skipped),
        roles=dict(roles),
        chat_template=template_source,
        token_source=dict(Counter(s.source for s in sequences)),
        truncated=sum(s.truncated for s in sequences),
    )
    if not sequences:
        log("nothing to train on: policy unchanged")
        result.update(
            loss=None,
            loss_after=None,
            checkpoint=str(policy_dir),
            policy_version_out=version_in,
            train_sec=round(time.monotonic() - started, 3),
        )
        return result

    n_used = len(used)
    n_tokens = result["n_tokens"]
    masks = [torch.tensor(s.mask, dtype=torch.float32, device=device) for s in sequences]
    advantages = [torch.tensor(s.advantage, dtype=torch.float32, device=device) for s in sequences]
    denominator = float(n_used if config.loss_agg == "sum" else n_tokens)

    def evaluate() -> tuple[float, float, list[Any]]:
        """Policy-gradient loss and mean trained-token log-prob, without gradients."""
        model.eval()
        total, logp_sum, per_seq = 0.0, 0.0, []
        with torch.no_grad():
            for chunk in _chunks(list(range(len(sequences))), config.micro_batch_size):
                for k, lp in zip(chunk, _token_logprobs(model, [sequences[k] for k in chunk], device, pad_id)):
                    lp = lp.float()
                    per_seq.append(lp)
                    total += float(-(advantages[k] * (lp * masks[k]).sum()))
                    logp_sum += float((lp * masks[k]).sum())
        return total / denominator, logp_sum / n_tokens, per_seq

    loss_before, logp_before, initial = evaluate()
    olds = []
    n_recorded = 0
    for k, (s, lp) in enumerate(zip(sequences, initial)):
        recorded = torch.tensor(s.old, dtype=torch.float32, device=device)
        known = ~torch.isnan(recorded)
        n_recorded += int((known & (masks[k] > 0)).sum())
        olds.append(torch.where(known, recorded, lp))
    log(
        f"{n_used} samples, {len(sequences)} sequences, {n_tokens} trained tokens ({n_recorded} with recorded "
        f"logprobs); "
        f"pg loss {loss_before:.4f}, mean logp {logp_before:.4f}, device {device}"
    )

    for (
        module
    ) in model.modules():  # dropout would make the first step's ratio != 1 and the update noisier than its loss says
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=config.lr, weight_decay=config.weight_decay
    )
    surrogate_losses, grad_norms, clip_fracs = [], [], []
    for step in range(config.steps):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        step_loss, clipped, counted = 0.0, 0.0, 0.0
        for chunk in _chunks(list(range(len(sequences))), config.micro_batch_size):
            logps = _token_logprobs(model, [sequences[k] for k in chunk], device, pad_id)
            loss = torch.zeros((), device=device)
            for k, lp in zip(chunk, logps):
                ratio = torch.exp(lp.float() - olds[k])
                low, high = 1.0 - config.clip_eps, 1.0 + config.clip_eps
                surrogate = torch.minimum(ratio * advantages[k], torch.clamp(ratio, low, high) * advantages[k])
                loss = loss - (surrogate * masks[k]).sum() / denominator
                with torch.no_grad():
                    clipped += float((((ratio < low) | (ratio > high)).float() * masks[k]).sum())
                    counted += float(masks[k].sum())
            loss.backward()
            step_loss += float(loss.detach())
        grad_norm = (
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip) if config.grad_clip > 0 else None
        )
        optimizer.step()
        surrogate_losses.append(step_loss)
        grad_norms.append(float(grad_norm) if grad_norm is not None else None)
        clip_fracs.append(clipped / max(1.0, counted))
        log(
            f"step {step + 1}/{config.steps}: surrogate loss {step_loss:.4f}, grad norm {grad_norms[-1]}, clip frac "
            f"{clip_fracs[-1]:.3f}"
        )

    loss_after, logp_after, final = evaluate()
    approx_kl = sum(float(((i - f) * m).sum()) for i, f, m in zip(initial, final, masks)) / n_tokens
    log(
        f"pg loss {loss_before:.4f} -> {loss_after:.4f}, mean logp {logp_before:.4f} -> {logp_after:.4f}, approx KL "
        f"{approx_kl:.5f}"
    )

    if config.gradient_checkpointing:
        model.gradient_checkpointing_disable()
    if not tokenizer.chat_template:
        tokenizer.chat_template = template  # serve the new checkpoint with the template it was trained with
    checkpoint = save_checkpoint(
        model,
        tokenizer,
        out_dir,
        version_out,
        meta={
            "parent": str(policy_dir),
            "parent_version": version_in,
            "run": batch.run,
            "step": batch.step,
            "backend": BACKEND,
            "batch": batch_path,
            "n_samples": n_used,
            "loss": loss_before,
            "loss_after": loss_after,
        },
    )
    result.update(
        loss=loss_before,
        loss_after=loss_after,
        surrogate_losses=surrogate_losses,
        grad_norms=grad_norms,
        clip_fracs=clip_fracs,
        mean_logprob_before=logp_before,
        mean_logprob_after=logp_after,
        approx_kl=approx_kl,
        n_recorded_logprobs=n_recorded,
        checkpoint=str(checkpoint),
        policy_version_out=version_out,
        config=dict(config.__dict__),
        train_sec=round(time.monotonic() - started, 3),
    )
    return result


def save_checkpoint(model: Any, tokenizer: Any, out_dir: Path, version: int, *, meta: dict[str, Any]) -> Path:
    """Save ``<out>/v{version}`` whole or not at all (:func:`~autoenv.train.policy.publish_dir`)."""

    def fill(tmp: Path) -> None:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        write_policy_meta(tmp, version=version, **meta)

    return publish_dir(checkpoint_dir(out_dir, version), fill)


# -- CLI --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autoenv.train.hf_worker", description="One GRPO training step on a recorded batch."
    )
    parser.add_argument("--batch", required=True, type=Path, help="training batch JSONL (autoenv.train.batch format)")
    parser.add_argument("--policy", required=True, type=Path, help="policy checkpoint (save_pretrained folder)")
    parser.add_argument("--out", required=True, type=Path, help="folder that receives v{N} checkpoints")
    parser.add_argument("--result", type=Path, help="also write the JSON result here")
    parser.add_argument(
        "--version-out", type=int, help="version of the new checkpoint (default: batch policy_version + 1)"
    )
    defaults = StepConfig()
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--steps", type=int, default=defaults.steps, help="optimizer steps on the batch")
    parser.add_argument(
        "--micro-batch-size", type=int, default=defaults.micro_batch_size, help="sequences per forward pass"
    )
    parser.add_argument(
        "--max-length", type=int, default=defaults.max_length, help="longer sequences keep their last tokens"
    )
    parser.add_argument("--clip-eps", type=float, default=defaults.clip_eps)
    parser.add_argument("--loss-agg", choices=["sum", "token-mean"], default=defaults.loss_agg)
    parser.add_argument("--grad-clip", type=float, default=defaults.grad_clip)
    parser.add_argument("--weight-decay", type=float, default=defaults.weight_decay)
    parser.add_argument(
        "--proposer-weight",
        type=float,
        default=defaults.proposer_weight,
        help="advantage multiplier for proposer samples",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--device", default=defaults.device, help="auto (cuda if present), cpu, cuda, cuda:1, ...")
    parser.add_argument("--gradient-checkpointing", action="store_true")
    args = parser.parse_args(argv)

    batch = TrainingBatch.read_jsonl(args.batch)
    config = StepConfig(
        lr=args.lr,
        steps=args.steps,
        micro_batch_size=args.micro_batch_size,
        max_length=args.max_length,
        clip_eps=args.clip_eps,
        loss_agg=args.loss_agg,
        grad_clip=args.grad_clip,
        weight_decay=args.weight_decay,
        proposer_weight=args.proposer_weight,
        seed=args.seed,
        device=args.device,
        gradient_checkpointing=args.gradient_checkpointing,
    )
    if policy_version(args.policy, default=batch.policy_version) != batch.policy_version:
        log(
            f"note: {args.policy} declares version {policy_version(args.policy)}, the batch was collected with "
            f"v{batch.policy_version}"
        )
    result = train_on_batch(
        batch, args.policy, args.out, config, version_out=args.version_out, batch_path=str(args.batch)
    )
    text = json.dumps(result, default=str)
    if args.result:
        args.result.parent.mkdir(parents=True, exist_ok=True)
        args.result.write_text(text + "\n", encoding="utf-8")
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
