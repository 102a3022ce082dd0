"""``autoenv report``: the HTML page and plots of a flywheel store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autoenv.cli.common import console, fail


def report(
    db: Annotated[str, typer.Option(help="Store file or URL written by `autoenv flywheel`.")] = "runs/flywheel.db",
    out: Annotated[Path, typer.Option(help="Folder for index.html and the PNG plots.")] = Path("runs") / "report",
) -> None:
    """Write an HTML report with plots from the store."""
    from autoenv.report.build import build_report

    if "://" not in db and not Path(db).exists():
        fail(f"{db}: no such store (run `autoenv flywheel --db {db}` first)")
    index = build_report(db, out)
    console.print(f"report: {index.resolve()}")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
