"""The flywheel report: one HTML page and its PNG plots, built from the store alone.

Everything shown is recomputed from store rows (attempts, tasks, groups,
rollouts, steps), so a report of a resumed or multi-machine run is as correct
as one of a single uninterrupted run.
"""

from __future__ import annotations

import html
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from autoenv.report.levels import accepted_levels, plot_levels
from autoenv.report.style import PALETTE, integer_steps, no_data, rate_axis, save, styled
from autoenv.store.db import Store
from autoenv.validate.stats import mean_interval, wilson_interval
from autoenv.vocab import Method

METHODS = tuple(Method)
ACTION_KINDS = ("Read", "Build", "Write", "Test", "Finish")

#: The panels of the training figure: store field, title, whether it is a rate (on [0, 1]).
TRAINING_PANELS = (
    ("useful_group_rate", "useful-group rate", True),
    ("collect_sec", "seconds to collect groups", False),
    ("benchmark_score", "solver benchmark score", True),
    ("proposer_valid_rate", "proposer valid-env rate", True),
)


def valid_rates(attempts: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Valid-environment rate per ``key`` (method or proposer) with a 95% Wilson interval."""
    by: dict[str, list[bool]] = defaultdict(list)
    for a in attempts:
        by[str(a[key])].append(bool(a["valid"]))
    rows = []
    order = {m: i for i, m in enumerate(METHODS)}
    for name, flags in sorted(by.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])):
        low, high = wilson_interval(sum(flags), len(flags))
        rows.append(
            {key: name, "n": len(flags), "valid": sum(flags), "rate": sum(flags) / len(flags), "low": low, "high": high}
        )
    return rows


def _bar_with_ci(ax, rows: list[dict[str, Any]], key: str, title: str) -> None:
    names = [f"{r[key]}\n{r['valid']}/{r['n']}" for r in rows]  # the counts under the name: never over a bar
    rates = [r["rate"] for r in rows]
    err = [[r["rate"] - r["low"] for r in rows], [r["high"] - r["rate"] for r in rows]]
    ax.bar(names, rates, yerr=err, color=PALETTE[0], ecolor="#333333")
    rate_axis(ax)
    ax.set_ylabel("valid-environment rate (95% Wilson CI)")
    ax.set_title(title)


@styled
def plot_valid_rates(attempts, out: Path) -> list[str]:
    files = []
    for key, title, name in (
        ("method", "by proposer method", "valid_rate_by_method.png"),
        ("proposer", "by proposer", "valid_rate_by_proposer.png"),
    ):
        rows = valid_rates(attempts, key)
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        if rows:
            _bar_with_ci(ax, rows, key, f"Valid environments {title}")
        else:
            no_data(ax, "no proposer attempts")
        files.append(save(fig, out, name))
    return files


def accepted_stats(store: Store) -> list[dict[str, Any]]:
    """Per accepted generated environment: files, solver turns and pass rate."""
    rows = []
    rollouts = defaultdict(list)
    for r in store.rollouts():
        rollouts[r["task_hash"]].append(r)
    for t in store.tasks(valid=True, calibrated=True):
        rs = rollouts.get(t["hash"], [])
        turns = [r["n_turns"] for r in rs if r["n_turns"] is not None]
        rows.append(
            {
                "hash": t["hash"],
                "name": t["name"],
                "path": t["path"],
                "method": t["method"],
                "n_files": t["n_files"],
                "pass_rate": statistics.fmean([r["reward"] or 0 for r in rs]) if rs else t["pass_rate"],
                "turns": statistics.fmean(turns) if turns else None,
                "rollouts": len(rs),
                "validation": (t["validation"] or {}),
                "origin": t["origin"],
                "parent": t.get("parent_name"),  # the task it is a harder variant of (--method evolve)
            }
        )
    return rows


@styled
def plot_accepted(rows, out: Path) -> str:
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
    for ax, field, label in zip(
        axes, ("n_files", "turns", "pass_rate"), ("files per environment", "solver turns", "solver pass rate")
    ):
        data, labels = [], []
        for method in sorted({r["method"] for r in rows}, key=lambda m: (METHODS.index(m) if m in METHODS else 9, m)):
            values = [r[field] for r in rows if r["method"] == method and r[field] is not None]
            if values:
                data.append(values)
                labels.append(method)
        if data:
            ax.boxplot(data, tick_labels=labels, patch_artist=True, boxprops={"facecolor": PALETTE[0], "alpha": 0.6})
            for i, values in enumerate(data, start=1):  # each environment too: a box of one or two hides them
                ax.scatter([i] * len(values), values, color=PALETTE[0], s=14, zorder=3)
        else:
            no_data(ax)
        if field == "pass_rate":
            rate_axis(ax)
        ax.set_title(label)
    fig.suptitle("Accepted environments by method")
    return save(fig, out, "accepted_by_method.png")


def seed_groups(runs: list[str]) -> dict[str, list[str]]:
    """Runs named ``NAME-sK`` (``bench/flywheel_dynamics.py --seeds``) are repeats of run ``NAME`` (seed 0) on
    seed K, when ``NAME`` or another ``NAME-sJ`` is there too; every other run stands alone."""
    names = set(runs)
    groups: dict[str, list[str]] = defaultdict(list)
    for run in runs:
        m = re.fullmatch(r"(.+)-s\d+", run)
        base = m.group(1) if m else run
        siblings = [r for r in names if r != run and (r == base or re.fullmatch(re.escape(base) + r"-s\d+", r))]
        groups[base if m and siblings else run].append(run)
    return dict(groups)


def compare_runs(steps: list[dict[str, Any]], attempts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per experiment (a run, or its repeats over seeds): the baselines and methods side by side, with
    the final benchmark score (mean and 95% t-interval over seeds), the mean useful-group rate and the
    valid-environment rate of every proposal with its Wilson interval."""
    by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in steps:
        by_run[s["run"]].append(s)
    rows = []
    for name, runs in sorted(seed_groups(list(by_run)).items()):
        lasts = [max(by_run[r], key=lambda s: s["step"]) for r in runs if by_run[r]]
        finals = [last["benchmark_score"] for last in lasts if last["benchmark_score"] is not None]
        useful = [s["useful_group_rate"] for r in runs for s in by_run[r] if s["useful_group_rate"] is not None]
        proposals = [a for a in attempts if a["run"] in runs]
        valid = sum(1 for a in proposals if a["valid"])
        row = {"run": html.escape(name), "seeds": len(runs), "steps": max(len(by_run[r]) for r in runs)}
        if finals:
            mean, low, high = mean_interval(finals)
            row["final benchmark"] = f"{mean:.2f}" + (f" [{low:.2f}, {high:.2f}]" if len(finals) > 1 else "")
        row["useful-group rate"] = f"{sum(useful) / len(useful):.2f}" if useful else "-"
        if proposals:
            low, high = wilson_interval(valid, len(proposals))
            row["valid proposals"] = f"{valid}/{len(proposals)} [{low:.2f}, {high:.2f}]"
        rows.append(row)
    return rows


def plot_training(steps: list[dict[str, Any]], out: Path, **repeats: Any) -> str:
    return save(training_figure(steps, **repeats), out, "training_curves.png")


def step_trials(
    steps: list[dict[str, Any]], attempts: list[dict[str, Any]], configs: dict[str, dict[str, Any]] | None = None
) -> dict[tuple[str, int, str], tuple[float, int]]:
    """The repeats behind each rate of a step, ``(run, step, field) -> (successes, trials)``: its groups (useful
    ones), its proposals (valid ones) and its benchmark rollouts (tasks x rollouts from the run's config, the
    reward summed; a benchmark whose folder is gone is left out)."""
    from autoenv.taskfmt.check import find_tasks

    counts: dict[tuple[str, int, str], tuple[float, int]] = {}
    for s in steps:
        if s.get("n_groups") and s.get("n_useful_groups") is not None:
            counts[(s["run"], s["step"], "useful_group_rate")] = (s["n_useful_groups"], s["n_groups"])
    by_step: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for a in attempts:
        by_step[(a["run"], a["step"])].append(bool(a["valid"]))
    for (run, step), flags in by_step.items():
        counts[(run, step, "proposer_valid_rate")] = (sum(flags), len(flags))
    benchmark_n: dict[str, int] = {}
    for run, config in (configs or {}).items():
        folder = config.get("benchmark_dir")
        if folder and Path(folder).is_dir():
            tasks = len(find_tasks(Path(folder))[: config.get("benchmark_tasks") or None])
            benchmark_n[run] = tasks * int(config.get("benchmark_rollouts") or 1)
    for s in steps:
        n = benchmark_n.get(s["run"])
        if n and s.get("benchmark_score") is not None:
            counts[(s["run"], s["step"], "benchmark_score")] = (s["benchmark_score"] * n, n)
    return counts


@styled
def training_figure(steps: list[dict[str, Any]], trials: dict[tuple[str, int, str], tuple[float, int]] | None = None):
    """Four panels over training steps (whole steps on x, rates on [0, 1]), one line per run, each point with its
    95% interval where the data has repeats: over seeds (runs ``NAME-sK``, :func:`seed_groups`) the mean and its
    t-interval; for one run, a rate's Wilson interval over its repeats (``trials``, :func:`step_trials`)."""
    trials = trials or {}
    fig, axes = plt.subplots(2, 2, figsize=(10, 6))
    by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in steps:
        by_run[s["run"]].append(s)
    repeats = seed_groups(list(by_run))
    for ax, (field, title, is_rate) in zip(axes.flat, TRAINING_PANELS):
        shown: list[int] = []
        for i, (name, runs) in enumerate(sorted(repeats.items())):
            colour = PALETTE[i % len(PALETTE)]
            if len(runs) == 1:
                rows = [r for r in by_run[runs[0]] if r[field] is not None]
                xs, ys = [r["step"] for r in rows], [r[field] for r in rows]
                if not xs:
                    continue
                bounds = []
                for r in rows:
                    k, n = trials.get((r["run"], r["step"], field), (None, 0))
                    if is_rate and n:
                        low, high = wilson_interval(min(n, max(0, round(k))), n)
                        bounds.append((min(low, r[field]), max(high, r[field])))
                    else:
                        bounds.append((r[field], r[field]))
                label = runs[0] + (" (95% Wilson)" if any(lo != hi for lo, hi in bounds) else "")
            else:
                # repeats of one experiment over seeds: the mean, and its 95% t-interval
                per_step: dict[int, list[float]] = defaultdict(list)
                for run in runs:
                    for r in by_run[run]:
                        if r[field] is not None:
                            per_step[r["step"]].append(r[field])
                xs = sorted(per_step)
                if not xs:
                    continue
                bands = [mean_interval(per_step[x]) for x in xs]
                ys, bounds = [b[0] for b in bands], [(b[1], b[2]) for b in bands]
                label = f"{name} ({len(runs)} seeds, 95% t)"
            err = [[y - lo for y, (lo, _) in zip(ys, bounds)], [hi - y for y, (_, hi) in zip(ys, bounds)]]
            if any(e > 0 for side in err for e in side):
                ax.errorbar(xs, ys, yerr=err, marker="o", color=colour, ecolor=colour, label=label)
            else:  # no repeats here: the values alone
                ax.plot(xs, ys, marker="o", color=colour, label=label)
            shown += xs
        ax.set_title(title)
        ax.set_xlabel("training step")
        integer_steps(ax, shown)
        if is_rate:
            rate_axis(ax)
        else:
            ax.set_ylim(bottom=0)
        if not shown:
            no_data(ax, "no training steps" if not steps else "not measured")
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    return fig


@styled
def plot_course(attempts: list[dict[str, Any]], out: Path) -> str | None:
    """A proposer's Read/Build/Write/Test actions over time for the longest design."""
    designs = [a for a in attempts if a.get("actions")]
    if not designs:
        return None
    design = max(designs, key=lambda a: len(a["actions"]))
    fig, ax = plt.subplots(figsize=(9, 2.8))
    colours = dict(zip(ACTION_KINDS, (PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[8])))
    for action in design["actions"]:
        kind = action["kind"]
        ax.scatter(action["t"], ACTION_KINDS.index(kind), color=colours.get(kind, "grey"), s=30)
    ax.set_yticks(range(len(ACTION_KINDS)), ACTION_KINDS)
    ax.set_ylim(-0.5, len(ACTION_KINDS) - 0.5)
    ax.set_xlabel("seconds into the design")
    ax.set_title(
        f"Proposer course: {design['seed_case']} ({design['method']}, {'valid' if design['valid'] else 'rejected'})"
    )
    return save(fig, out, "proposer_course.png")


#: The training-steps table: short headers, units in them; ``useful``, ``bench`` and ``valid`` are rates.
STEP_HEADERS = ["run", "step", "policy", "groups", "useful", "collect s", "bench", "valid", "loss"]


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{r.get(c, '')}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def audit_rows(tasks: list[dict[str, Any]]) -> tuple[dict[str, int], list[dict[str, Any]], list[dict[str, Any]]]:
    """The audit of every task with a recorded verdict: counts, failures by check, the worst offenders."""
    judged = [t for t in tasks if t.get("validation")]
    failed_by_task = {
        t["hash"]: [c["name"] for c in (t["validation"].get("checks") or []) if c.get("passed") is False]
        for t in judged
    }
    counts = {"tasks": len(judged), "valid": sum(bool(t.get("valid")) for t in judged)}
    counts["invalid"] = counts["tasks"] - counts["valid"]
    by_check: dict[str, int] = {}
    for names in failed_by_task.values():
        for name in names:
            by_check[name] = by_check.get(name, 0) + 1
    check_rows = [
        {"check": name, "tasks": n, "share": f"{n / max(1, counts['tasks']):.0%}"}
        for name, n in sorted(by_check.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    worst = sorted(
        (t for t in judged if not t.get("valid")), key=lambda t: (-len(failed_by_task[t["hash"]]), t["name"])
    )
    worst_rows = []
    for t in worst[:20]:
        first = next((c for c in t["validation"].get("checks") or [] if c.get("passed") is False), {})
        worst_rows.append(
            {
                "task": html.escape(t["name"]),
                "failed": html.escape(", ".join(failed_by_task[t["hash"]])),
                "first finding": html.escape(str(first.get("summary", ""))[:200]),
            }
        )
    return counts, check_rows, worst_rows


def build_report(db: str | Path, out: Path | str) -> Path:
    """Write ``index.html`` and the plots into ``out``; return the page's path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    store = Store(db)
    try:
        attempts = store.attempts()
        steps = store.steps()
        accepted = accepted_stats(store)
        images = plot_valid_rates(attempts, out)
        images.append(plot_accepted(accepted, out))
        images.append(plot_levels(accepted_levels(attempts, {t["hash"]: t["path"] for t in store.tasks()}), out))
        images.append(plot_training(steps, out, trials=step_trials(steps, attempts, store.run_configs())))
        course = plot_course(attempts, out)
        if course:
            images.append(course)
        method_rows = valid_rates(attempts, "method")
        for r in method_rows:
            r["interval"] = f"[{r['low']:.2f}, {r['high']:.2f}]"
            r["rate"] = f"{r['rate']:.2f}"
        env_rows = []
        for r in accepted:
            evidence_path = Path(r["path"]) / ".autoenv" / "validation.json"
            (out / "evidence").mkdir(exist_ok=True)
            evidence_link = ""
            if r["validation"] or evidence_path.exists():
                target = out / "evidence" / f"{r['hash']}.json"
                target.write_text(
                    json.dumps(r["validation"], indent=2, default=str) if r["validation"] else evidence_path.read_text()
                )
                evidence_link = f"<a href='evidence/{r['hash']}.json'>evidence</a>"
            env_rows.append(
                {
                    "task": f"<a href='file://{html.escape(r['path'])}'>{html.escape(r['name'])}</a>",
                    "method": r["method"],
                    "origin": html.escape(str(r["origin"])),
                    "parent": html.escape(r["parent"]) if r.get("parent") else "-",
                    "files": r["n_files"],
                    "pass rate": "-" if r["pass_rate"] is None else f"{r['pass_rate']:.2f}",
                    "turns": "-" if r["turns"] is None else f"{r['turns']:.1f}",
                    "validation": evidence_link,
                }
            )
        step_rows = [
            {
                "run": html.escape(str(st["run"])),
                "step": st["step"],
                "policy": f"v{st['policy_version_in']}->v{st['policy_version_out']}"
                if st["policy_version_out"] is not None
                else f"v{st['policy_version_in']}",
                "groups": "-" if st["n_groups"] is None else st["n_groups"],
                "useful": _rate(st["useful_group_rate"]),
                "collect s": "-" if st["collect_sec"] is None else f"{st['collect_sec']:.1f}",
                "bench": _rate(st["benchmark_score"]),
                "valid": _rate(st["proposer_valid_rate"]),
                "loss": "-" if st["loss"] is None else f"{st['loss']:.3f}",
            }
            for st in steps
        ]
        run_rows = []
        for name, config in store.run_configs().items():
            policies = config.get("policies") or "-"
            run_rows.append(
                {
                    "run": html.escape(name),
                    "baseline": "static"
                    if config.get("static_dir")
                    else ("autoenv" if config.get("proposer_training", True) else "proposer-off"),
                    "proposer": html.escape(str(config.get("proposer") or config.get("proposer_policy") or "-")),
                    "solver": html.escape(str(config.get("solver_spec") or config.get("solver") or "-")),
                    "policies": "<b>mixed: the proposer and the solver are different policies</b>"
                    if policies == "mixed"
                    else policies,
                }
            )
        audit_counts, audit_checks, audit_worst = audit_rows(store.tasks())
        audit_html = (
            f"<p>{audit_counts['tasks']} tasks with a verdict: {audit_counts['valid']} valid, "
            f"{audit_counts['invalid']} not valid</p>"
            f"<h3>Failures by check</h3>{_table(audit_checks, ['check', 'tasks', 'share'])}"
            f"<h3>Worst offenders</h3>{_table(audit_worst, ['task', 'failed', 'first finding'])}"
            if audit_counts["tasks"]
            else "<p>no task verdicts in this store</p>"
        )
        figures = "".join(
            f"<figure><img src='{name}' alt='{name}'><figcaption>{name}</figcaption></figure>" for name in images
        )
        page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>autoenv report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1200px}}img{{max-width:100%;border:1px solid #ddd}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}}
figure{{display:inline-block;margin:.5em;vertical-align:top}}</style></head>
<body><h1>autoenv flywheel report</h1>
<p>store: {html.escape(store.url)} &middot; runs: {html.escape(", ".join(store.run_names()))} &middot;
attempts: {len(attempts)} &middot; accepted environments: {len(accepted)} &middot; training steps: {len(steps)}</p>
<h2>Runs</h2>{_table(run_rows, ["run", "baseline", "proposer", "solver", "policies"])}
<h2>Runs compared</h2>{_table(compare_runs(steps, attempts), ["run", "seeds", "steps", "final benchmark", "useful-group rate", "valid proposals"])}
<h2>Plots</h2>{figures}
<h2>Valid-environment rate by method</h2>{_table(method_rows, ["method", "n", "valid", "rate", "interval"])}
<h2>Training steps</h2>{_table(step_rows, STEP_HEADERS)}
<h2>Audit: every validated task</h2>{audit_html}
<h2>Accepted environments</h2>{_table(env_rows, ["task", "method", "origin", "parent", "files", "pass rate", "turns", "validation"])}
</body></html>"""  # noqa: E501
        index = out / "index.html"
        index.write_text(page)
        return index
    finally:
        store.close()
