"""The ``autoenv`` command line: a thin layer over the library API.

Each command group lives in its own module and registers itself here, so the
CLI stays a table of contents of what autoenv can do.
"""

from __future__ import annotations

import typer

from autoenv.cli import doctor as doctor_cli
from autoenv.cli import export as export_cli
from autoenv.cli import families as families_cli
from autoenv.cli import flywheel as flywheel_cli
from autoenv.cli import images as images_cli
from autoenv.cli import propose as propose_cli
from autoenv.cli import report as report_cli
from autoenv.cli import tasks as tasks_cli
from autoenv.cli import train as train_cli
from autoenv.cli import trials as trials_cli
from autoenv.cli import validate as validate_cli

app = typer.Typer(
    no_args_is_help=True, add_completion=False, help="Generate, validate and calibrate Harbor training environments."
)

trials_cli.register(app)
tasks_cli.register(app)
validate_cli.register(app)
report_cli.register(app)
export_cli.register(app)
train_cli.register(app)
flywheel_cli.register(app)
images_cli.register(app)
propose_cli.register(app)
families_cli.register(app)
doctor_cli.register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
