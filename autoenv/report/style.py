"""One look for every figure of the report: the palette, the style, and the axes every plot shares."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, MaxNLocator  # noqa: E402

#: One palette for every figure (bars, lines, intervals, the course's action kinds).
PALETTE = ("#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D", "#777777")
#: One style for every figure: the palette, a light grid, no top/right frame, the same fonts and resolution.
STYLE = {
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "axes.grid": True,
    "grid.color": "#e5e5e5",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.markersize": 5,
    "errorbar.capsize": 3,
    "savefig.dpi": 110,
}
#: The y range of every rate: [0, 1] and a margin so points at 0 or 1 are drawn whole.
RATE_LIMITS = (-0.03, 1.03)


def styled(make):
    """Make the figure under :data:`STYLE` (so every figure looks the same, whatever the caller's rcParams)."""

    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return make(*args, **kwargs)

    wrapper.__name__, wrapper.__doc__ = make.__name__, make.__doc__
    return wrapper


def integer_steps(ax, steps: list[int] | None = None) -> None:
    """Ticks at whole training steps only (a step is a count, never 0.25)."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    if steps:
        ax.set_xlim(min(steps) - 0.5, max(steps) + 0.5)


def rate_axis(ax) -> None:
    """A rate is drawn on [0, 1], so a flat 1.0 looks flat rather than like noise on a 0.96-1.04 axis."""
    ax.set_ylim(*RATE_LIMITS)
    ax.yaxis.set_major_locator(FixedLocator([0, 0.25, 0.5, 0.75, 1.0]))


def no_data(ax, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#777777")


def save(fig, out: Path, name: str) -> str:
    path = out / name
    fig.tight_layout()
    fig.savefig(path, dpi=STYLE["savefig.dpi"])
    plt.close(fig)
    return name
