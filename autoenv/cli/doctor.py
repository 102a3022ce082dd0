"""``autoenv doctor``: whether this machine can run a backend, each prerequisite checked by using it."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from autoenv.cli.common import console, print_json
from autoenv.errors import EXIT_CODES, Fault


def register(app: typer.Typer) -> None:
    app.command()(doctor)


def doctor(
    env: Annotated[
        str, typer.Option("--env", help="The backend to check: local (buildah + runc) or docker.")
    ] = "local",
    quick: Annotated[
        bool, typer.Option("--quick", help="Skip the two sandbox trials (the rest takes about a second).")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print every check as JSON.")] = False,
) -> None:
    """Check that this machine can run the backend: programs, root and cgroups, overlay, seccomp, runc, buildah,
    the stand-in base images, a Dockerfile with a RUN step, and a sandbox under no-network and public.

    Exits 0 when the backend works, 4 (a sandbox fault) when it cannot, with the command that fixes each failure.
    """
    from autoenv.trials.doctor import Check, Need, diagnose

    def show(check: Check) -> None:
        if json_out:
            return
        mark = (
            "[green]ok[/green]  "
            if check.ok
            else ("[yellow]warn[/yellow]" if check.need is Need.OPTIONAL else "[red]FAIL[/red]")
        )
        console.print(f"{mark} {escape(check.name)}: {escape(check.detail)}", highlight=False, soft_wrap=True)
        if not check.ok and check.fix:
            console.print(f"      fix: {escape(check.fix)}", highlight=False, soft_wrap=True)

    diagnosis = diagnose(env, trials=not quick, on_check=show)
    if json_out:
        print_json({"env": env, "ok": diagnosis.ok, "checks": [c.model_dump(mode="json") for c in diagnosis.checks]})
    if not diagnosis.ok:
        if not json_out:
            console.print(
                f"[red]the {env} backend cannot work on this machine[/red]; fix what FAIL names, then rerun "
                "`autoenv doctor`",
                highlight=False,
            )
        raise typer.Exit(EXIT_CODES[Fault.SANDBOX])
    if not json_out:
        console.print(f"[green]the {env} backend works on this machine[/green] ({len(diagnosis.checks)} checks)")
