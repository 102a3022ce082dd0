"""``autoenv families``: the task families the scripted proposer writes, with their difficulty ladders."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from autoenv.cli.common import console, print_json


def family_rows() -> list[dict[str, Any]]:
    """Every registered family: name, description, default level, the axes it climbs and each level's record."""
    from autoenv.families.registry import FAMILIES

    return [
        {
            "name": family.name,
            "description": family.description,
            "default_level": family.default_level,
            "axes": list(family.axes),
            "levels": [level.model_dump() for level in family.ladder],
        }
        for family in FAMILIES.values()
    ]


def families(json_out: Annotated[bool, typer.Option("--json", help="Print the families as JSON.")] = False) -> None:
    """List the task families, each with its levels (what each asks) and the axes of difficulty it climbs."""
    rows = family_rows()
    if json_out:
        print_json(rows)
        return
    table = Table(title="task families", title_justify="left", show_lines=True)
    for column in ("family", "levels", "axes", "what each level asks"):
        table.add_column(column)
    for row in rows:
        levels = row["levels"]
        asks = "\n".join(
            f"{lv['number']}{'*' if lv['number'] == row['default_level'] else ''}: {lv['asks']}" for lv in levels
        )
        table.add_row(
            row["name"],
            str(len(levels) or 1),
            ", ".join(row["axes"]) or "-",
            escape(asks or row["description"] + " (one level)"),
        )
    console.print(table)
    console.print("* the level a draft gets when none is pinned (autoenv propose --level N|max)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("families")(families)
