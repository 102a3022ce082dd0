"""The difficulty of what the flywheel accepted, step by step (issue 42): the accepted tasks' levels over training.

A task records its level in task.toml's ``[metadata]`` (``level``, written by the family's ladder); a task without
one (a model-written task, a family without a ladder) has no level and is left out. If the proposer climbs as the
solver improves, the mean accepted level rises over steps; flat at 1 means the supply stayed easy.
"""

from __future__ import annotations

import statistics
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from autoenv.report.style import PALETTE, integer_steps, no_data, save, styled


def task_level(task_dir: Path | str) -> int | None:
    """The level a task records in task.toml's metadata, if any."""
    try:
        level = tomllib.loads((Path(task_dir) / "task.toml").read_text()).get("metadata", {}).get("level")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return level if isinstance(level, int) else None


def accepted_levels(attempts: list[dict[str, Any]], paths: dict[str, str]) -> list[dict[str, Any]]:
    """Per run and step: the levels of the tasks accepted there (``paths``: task hash -> folder)."""
    by: dict[tuple[str, int], list[int]] = defaultdict(list)
    for a in attempts:
        if a["valid"] and a["calibrated"] and a["task_hash"] in paths:
            level = task_level(paths[a["task_hash"]])
            if level is not None:
                by[(a["run"], a["step"])].append(level)
    return [
        {"run": run, "step": step, "levels": levels, "mean": statistics.fmean(levels)}
        for (run, step), levels in sorted(by.items())
    ]


@styled
def plot_levels(rows: list[dict[str, Any]], out: Path) -> str:
    """Mean accepted level by step, one line per run, each accepted task a dot."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    if not rows:
        no_data(ax, "no accepted task records a level")
    for i, run in enumerate(sorted({r["run"] for r in rows})):
        mine = [r for r in rows if r["run"] == run]
        colour = PALETTE[i % len(PALETTE)]
        ax.plot([r["step"] for r in mine], [r["mean"] for r in mine], marker="o", color=colour, label=run)
        for r in mine:
            ax.scatter([r["step"]] * len(r["levels"]), r["levels"], color=colour, alpha=0.35, s=12)
    integer_steps(ax, [r["step"] for r in rows])
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("training step")
    ax.set_ylabel("level of accepted tasks")
    ax.set_title("Difficulty accepted over training (mean and each task)")
    if rows:
        ax.legend()
    return save(fig, out, "accepted_levels.png")


__all__ = ["accepted_levels", "plot_levels", "task_level"]
