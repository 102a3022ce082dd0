"""Checks that need torch, run by test_hf_trainer.py inside the training env (.venv-train, Python 3.11).

Not a pytest module (the main venv has no torch): it prints one JSON object of
measurements, and the pytest side asserts on them. Usage:
``python tests/train/worker_checks.py --v0 DIR --v1 DIR --work DIR``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from autoenv.train.batch import TokenTurn, TrainingBatch, TrainingSample
from autoenv.train.hf_worker import StepConfig, train_on_batch
from autoenv.train.policy import read_policy_meta
from autoenv.train.tokens import TemplateError, encode_messages, encode_turns, training_template

PROMPT = [{"role": "user", "content": "Is the sky blue? Answer yes or no."}]


def completion_logprob(model, tokenizer, messages, completion: str) -> float:
    """Sum of log p(completion tokens | prompt) under the chat template, computed independently of the worker."""
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    full = tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": completion}], tokenize=False)
    assert full.startswith(prompt)
    p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    ids = tokenizer(full, add_special_tokens=False)["input_ids"]
    assert ids[: len(p_ids)] == p_ids
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids])).logits[0]
    logps = torch.log_softmax(logits[:-1].float(), -1).gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1)
    return float(logps[len(p_ids) - 1 :].sum())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--v0", type=Path, required=True)
    parser.add_argument("--v1", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    out: dict = {}

    # reload both checkpoints with plain transformers: the new one is a complete HF model folder
    tok = AutoTokenizer.from_pretrained(args.v1)
    m0 = AutoModelForCausalLM.from_pretrained(args.v0).eval()
    m1 = AutoModelForCausalLM.from_pretrained(args.v1).eval()
    out["v1_has_chat_template"] = bool(tok.chat_template)
    out["v1_meta"] = read_policy_meta(args.v1)
    for name, model in (("v0", m0), ("v1", m1)):
        out[f"logp_yes_{name}"] = completion_logprob(model, tok, PROMPT, "yes")
        out[f"logp_no_{name}"] = completion_logprob(model, tok, PROMPT, "no")
    p0, p1 = dict(m0.named_parameters()), dict(m1.named_parameters())
    out["n_params"] = len(p0)
    out["n_params_changed"] = sum(not torch.equal(p0[k], p1[k]) for k in p0)
    out["max_weight_change"] = max(float((p0[k] - p1[k]).abs().max()) for k in p0)

    # assistant-token masking on a multi-turn tool conversation, with a context-only assistant turn
    template, source = training_template(tok)
    out["template_source"] = source
    conversation = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {
            "role": "assistant",
            "content": "look",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "run", "arguments": {"command": "ls"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
        {"role": "assistant", "content": "old context", "train": False},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "done"},
    ]
    ids, mask = encode_messages(tok, template, conversation)
    out["masked_text"] = tok.decode([i for i, k in zip(ids, mask) if k])
    out["unmasked_text"] = tok.decode([i for i, k in zip(ids, mask) if not k])

    # a template that rewrites earlier assistant turns (as thinking templates do) cannot be masked by prefixes
    dropping = (
        "{% for m in messages %}{% if m['role'] != 'assistant' or loop.last %}{{ m['content'] }}|{% endif %}{% endfor "
        "%}"
    )
    try:
        encode_messages(tok, dropping, conversation)
        out["non_prefix_template"] = "accepted"
    except TemplateError as exc:
        out["non_prefix_template"] = str(exc)

    # recorded turns: a call that extends the previous one shares its sequence, an unrelated one starts another
    seqs = encode_turns(
        [
            TokenTurn(prompt_token_ids=[1, 2, 3], completion_token_ids=[4, 5], logprobs=[-0.5, -0.25]),
            TokenTurn(prompt_token_ids=[1, 2, 3, 4, 5, 6], completion_token_ids=[7]),
            TokenTurn(prompt_token_ids=[9, 9], completion_token_ids=[8], logprobs=[-2.0]),
        ]
    )
    out["turn_sequences"] = [[ids, mask, [None if math.isnan(x) else x for x in old]] for ids, mask, old in seqs]

    # training from recorded ids + endpoint logprobs (the importance-ratio path), with one sample whose ids come from
    # another tokenizer (out of vocabulary) falling back to its messages
    prompt_ids = tok(
        tok.apply_chat_template(PROMPT, tokenize=False, add_generation_prompt=True), add_special_tokens=False
    )["input_ids"]
    samples = []
    for i, (text, adv) in enumerate([("yes", 1.0), ("no", -1.0), ("yes", 1.0), ("no", -1.0)]):
        completion = tok(text + "<|end|>", add_special_tokens=False)["input_ids"]
        with torch.no_grad():  # what a sampler would have reported, slightly off as vLLM's are
            logits = m1(input_ids=torch.tensor([prompt_ids + completion])).logits[0]
        lp = (
            torch.log_softmax(logits.float(), -1)[len(prompt_ids) - 1 : -1]
            .gather(-1, torch.tensor(completion).unsqueeze(-1))
            .squeeze(-1)
        )
        samples.append(
            TrainingSample(
                role="solver",
                task_hash="t",
                group_id=1,
                rollout_id=i,
                policy_version=1,
                reward=max(adv, 0.0),
                advantage=adv,
                messages=PROMPT + [{"role": "assistant", "content": text}],
                prompt_token_ids=prompt_ids,
                completion_token_ids=completion,
                logprobs=[x - 0.01 for x in lp.tolist()],
            )
        )
    samples.append(
        TrainingSample(
            role="proposer",
            policy_version=1,
            reward=1.0,
            advantage=1.0,
            messages=PROMPT + [{"role": "assistant", "content": "yes"}],
            prompt_token_ids=[10**6],
            completion_token_ids=[10**6 + 1],
        )
    )
    batch = TrainingBatch(run="checks", step=1, policy_version=1, samples=samples)
    result = train_on_batch(batch, args.v1, args.work, StepConfig(lr=3e-3, steps=2, clip_eps=0.2))
    out["recorded_run"] = {
        k: result[k]
        for k in (
            "loss",
            "loss_after",
            "n_samples",
            "n_recorded_logprobs",
            "token_source",
            "skipped",
            "policy_version_out",
            "checkpoint",
            "clip_fracs",
            "roles",
        )
    }
    # every module of the package imports on 3.11 without Harbor (the flywheel side is the only Harbor user)
    import autoenv.train.backends  # noqa: E401,F401

    out["python"] = list(sys.version_info[:2])
    out["harbor_imported"] = sorted(m for m in sys.modules if m == "harbor" or m.startswith("harbor."))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
