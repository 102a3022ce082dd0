"""Run in the training env by test_served_policy.py: which checkpoint's weights give the recorded log-probs?

Reads a JSON list of recorded turns ``{"prompt_token_ids", "completion_token_ids", "logprobs"}``,
teacher-forces each under every checkpoint given and prints, per checkpoint, the largest
difference between the recorded log-probs and that checkpoint's. Not a pytest module.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM


def logprobs(model, prompt: list[int], completion: list[int]) -> list[float]:
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    lp = torch.log_softmax(logits[:-1], -1).gather(-1, ids[0, 1:].unsqueeze(-1)).squeeze(-1)
    return [float(x) for x in lp[len(prompt) - 1 :]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=Path, required=True)
    parser.add_argument("checkpoints", nargs="+", type=Path)
    args = parser.parse_args()
    turns = json.loads(args.turns.read_text())
    out = {}
    for checkpoint in args.checkpoints:
        model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32).eval()
        worst = 0.0
        for turn in turns:
            mine = logprobs(model, turn["prompt_token_ids"], turn["completion_token_ids"])
            worst = max(worst, max(abs(a - b) for a, b in zip(mine, turn["logprobs"])))
        out[checkpoint.name] = worst
    print(json.dumps({"max_abs_diff": out, "turns": len(turns)}))


if __name__ == "__main__":
    main()
