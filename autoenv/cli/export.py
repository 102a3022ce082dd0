"""``autoenv export-harbor``: accepted tasks as a Harbor dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, fail


def export_harbor(
    out: Annotated[Path, typer.Argument(help="Dataset folder to write.")],
    db: Annotated[
        str | None, typer.Option(help="Store: export every valid and calibrated task recorded there.")
    ] = None,
    tasks: Annotated[Path | None, typer.Option("--from", help="Or: export every task under this folder.")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace tasks of the same name in OUT.")] = False,
    trial_config: Annotated[
        bool,
        typer.Option(
            "--trial-config",
            help="Also write OUT/trial-config.yaml: a Harbor TrialConfig whose environment is autoenv's local "
            "sandbox (import path), for `harbor trial start -c` and trainers that run Harbor trials (SkyRL's "
            "harbor_trial_config).",
        ),
    ] = False,
    harden: Annotated[
        bool,
        typer.Option(
            "--harden",
            help="Export a task whose tests import the agent's code into pytest hardened (as `autoenv task harden`: "
            "the same tests, the agent's code behind the broker; named inputs the verifier would read from the agent "
            "restored from the image first); one whose tests cannot be served stops the export.",
        ),
    ] = False,
) -> None:
    """Write accepted tasks as a Harbor dataset that `harbor run -p OUT` runs."""
    from autoenv.taskfmt.check import find_tasks, grades_apart
    from autoenv.taskfmt.export import ExportError, export_tasks

    if (db is None) == (tasks is None):
        fail("give exactly one of --db or --from")
    if db is not None:
        from autoenv.store.db import Store

        if "://" not in db and not Path(db).exists():
            fail(f"{db}: no such store")
        store = Store(db)
        paths = [Path(r["path"]) for r in store.tasks(valid=True, calibrated=True)]
        missing = [p for p in paths if not p.is_dir()]
        if missing:
            fail(f"{missing[0]}: task folder recorded in the store no longer exists")
    else:
        paths = find_tasks(tasks)
        if not paths:
            fail(f"{tasks}: no Harbor tasks found")
    if not paths:
        fail("no accepted tasks to export")
    try:
        written = export_tasks(paths, out, overwrite=overwrite, harden=harden)
    except ExportError as exc:
        fail(str(exc))
    console.print(f"exported {len(written)} task(s) to {out}; run them with: harbor run -p {out} -a oracle")
    if harden:
        hardened = [p.name for p in written if (p / "tests" / "agentimport.json").is_file()]
        names = f" ({', '.join(hardened)})" if hardened else ""
        console.print(f"with the agent's code behind the broker: {len(hardened)} of {len(written)}{names}")
        restored = [p.name for p in written if (p / "tests" / "autoenv-inputs.json").is_file()]
        if restored:
            console.print(f"with their inputs restored from the image before the tests: {', '.join(restored)}")
    if trial_config:
        from autoenv.trials.trial_config import harbor_trial_config, write_trial_config

        config = write_trial_config(
            harbor_trial_config(written[0], trials_dir=out.parent / "trials"), out / "trial-config.yaml"
        )
        shared = [p.name for p in written if not grades_apart(p)]
        console.print(f"trial config: {config}; run one with: harbor trial start -c {config} -p {written[0]}")
        if shared:
            console.print(
                f"[yellow]note:[/yellow] {len(shared)} task(s) grade where the agent ran (shared verifier mode), e.g. "
                f"{shared[0]}: their reward is only as safe as that sandbox (see README, Validation)",
                highlight=False,
            )


def register(app: typer.Typer) -> None:
    app.command("export-harbor")(export_harbor)
