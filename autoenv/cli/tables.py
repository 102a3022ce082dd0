"""Result tables that fit where they are read: a terminal of any width, a CI log, a spreadsheet, a program.

A table is columns (short headers, their unit in the header: ``collect s``) and rows of raw values. ``text``
draws it with Rich when it fits the console's width and otherwise one row a line (``step 0: accepted 2, ...``,
wrapped, never cut); ``csv`` and ``json`` write the same columns and raw values to stdout.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table


class TableFormat(StrEnum):
    TEXT = "text"
    CSV = "csv"
    JSON = "json"


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


@dataclass
class Column:
    header: str
    #: How a value is written in the text table (raw values go to CSV/JSON).
    text: Callable[[Any], str] = _plain
    justify: str = "right"


@dataclass
class ResultTable:
    title: str
    columns: Sequence[Column]
    rows: list[Sequence[Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        headers = [c.header for c in self.columns]
        if len(set(headers)) != len(headers):
            raise ValueError(f"two columns with one header: {headers}")

    def cells(self) -> list[list[str]]:
        return [[c.text(v) for c, v in zip(self.columns, row, strict=True)] for row in self.rows]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip((c.header for c in self.columns), row, strict=True)) for row in self.rows]

    def width(self) -> int:
        """Characters the Rich table needs with no cell folded (drawn once on a wide console and measured)."""
        wide = Console(width=1000, record=True, file=io.StringIO(), color_system=None)
        wide.print(self.rich())
        return max((len(line.rstrip()) for line in wide.export_text().splitlines()), default=0)

    def rich(self) -> Table:
        table = Table(
            title=escape(self.title),
            title_justify="left",
            box=box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            collapse_padding=True,
        )
        for c in self.columns:
            table.add_column(escape(c.header), justify=c.justify, overflow="fold", min_width=len(c.header))
        for row in self.cells():
            table.add_row(*(escape(cell) for cell in row))
        return table

    def lines(self) -> list[str]:
        """One row a line, each value after its header: what a table too wide for the console becomes."""
        first, *rest = self.columns
        out = [self.title]
        for row in self.cells():
            out.append(f"{first.header} {row[0]}: " + ", ".join(f"{c.header} {v}" for c, v in zip(rest, row[1:])))
        return out

    def show(self, fmt: TableFormat | str, console: Console) -> None:
        fmt = TableFormat(fmt)
        if fmt == TableFormat.CSV:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow([c.header for c in self.columns])
            writer.writerows(["" if v is None else v for v in row] for row in self.rows)
            sys.stdout.write(buffer.getvalue())
        elif fmt == TableFormat.JSON:
            sys.stdout.write(json.dumps({"title": self.title, "rows": self.records()}, indent=2, default=str) + "\n")
        elif self.width() <= console.width:
            console.print(self.rich())
        else:
            for line in self.lines():
                console.print(escape(line), highlight=False, soft_wrap=True)
