"""The report renders from a store in headless Chromium, plots included."""

from __future__ import annotations

import shutil
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest

from autoenv.report.build import (
    STEP_HEADERS,
    build_report,
    compare_runs,
    seed_groups,
    step_trials,
    training_figure,
    valid_rates,
)
from autoenv.report.style import STYLE
from autoenv.store.db import Store
from tests.conftest import EXAMPLE_TASKS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


#: A pixel drawn in colour (the report's palette), not the black, white and grey of frames, ticks and text.
SATURATION = 0.2
#: Fewer coloured pixels than this in a plot and it shows no data (an empty plot, or "no data" alone).
MIN_DATA_PIXELS = 200


def data_pixels(png: Path) -> int:
    """Pixels of ``png`` drawn in colour: the data of a plot (bars, lines, markers, intervals)."""
    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(png).convert("RGB"), dtype=float) / 255
    return int(((rgb.max(axis=2) - rgb.min(axis=2)) > SATURATION).sum())


def screenshot(index: Path, png: Path) -> dict:
    """Open the page in Debian's Chromium through Playwright; return what the page shows: each image's natural
    size and, from the browser's own rendering of it (an element screenshot), its coloured pixels."""
    playwright = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.skip("Debian chromium not installed (scripts/system-deps.sh installs it)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(index.resolve().as_uri())
        page.wait_for_load_state("load")
        images = page.eval_on_selector_all(
            "img", "els => els.map(e => ({src: e.getAttribute('src'), w: e.naturalWidth, h: e.naturalHeight}))"
        )
        for i, (image, element) in enumerate(zip(images, page.query_selector_all("img"), strict=True)):
            shot = png.with_name(f"{png.stem}-img{i}.png")
            element.screenshot(path=str(shot))
            image["data_pixels"] = data_pixels(shot)
        headings = page.eval_on_selector_all("h2", "els => els.map(e => e.textContent)")
        tables = page.eval_on_selector_all(
            "table", "els => els.map(t => [...t.querySelectorAll('th')].map(th => th.textContent))"
        )
        page.screenshot(path=str(png), full_page=True)
        browser.close()
    return {"images": images, "headings": headings, "tables": tables}


def page_problems(shown: dict) -> list[str]:
    """What a reader would see wrong with the page's plots: an image the browser could not show, a plot with no
    data in it."""
    problems = []
    for image in shown["images"]:
        if image["w"] < 100 or image["h"] < 100:
            problems.append(f"broken image: {image['src']} ({image['w']}x{image['h']})")
        elif image["data_pixels"] < MIN_DATA_PIXELS:
            problems.append(f"empty plot: {image['src']} ({image['data_pixels']} coloured pixels)")
    return problems


def fill_store(db: Path) -> None:
    """A store written through the Store API the flywheel uses."""
    store = Store(db)
    store.ensure_run("main", {"steps": 2})
    for i, (method, valid) in enumerate(
        [
            ("prompt", False),
            ("prompt", True),
            ("feedback", True),
            ("feedback", True),
            ("agentic", True),
            ("agentic", False),
        ]
    ):
        if valid:
            # a task folder recording its level, as a family's ladder writes it (the accepted-level plot reads it)
            (db.parent / f"task{i}").mkdir(exist_ok=True)
            (db.parent / f"task{i}" / "task.toml").write_text(f"[metadata]\nlevel = {1 + i % 2 + i // 4}\n")
            store.upsert_task(
                hash=f"h{i}",
                name=f"task{i}",
                path=str(db.parent / f"task{i}"),
                method=method,
                valid=True,
                calibrated=True,
                n_files=6 + i,
                pass_rate=0.5,
            )
        store.record_attempt(
            run="main",
            step=i % 2,
            method=method,
            proposer="scripted",
            task_hash=f"h{i}" if valid else None,
            valid=valid,
            calibrated=valid,
            reward=1.0 if valid else 0.0,
            attempt_key=str(i),
            actions=[
                {"t": 0.1 * j, "kind": k, "detail": ""}
                for j, k in enumerate(["Read", "Write", "Build", "Test", "Write", "Test"])
            ],
        )
        if valid:
            gid = store.group_id("main", i % 2, f"h{i}", "solver", 2)
            for j in range(2):
                store.add_rollout(
                    run="main",
                    step=i % 2,
                    group_id=gid,
                    task_hash=f"h{i}",
                    index=j,
                    policy_version=0,
                    reward=float(j),
                    n_turns=3 + j,
                )
    for step in range(2):
        store.start_step("main", step, step)
        store.update_step(
            "main",
            step,
            status="done",
            policy_version_out=step + 1,
            useful_group_rate=0.5 + 0.1 * step,
            collect_sec=3.0,
            benchmark_score=0.4,
            proposer_valid_rate=0.6,
        )
    store.close()


def test_runs_repeated_over_seeds_are_drawn_as_a_band():
    assert seed_groups(["autoenv", "autoenv-s1", "autoenv-s2", "static", "main-s3", "main"]) == {
        "autoenv": ["autoenv", "autoenv-s1", "autoenv-s2"],
        "static": ["static"],
        "main": ["main-s3", "main"],
    }
    assert seed_groups(["lonely-s4"]) == {"lonely-s4": ["lonely-s4"]}
    steps = [
        {"run": run, "step": step, "benchmark_score": score + 0.1 * step, "useful_group_rate": 0.5,
         "collect_sec": 1.0, "proposer_valid_rate": None}
        for run, score in (("autoenv", 0.2), ("autoenv-s1", 0.4), ("autoenv-s2", 0.3), ("static", 0.1))
        for step in range(3)
    ]  # fmt: skip
    fig = training_figure(steps)
    bench = next(ax for ax in fig.axes if ax.get_title() == "solver benchmark score")
    labels = bench.get_legend_handles_labels()[1]
    assert sorted(labels) == ["autoenv (3 seeds, 95% t)", "static"]
    (seeds,) = bench.containers  # the seeds' mean with its 95% interval; the lone static run has no repeats
    assert list(seeds.lines[0].get_ydata()) == pytest.approx([0.3, 0.4, 0.5])
    (bars,) = seeds.lines[2]
    lows = [seg[:, 1].min() for seg in bars.get_segments()]
    highs = [seg[:, 1].max() for seg in bars.get_segments()]
    assert all(lo < m - 0.1 and hi > m + 0.1 for lo, hi, m in zip(lows, highs, (0.3, 0.4, 0.5)))


def _interval_at(ax, step: int) -> tuple[float, float]:
    """The (low, high) of the error bar drawn at ``step`` on ``ax``."""
    for container in ax.containers:
        for segments in container.lines[2]:
            for seg in segments.get_segments():
                if seg[0, 0] == step:
                    return seg[:, 1].min(), seg[:, 1].max()
    raise AssertionError(f"no interval at step {step}")


def test_training_plots_have_whole_steps_rates_on_0_1_and_wilson_intervals():
    from autoenv.validate.stats import wilson_interval

    steps = [
        {"run": "main", "step": i, "useful_group_rate": 1.0, "n_groups": 4, "n_useful_groups": 4,
         "collect_sec": 3.0 + i, "benchmark_score": (0.5, 0.25, 0.75)[i], "proposer_valid_rate": 1.0}
        for i in range(3)
    ]  # fmt: skip
    attempts = [{"run": "main", "step": i, "valid": True} for i in range(3) for _ in range(2)]
    configs = {"main": {"benchmark_dir": str(EXAMPLE_TASKS), "benchmark_tasks": 4, "benchmark_rollouts": 2}}
    trials = step_trials(steps, attempts, configs)
    assert trials[("main", 0, "benchmark_score")] == (4.0, 8) and trials[("main", 2, "useful_group_rate")] == (4, 4)
    assert trials[("main", 1, "proposer_valid_rate")] == (2, 2)
    fig = training_figure(steps, trials)
    panels = {ax.get_title(): ax for ax in fig.axes}
    for title, ax in panels.items():
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks == [0, 1, 2], (title, ticks)  # whole steps, never 0.25
        if title != "seconds to collect groups":
            low, high = ax.get_ylim()
            assert -0.05 <= low <= 0 and 1 <= high <= 1.05, (title, ax.get_ylim())  # a flat 1.0 is drawn flat
    # the step-0 benchmark point (4/8) and its dip (2/8) have the Wilson interval of their 8 rollouts
    bench = panels["solver benchmark score"]
    assert _interval_at(bench, 0) == pytest.approx(wilson_interval(4, 8))
    assert _interval_at(bench, 1) == pytest.approx(wilson_interval(2, 8))
    assert _interval_at(panels["useful-group rate"], 2) == pytest.approx(wilson_interval(4, 4))
    assert not panels["seconds to collect groups"].containers, "one run's seconds have no repeats: no interval"


def test_runs_are_compared_side_by_side_over_their_seeds():
    steps = [
        {"run": run, "step": step, "benchmark_score": final if step == 1 else 0.0, "useful_group_rate": 0.5}
        for run, final in (("autoenv", 0.5), ("autoenv-s1", 0.75), ("static", 0.25))
        for step in range(2)
    ]
    attempts = [{"run": "autoenv", "valid": True}, {"run": "autoenv-s1", "valid": False}]
    rows = {r["run"]: r for r in compare_runs(steps, attempts)}
    assert rows["autoenv"]["seeds"] == 2 and rows["autoenv"]["final benchmark"].startswith("0.62 [")
    assert rows["autoenv"]["valid proposals"].startswith("1/2 [")
    assert rows["static"] == {
        "run": "static", "seeds": 1, "steps": 2, "final benchmark": "0.25", "useful-group rate": "0.50"
    }  # fmt: skip


def test_valid_rates_have_wilson_intervals():
    rows = valid_rates([{"method": "prompt", "valid": v} for v in (True, False, False, False)], "method")
    assert rows[0]["rate"] == 0.25 and 0 < rows[0]["low"] < 0.25 < rows[0]["high"] < 1


def test_report_renders_in_chromium(tmp_path):
    db = tmp_path / "store.db"
    fill_store(db)
    index = build_report(db, tmp_path / "report")
    shown = screenshot(index, tmp_path / "report.png")
    names = {img["src"] for img in shown["images"]}
    assert {
        "valid_rate_by_method.png",
        "accepted_by_method.png",
        "accepted_levels.png",
        "training_curves.png",
        "proposer_course.png",
    } <= names
    assert page_problems(shown) == [], shown["images"]
    assert "Accepted environments" in shown["headings"]
    assert STEP_HEADERS in shown["tables"] and all(len(set(t)) == len(t) for t in shown["tables"]), shown["tables"]
    assert (tmp_path / "report.png").stat().st_size > 10_000
    # the same check fails on a broken image and on a plot with nothing in it
    (tmp_path / "report" / "accepted_by_method.png").write_bytes(b"not a png")
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.set_title("solver benchmark score")
        ax.set_xlabel("training step")
        fig.savefig(tmp_path / "report" / "training_curves.png")
        plt.close(fig)
    problems = page_problems(screenshot(index, tmp_path / "broken.png"))
    assert [p.split(":")[0] + ":" + p.split(":")[1].split()[0] for p in problems] == [
        "broken image:accepted_by_method.png",
        "empty plot:training_curves.png",
    ], problems


def test_the_accepted_tasks_levels_are_read_from_their_task_toml_by_step(tmp_path):
    from autoenv.report.levels import accepted_levels

    db = tmp_path / "store.db"
    fill_store(db)
    store = Store(db)
    rows = accepted_levels(store.attempts(), {t["hash"]: t["path"] for t in store.tasks()})
    store.close()
    # step 0 accepted task2 (level 1) and task4 (level 2); step 1 task1 (level 2) and task3 (level 2)
    assert [(r["step"], sorted(r["levels"]), r["mean"]) for r in rows] == [(0, [1, 2], 1.5), (1, [2, 2], 2.0)]
