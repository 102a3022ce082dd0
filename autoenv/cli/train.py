"""``autoenv train``: the training side on its own (policy init, one step on an exported batch)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, fail, print_json

train_app = typer.Typer(no_args_is_help=True, help="Training backends and policies.")


@train_app.command("init-policy")
def init_policy(
    out: Annotated[
        Path, typer.Option(help="Folder for the tiny policy (model + tokenizer built from a config, no download).")
    ],
    seed: Annotated[int, typer.Option(help="Weight init seed.")] = 0,
) -> None:
    """Build the tiny offline policy v0 (needs .venv-train: bash scripts/setup-train.sh)."""
    from autoenv.train.tiny import init_policy as build

    try:
        path = build(out, seed=seed)
    except Exception as exc:  # noqa: BLE001 - missing training venv, bad folder
        fail(str(exc))
    console.print(f"policy: {path}")


@train_app.command("step")
def step(
    batch: Annotated[Path, typer.Option(help="A training batch in the export format (JSONL).")],
    out: Annotated[Path, typer.Option(help="Where the new checkpoint (or exported batch) goes.")],
    trainer: Annotated[str, typer.Option(help="Backend spec: export, trl, trl:lr=1e-4,steps=2,...")] = "trl",
    policy: Annotated[Path | None, typer.Option(help="Current policy checkpoint folder.")] = None,
) -> None:
    """Run one training step on an exported batch and print the result as JSON."""
    from autoenv.train.backends import make_trainer
    from autoenv.train.batch import TrainingBatch

    if not batch.is_file():
        fail(f"{batch}: no such batch file")
    try:
        result = make_trainer(trainer).train_step(TrainingBatch.read_jsonl(batch), policy_dir=policy, out_dir=out)
    except Exception as exc:  # noqa: BLE001 - the CLI boundary: said for a user by fail_with
        fail(f"{batch}: {exc}")
    print_json(result.model_dump())


def register(app: typer.Typer) -> None:
    app.add_typer(train_app, name="train")
