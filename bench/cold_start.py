"""Cold Start (the paper's Fig. 21 analogue): a policy's valid-environment rate before and after ``autoenv train sft``.

1. Teacher episodes: one offline flywheel step per proposer method (``feedback`` and ``agentic``, the scripted
   proposers: they stand in for the strong models behind an endpoint) on the *training* seed cases, into one store.
2. Cold Start: ``autoenv train sft`` on the episodes of accepted tasks, from the student's v0.
3. Before and after: the student, served on CPU (``autoenv.train.cpu_serve``) behind the OpenAI API, proposes
   (``autoenv propose --policy openai --method prompt``) on *held-out* seed cases; every proposal is validated as
   usual. Printed: valid proposals / attempts with a 95% Wilson interval, per policy.

Offline the student is the tiny policy (2 layers, random init): what it can show is the machinery end to end (real
episodes, real SFT with TRL, a real served policy proposing, real validation), not that a small model learns to
write valid tasks from a few dozen demonstrations. On a GPU machine pass ``--student DIR`` (a real small model,
``save_pretrained`` folder) and ``--serve vllm``.

Run: .venv/bin/python bench/cold_start.py [--out runs/bench-cold-start] [--held-out 3] [--attempts 4]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from autoenv.train.serve import PolicyServer  # noqa: E402
from autoenv.validate.stats import wilson_interval  # noqa: E402
from bench._common import machine  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
AUTOENV = str(Path(sys.executable).with_name("autoenv"))
SEED_CASES = REPO / "examples" / "seed_cases"


def run(*args: str, timeout: float = 3600, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    done = subprocess.run([AUTOENV, *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode not in ok:
        sys.exit(f"cold_start: `autoenv {' '.join(args[:2])}` failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def evaluate(label: str, checkpoint: Path, cases: list[Path], args: argparse.Namespace) -> dict:
    """The policy behind an endpoint proposes ``args.attempts`` tasks per held-out case; count the valid ones."""
    port = free_port()
    server = PolicyServer(
        kind=args.serve,
        port=port,
        log_dir=args.out / "serve",
        extra_args=["--default-max-tokens", str(args.max_tokens)] if args.serve == "cpu" else [],
    )
    server.start(checkpoint)
    valid = attempts = 0
    per_case = {}
    started = time.monotonic()
    try:
        for case in cases:
            done = run("propose", "-s", str(case), "-o", str(args.out / "eval" / label / case.stem),
                       "--policy", "openai", "--model", "policy", "--base-url", server.base_url,
                       "--method", "prompt", "--attempts", str(args.attempts), "--seed", str(args.seed),
                       "--solver", "terminal:policy=scripted", "--json", ok=(0, 1))  # fmt: skip
            # exit 1: nothing was accepted, a verdict (the summary says why), not a failure of the bench
            summary = json.loads(done.stdout)
            valid += summary["valid"]
            attempts += summary["attempts"]
            reasons = [r.get("reason", "")[:120] for r in summary["records"] if not r.get("valid")]
            per_case[case.stem] = {"valid": summary["valid"], "attempts": summary["attempts"], "reasons": reasons}
    finally:
        server.stop()
    # below validity: how much of the format the replies have (a tool-call marker, a call that parses)
    replies = markers = parsed = 0
    for path in (args.out / "eval" / label / "workspace" / ".proposer" / "episodes").glob("*.json"):
        for message in json.loads(path.read_text())["messages"]:
            if message["role"] == "assistant":
                replies += 1
                markers += "<tool_call>" in (message.get("content") or "") or bool(message.get("tool_calls"))
                parsed += bool(message.get("tool_calls"))
    low, high = wilson_interval(valid, attempts)
    rate = valid / attempts if attempts else 0.0
    return {"policy": label, "valid": valid, "attempts": attempts, "rate": rate, "low": low, "high": high,
            "replies": replies, "replies_with_tool_call_marker": markers, "replies_with_parsed_tool_call": parsed,
            "per_case": per_case, "seconds": round(time.monotonic() - started, 1)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "runs" / "bench-cold-start")
    parser.add_argument("--held-out", type=int, default=3, help="seed cases kept out of the teacher's episodes")
    parser.add_argument("--attempts", type=int, default=4, help="proposals per held-out case and policy")
    parser.add_argument("--teacher-proposals", type=int, default=6, help="proposals per teacher method")
    parser.add_argument("--sft-steps", type=int, default=200)
    parser.add_argument("--sft-lr", type=float, default=3e-3)
    parser.add_argument("--max-tokens", type=int, default=3072, help="generation limit of the student's replies")
    parser.add_argument("--student", type=Path, help="v0 of the student (default: the tiny policy, built here)")
    parser.add_argument("--serve", choices=["cpu", "vllm"], default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--resume", action="store_true", help="keep OUT's teacher store and SFT checkpoint; evaluate again"
    )
    args = parser.parse_args()
    args.out = args.out.resolve()
    resume = args.resume and (args.out / "student-sft" / "autoenv_policy.json").is_file()
    if args.out.exists() and not resume:
        shutil.rmtree(args.out)
    shutil.rmtree(args.out / "eval", ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()

    cases = sorted(SEED_CASES.glob("*.yaml"))
    train_cases, held_out = cases[: -args.held_out], cases[-args.held_out :]
    train_dir = args.out / "train-cases"
    train_dir.mkdir(exist_ok=True)
    for case in train_cases:
        shutil.copy(case, train_dir / case.name)
    print(f"teacher seed cases: {', '.join(c.stem for c in train_cases)}; held out: "
          f"{', '.join(c.stem for c in held_out)}", flush=True)  # fmt: skip

    db = args.out / "teacher.db"
    for method in () if resume else ("feedback", "agentic"):
        run("flywheel", "--steps", "1", "--db", str(db), "--out", str(args.out / "fw"), "--run", f"teacher-{method}",
            "--method", method, "--seed-cases", str(train_dir), "--proposals-per-step", str(args.teacher_proposals),
            "--group-size", "2", "--tasks-per-step", "1", "--benchmark-tasks", "1",
            "--seed", str(args.seed))  # fmt: skip
        print(f"teacher {method}: done", flush=True)

    student = args.student
    if student is None:
        student = args.out / "student-v0"
        if not resume:
            run("train", "init-policy", "--out", str(student), "--seed", str(args.seed))
    if resume:
        sft_result = json.loads((args.out / "sft.json").read_text())
    else:
        sft = run("train", "sft", "--db", str(db), "--out", str(args.out / "student-sft"), "--policy", str(student),
                  "--steps", str(args.sft_steps), "--lr", str(args.sft_lr), "--seed", str(args.seed))  # fmt: skip
        sft_result = json.loads(sft.stdout[sft.stdout.index("{") :])
        (args.out / "sft.json").write_text(json.dumps(sft_result))
    print(f"sft: {sft_result['samples']} episodes, {sft_result['tokens_trained']} tokens, loss "
          f"{sft_result['loss_first']:.3f} -> {sft_result['loss_last']:.3f}", flush=True)  # fmt: skip

    results = [evaluate("before", student, held_out, args), evaluate("after", args.out / "student-sft", held_out, args)]
    print(f"\n{machine()}\nvalid-environment rate on {len(held_out)} held-out seed cases x {args.attempts} attempts:")
    print(f"{'policy':<8} {'valid':>7} {'rate':>6}  95% Wilson    replies  with <tool_call>  parsed calls")
    for r in results:
        share = f"{r['valid']:>3}/{r['attempts']:<3} {r['rate']:>6.2f}  [{r['low']:.2f}, {r['high']:.2f}]"
        marks = r["replies_with_tool_call_marker"], r["replies_with_parsed_tool_call"]
        print(f"{r['policy']:<8} {share}  {r['replies']:>7}  {marks[0]:>16}  {marks[1]:>12}")
    summary = {"sft": sft_result, "results": results, "held_out": [c.stem for c in held_out],
               "seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
