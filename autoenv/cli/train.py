"""``autoenv train``: the training side on its own (policy init, one step on an exported batch)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, fail, fail_with, print_json
from autoenv.vocab import ReportTo, SftSource

ReportToOpt = Annotated[
    ReportTo, typer.Option("--report-to", help="Also log the metrics to tensorboard (OUT/tensorboard) or trackio.")
]

train_app = typer.Typer(no_args_is_help=True, help="Training backends and policies.")


@train_app.command("init-policy")
def init_policy(
    out: Annotated[
        Path, typer.Option(help="Folder for the tiny policy (model + tokenizer built from a config, no download).")
    ],
    seed: Annotated[int, typer.Option(help="Weight init seed.")] = 0,
    chat_format: Annotated[
        str,
        typer.Option(help="autoenv (the flywheel's template) or qwen3 (Qwen3's, which TRL's online trainers parse)."),
    ] = "autoenv",
) -> None:
    """Build the tiny offline policy v0 (needs .venv-train: bash scripts/setup-train.sh)."""
    from autoenv.train.tiny import CHAT_FORMATS
    from autoenv.train.tiny import init_policy as build

    if chat_format not in CHAT_FORMATS:
        fail(f"--chat-format {chat_format!r}: choose one of {', '.join(CHAT_FORMATS)}")
    try:
        path = build(out, seed=seed, chat_format=chat_format)
    except Exception as exc:  # noqa: BLE001 - missing training venv, bad folder
        fail(str(exc))
    console.print(f"policy: {path}")


@train_app.command("step")
def step(
    batch: Annotated[Path, typer.Option(help="A training batch in the export format (JSONL).")],
    out: Annotated[Path, typer.Option(help="Where the new checkpoint (or exported batch) goes.")],
    trainer: Annotated[str, typer.Option(help="Backend spec: export, trl, trl:lr=1e-4,steps=2,...")] = "trl",
    policy: Annotated[Path | None, typer.Option(help="Current policy checkpoint folder.")] = None,
    report_to: ReportToOpt = ReportTo.NONE,
) -> None:
    """Run one training step on an exported batch and print the result as JSON."""
    import time

    from autoenv.report.trackers import make_tracker
    from autoenv.train.backends import make_trainer
    from autoenv.train.batch import TrainingBatch

    if not batch.is_file():
        fail(f"{batch}: no such batch file")
    try:
        data = TrainingBatch.read_jsonl(batch)
        tracker = make_tracker(report_to, out_dir=out, run=data.run or "train", config={"trainer": trainer})
        started = time.monotonic()
        result = make_trainer(trainer).train_step(data, policy_dir=policy, out_dir=out)
    except Exception as exc:  # noqa: BLE001 - the CLI boundary: said for a user by fail_with
        fail(f"{batch}: {exc}")
    metrics = {"samples": float(result.n_samples), "train_sec": time.monotonic() - started}
    metrics |= {k: float(v) for k, v in result.extra.items() if k in {"loss_after", "tokens"} and v is not None}
    if result.loss is not None:
        metrics["loss"] = result.loss
    tracker.log(data.step, metrics)
    tracker.close()
    print_json(result.model_dump())


@train_app.command("sft")
def sft(
    out: Annotated[Path, typer.Option(help="Folder for the fine-tuned policy (flywheel --init-policy takes it).")],
    db: Annotated[str, typer.Option(help="Store file or URL of the runs whose episodes to imitate.")] = (
        "runs/flywheel.db"
    ),
    run: Annotated[list[str] | None, typer.Option(help="Runs to take episodes from (repeatable; default all).")] = None,
    source: Annotated[
        SftSource,
        typer.Option(help="proposer: episodes of accepted tasks (Cold Start); solver: rollouts with reward 1 (RFT)."),
    ] = SftSource.PROPOSER,
    include_uncalibrated: Annotated[
        bool, typer.Option(help="proposer: also episodes of valid tasks calibration rejected.")
    ] = False,
    policy: Annotated[str, typer.Option(help="Policy to start from: a save_pretrained folder, or tiny.")] = "tiny",
    steps: Annotated[int, typer.Option(help="Optimizer steps.")] = 100,
    lr: Annotated[float, typer.Option(help="Learning rate.")] = 1e-4,
    batch_size: Annotated[int, typer.Option(help="Sequences per step.")] = 4,
    max_length: Annotated[int, typer.Option(help="Longer conversations keep their last tokens.")] = 4096,
    seed: Annotated[int, typer.Option()] = 0,
    report_to: ReportToOpt = ReportTo.NONE,
) -> None:
    """Supervised fine-tuning on the episodes that worked (TRL's SFTTrainer), saved as a policy v0.

    Assistant turns are trained, everything else (briefs, tool results, validator feedback) is masked. Needs
    .venv-train (bash scripts/setup-train.sh).
    """
    from autoenv.report.trackers import make_tracker
    from autoenv.store.db import Store
    from autoenv.train.sft import collect_sft_samples, run_sft

    if "://" not in db and not Path(db).is_file():
        fail(f"{db}: no such store (run `autoenv flywheel --db {db}` first)")
    try:
        tracker = make_tracker(report_to, out_dir=out.parent, run=f"sft-{out.name}", config={"source": source.value})
        store = Store(db)
        try:
            batch = collect_sft_samples(store, source=source, runs=run, include_uncalibrated=include_uncalibrated)
        finally:
            store.close()
        console.print(f"{len(batch.samples)} {source.value} episodes from run(s) {batch.run}", highlight=False)
        result = run_sft(
            batch, policy=policy, out=out, steps=steps, lr=lr, batch_size=batch_size, max_length=max_length, seed=seed
        )
    except Exception as exc:  # noqa: BLE001 - the CLI boundary: said for a user by fail_with
        fail_with(exc)
    for i, loss in enumerate(result.get("losses") or []):
        tracker.log(i + 1, {"sft_loss": float(loss)})
    tracker.close()
    print_json({k: v for k, v in result.items() if k != "losses"})


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
