"""Train a policy with TRL's GRPOTrainer on autoenv's sandbox and grading (CPU, tiny policy, bundled tasks).

    .venv-train/bin/python examples/trl_grpo.py --out runs/trl-grpo --steps 2

TRL's own Harbor integration (``trl.experimental.harbor.HarborSpec``) turns the task folder into the trainer's
dataset, environment factory and reward; the environment is autoenv's (``AutoenvBashEnv``): each rollout is a
real autoenv trial in its sandbox, and its reward the verdict of the task's tests in a fresh sandbox.

The tiny policy is built here (no download) in Qwen3's chat format, which TRL parses tool calls from. A model
with random weights never calls a tool, so every rollout would score 0 and GRPO would have no signal; the
example first gives it a Cold Start with TRL's SFTTrainer (``autoenv.train.sft_worker``) on two demonstrations
per task: the task's reference solution run through the ``bash`` tool, and a look around (``ls /app``) that
solves nothing. The policy then samples one or the other (and corruptions of both), so a group of rollouts has
rewards that differ, and the GRPO step has a gradient. With a real model, skip the Cold Start (``--cold-start-
steps 0``), point ``--policy`` at it, and sample at ``--temperature 1``.

Prints one JSON line: per step TRL's logged reward, reward std and grad norm, every rollout's reward with its
trial folder, and where the policy was saved.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
TASKS = REPO / "examples" / "tasks"


def demonstrations(task_dirs: list[Path], suffix: str, tool_schema: dict) -> list[dict]:
    """Two conversations per task, as TRL will render the rollout: the reference solution, and a look around."""
    samples = []
    for task in task_dirs:
        instruction = (task / "instruction.md").read_text(encoding="utf-8") + suffix
        for command, output in (
            ((task / "solution" / "solve.sh").read_text(encoding="utf-8"), "(the solution's output)"),
            ("ls /app", "(a listing)"),
        ):
            call = {"type": "function", "function": {"name": "bash", "arguments": {"command": command}}}
            samples.append(
                {
                    "role": "solver",
                    "messages": [
                        {"role": "user", "content": instruction},
                        {"role": "assistant", "content": "", "tool_calls": [call]},
                        {"role": "tool", "name": "bash", "content": output},
                        {"role": "assistant", "content": "Done."},
                    ],
                    "reward": 1.0,
                    "advantage": 1.0,
                    "meta": {"tools": [tool_schema], "demonstration": task.name},
                }
            )
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "trl-grpo")
    parser.add_argument("--tasks", default="fix-median-bug", help="comma-separated bundled task names")
    parser.add_argument("--env", default="local", help="autoenv backend for the trials: local or docker")
    parser.add_argument("--policy", type=Path, help="start from this save_pretrained folder (default: tiny)")
    parser.add_argument("--steps", type=int, default=2, help="GRPO steps")
    parser.add_argument("--num-generations", type=int, default=4, help="rollouts per task per step (a group)")
    parser.add_argument("--cold-start-steps", type=int, default=120, help="SFT steps on the demonstrations")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.5,
        help="sampling temperature of the rollouts (0.5 keeps the briefly cold-started tiny policy near its two "
        "demonstrations, so a group holds both rewards; 1.0 is the usual value for a real model)",
    )
    parser.add_argument("--max-completion-length", type=int, default=768)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoTokenizer
    from transformers.utils import get_json_schema
    from trl import GRPOConfig, GRPOTrainer
    from trl.experimental.harbor import HarborSpec

    from autoenv.integrations.trl import AutoenvBashEnv
    from autoenv.train.batch import TrainingBatch
    from autoenv.train.sft_worker import encode_batch, sft_train
    from autoenv.train.tiny import DEFAULT_CORPUS, build_tiny_policy

    started = time.monotonic()
    out = args.out.resolve()
    names = [n.strip() for n in args.tasks.split(",") if n.strip()]
    task_dirs = [TASKS / n for n in names]
    missing = [str(t) for t in task_dirs if not (t / "task.toml").is_file()]
    if missing:
        print(f"trl_grpo: not bundled tasks: {', '.join(missing)} (see {TASKS})", file=sys.stderr)
        return 2

    policy = args.policy
    if policy is None:
        corpus = DEFAULT_CORPUS + [(t / "solution" / "solve.sh").read_text() for t in task_dirs]
        corpus += [(t / "instruction.md").read_text() for t in task_dirs]
        policy = build_tiny_policy(out / "base", corpus, seed=args.seed, hidden_size=128, chat_format="qwen3")

    tool_schema = get_json_schema(AutoenvBashEnv.bash)
    tool_schema["function"]["parameters"]["properties"].pop("self", None)
    if "self" in tool_schema["function"]["parameters"].get("required", []):
        tool_schema["function"]["parameters"]["required"].remove("self")
    cold = None
    if args.cold_start_steps > 0:
        batch = TrainingBatch.model_validate(
            {"run": "demonstrations", "step": 0, "policy_version": 0,
             "samples": demonstrations(task_dirs, AutoenvBashEnv.PROMPT_SUFFIX, tool_schema)}
        )  # fmt: skip
        rows, _ = encode_batch(batch, AutoTokenizer.from_pretrained(policy), max_length=4096)
        cold = sft_train(
            rows, policy, out / "cold-start", steps=args.cold_start_steps, lr=3e-3, batch_size=4, seed=args.seed
        )
        policy = Path(cold["checkpoint"])

    all_dirs = sorted(p.parent for p in TASKS.glob("*/task.toml"))
    spec = HarborSpec(
        str(TASKS),
        agent=AutoenvBashEnv,
        environment_type=args.env,
        indices=[all_dirs.index(t) for t in task_dirs],
        include_metadata=False,
    )
    rollouts: list[dict] = []

    def reward(environments=None, **kwargs) -> list[float]:
        """TRL's Harbor reward (each environment's verdict), with the trial folders kept for the summary."""
        values = spec.reward_funcs(environments=environments, **kwargs)
        for env, value in zip(environments, values):
            rollouts.append({"reward": value, "trial_dir": (env.verdict or {}).get("trial_dir")})
        return values

    config = GRPOConfig(
        output_dir=str(out / "grpo"),
        max_steps=args.steps,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.num_generations * len(task_dirs),
        learning_rate=args.lr,
        beta=0.0,
        temperature=args.temperature,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=2,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=True,
        gradient_checkpointing=False,
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),  # bf16 autocast is ~10x slower on CPU
    )
    trainer = GRPOTrainer(
        model=str(policy),
        args=config,
        train_dataset=spec.train_dataset,
        environment_factory=spec.environment_factory,
        reward_funcs=reward,
    )
    trainer.train()
    trainer.save_model(str(out / "policy"))
    steps = [
        {k: entry.get(k) for k in ("step", "reward", "reward_std", "grad_norm", "loss")}
        for entry in trainer.state.log_history
        if "reward" in entry
    ]
    print(
        json.dumps(
            {
                "policy": str(out / "policy"),
                "cold_start": cold,
                "steps": steps,
                "rollouts": rollouts,
                "seconds": round(time.monotonic() - started, 1),
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
